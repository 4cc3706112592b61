"""Which statements make profile entries: lasting facts do, plans and feelings of the moment do not (they stay
memories that search finds)."""

from types import SimpleNamespace

import pytest

from profiles.models import Section
from profiles.sections import section_of


def memory(content, category="fact", attribute=""):
    return SimpleNamespace(content=content, category=category, tags=[], subject="user",
                           metadata={"attribute": attribute} if attribute else {})


@pytest.mark.parametrize(("content", "category", "attribute", "section"), [
    ("The user dreams of opening a bakery.", "goal", "", Section.GOALS),
    ("The user is putting money aside, saving for a flat in Ghent.", "fact", "", Section.GOALS),
    ("The user's target for next spring is to finish a triathlon.", "goal", "event", Section.GOALS),
    ("The user cycles to the office every weekday morning.", "fact", "hobby", Section.ROUTINES),
    ("The user plays squash on Tuesday evenings.", "fact", "hobby", Section.ROUTINES),
    ("The user hopes to retire early, that is the plan.", "goal", "", Section.GOALS),
    ("The user's line manager is Tomasz.", "relationship", "manager", Section.WORK),
    ("The user's dad lives in Cork.", "relationship", "home", Section.FAMILY),
    ("The user is teetotal.", "restriction", "diet", Section.HEALTH),
    ("The user is originally from Accra.", "fact", "", Section.IDENTITY),
    ("The user is a Quaker.", "fact", "", Section.IDENTITY),
])
def test_lasting_facts_find_their_section(content, category, attribute, section):
    assert section_of(memory(content, category, attribute)) == section


@pytest.mark.parametrize(("content", "category", "attribute"), [
    ("The user can't wait for the barbecue on Saturday.", "goal", ""),
    ("The user is gonna grab some ramen tonight.", "goal", "favourite"),
    ("The user will bring the snacks.", "goal", ""),
    ("Right now the user is craving chocolate.", "fact", ""),
    ("Thursday works for the user.", "fact", ""),
    ("Sunsets give the user such peace.", "fact", ""),
    ("The user's cats make them so happy.", "relationship", ""),
    ("The user is really looking forward to the concert.", "preference", "hobby"),
])
def test_plans_and_feelings_of_the_moment_make_no_entry(content, category, attribute):
    assert section_of(memory(content, category, attribute)) is None


def test_what_ended_makes_no_entry():
    ended = memory("Until last year the user lived in Porto.", "history", "home")
    ended.metadata["frames"] = [{"attribute": "home", "value": "porto", "ended": True}]
    assert section_of(ended) is None
    refused = memory("The user doesn't eat pork.", "restriction", "diet")
    refused.metadata["frames"] = [{"attribute": "diet", "value": "pork", "ended": True}]  # a negation, still so
    assert section_of(refused) == Section.HEALTH


def test_a_relationship_that_reads_as_the_speakers_own_attribute_goes_by_it():
    own = memory("Since March the user has been with Walgreens instead.", "relationship", "employer")
    own.metadata["frames"] = [{"attribute": "employer", "value": "walgreens", "holder": ""}]
    assert section_of(own) == Section.WORK
    theirs = memory("The user's dad lives in Cork.", "relationship", "home")
    theirs.metadata["frames"] = [{"attribute": "home", "value": "cork", "holder": "dad"}]
    assert section_of(theirs) == Section.FAMILY
