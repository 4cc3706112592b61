"""The profile built from memories: sections, evidence, budget, and the user's edits winning over rebuilds."""

from core import rls
from integrations.embeddings import count_tokens
from memories import services as memory_services
from profiles import selectors, services
from profiles.models import ProfileEntry, Section


def _entries(owner, section=None):
    view = selectors.profile_view(owner=owner)
    return [e for s, es in view.sections for e in es if section is None or s == section]


def test_a_conversation_becomes_profile_entries_by_section(user, said):
    said(user, "I live in Lisbon.", "I work at Siemens.", "I'm allergic to peanuts.", "I love hiking.",
         "My sister Ana is a doctor.", "Thanks, that's all!")
    by_section = {s: [e.text for e in es] for s, es in selectors.profile_view(owner=user).sections}
    assert any("Lisbon" in t for t in by_section[Section.HOME])
    assert any("Siemens" in t for t in by_section[Section.WORK])
    assert any("peanuts" in t for t in by_section[Section.HEALTH])
    assert any("hiking" in t for t in by_section[Section.PREFERENCES])
    assert any("Ana" in t for t in by_section[Section.FAMILY])
    home = next(e for e in _entries(user, Section.HOME) if "Lisbon" in e.text)
    assert home.evidence_count == 1 and len(home.memory_ids) == 1 and home.last_confirmed is not None


def test_a_new_value_replaces_the_entry_and_the_text_stays_within_budget(user, said):
    said(user, "I live in Lisbon.")
    said(user, "We moved to Berlin last month.")
    home = [e.text for e in _entries(user, Section.HOME)]
    assert len(home) == 1 and "Berlin" in home[0]
    view = selectors.profile_view(owner=user)
    assert "Berlin" in view.text and view.tokens == count_tokens(view.text) <= view.budget


def test_budget_keeps_the_most_important_and_pinned_first(user):
    for i in range(40):
        memory_services.memory_create(owner=user, content=f"The user collects stamp series number {i}.",
                                      category="preference", importance=0.3)
    memory_services.memory_create(owner=user, content="The user is allergic to penicillin.",
                                  category="restriction", importance=0.9)
    view = selectors.profile_view(owner=user, budget=60)
    assert view.tokens <= 60 and "penicillin" in view.text
    low = next(e for e in _entries(user) if "number 7." in e.text)
    services.entry_update(entry=low, data={"pinned": True})
    assert "number 7." in selectors.profile_view(owner=user, budget=60).text


def test_user_edit_and_deletion_win_over_rebuilds_until_reset(user):
    memory = memory_services.memory_create(owner=user, content="The user works as a nurse.",
                                           category="fact", tags=["work"]).memory
    entry = _entries(user, Section.WORK)[0]
    services.entry_update(entry=entry, data={"text": "Works as a night-shift nurse."}, actor=user)
    memory_services.memory_update(memory=memory, data={"content": "The user works as a head nurse."})
    entry.refresh_from_db()
    assert _entries(user, Section.WORK)[0].text == "Works as a night-shift nurse."
    services.entry_update(entry=entry, data={"user_edited": False})
    assert _entries(user, Section.WORK)[0].text == "The user works as a head nurse."
    services.entry_update(entry=entry, data={"hidden": True})
    memory_services.memory_update(memory=memory, data={"importance": 0.9})
    assert _entries(user, Section.WORK) == [] and "nurse" not in selectors.profile_view(owner=user).text
    reasons = [h.history_change_reason for h in ProfileEntry.history.filter(id=entry.pk).order_by("history_date")]
    assert reasons[0] == "rebuilt from memories" and any(r.startswith("edited by the user") for r in reasons)
    assert ProfileEntry.history.filter(id=entry.pk, history_user=user).exists()


def test_an_entry_without_live_memories_is_kept_but_not_current(user):
    memory = memory_services.memory_create(owner=user, content="The user is vegetarian.",
                                           category="restriction").memory
    assert _entries(user, Section.HEALTH)
    memory_services.memory_soft_delete(memory=memory)
    assert _entries(user, Section.HEALTH) == []
    assert ProfileEntry.objects.get(owner=user, current=False).text == "The user is vegetarian."


def test_profiles_are_row_level_secured(user, other_user):
    memory_services.memory_create(owner=user, content="The user is vegetarian.", category="restriction")
    selectors.profile_view(owner=user)
    with rls.as_user(other_user.pk):
        assert ProfileEntry.objects.count() == 0 and ProfileEntry.history.count() == 0
    with rls.as_user(user.pk):
        assert ProfileEntry.objects.count() == 1


def test_a_project_profile_adds_the_projects_memories(user):
    from tests.factories import ProjectFactory

    project = ProjectFactory(owner=user)
    memory_services.memory_create(owner=user, content="The user is vegetarian.", category="restriction")
    memory_services.memory_create(owner=user, content="The user prefers tabs over spaces.", category="preference",
                                  project=project)
    assert "tabs" not in selectors.profile_view(owner=user).text
    text = selectors.profile_view(owner=user, project=project).text
    assert "tabs" in text and "vegetarian" in text


def test_an_entrys_evidence_is_about_its_own_subject_not_another_persons(user, said):
    # both say "employer"; the second is the brother's (its frame's holder), no evidence of where the user works
    said(user, "I work at Bosch now.", "My brother works at Siemens.")
    bosch = user.memories.get(content__contains="Bosch")
    brother = user.memories.get(content__contains="Siemens")
    entries = {e.key: e for e in _entries(user)}
    employer = entries["user|employer"]
    assert employer.text == bosch.content and employer.memory_ids == [bosch.pk] and employer.evidence_count == 1
    theirs = next(e for e in entries.values() if brother.pk in e.memory_ids)
    assert theirs.key == "user>brother|employer" and theirs.memory_ids == [brother.pk]
