"""A version's reason as people read it (panel.reasons): the reconciler's decision as a sentence with its values
spelled as said, the evidence as links to the messages, the stored text (unchanged) under a collapsed "details";
a memory's attribute frames likewise."""

import re
from datetime import UTC, datetime

import pytest

from conversations import processing
from conversations import services as conversation_services
from memories import services
from memories.models import HistoryAction, Memory
from panel import reasons
from tests.factories import ConversationFactory

UUID = reasons.UUID


@pytest.fixture
def panel(client, user):
    client.force_login(user)
    return client


def say(user, text, title, sent_at):
    conversation = ConversationFactory(owner=user, title=title)
    (message, _), = conversation_services.messages_append(
        conversation=conversation, messages=[{"role": "user", "content": text, "sent_at": sent_at}])
    processing.message_extract(message_id=message.pk)
    return message


def shown_text(html: str) -> str:
    """What a reader sees of the fragment with its <details> closed: no tags, no attributes (hrefs)."""
    html = re.sub(r"<details.*?</details>", "", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", html)).strip()


@pytest.mark.parametrize(("why", "sentence"), [
    ("home: acme -> lisbon; frame cosine 0.91", "home changed from Acme to Lisbon"),
    ("new information (brother employer: siemens)", "brother's employer is Siemens"),
    ("employer: acme ended; frame cosine 0.80", "employer Acme ended"),
    ("car: subaru ended, rivian is current; kept as the past; frame cosine 0.70",
     "car Subaru ended while Rivian is current; kept as the past"),
    ("already known (cosine 0.97)", "already known"),
    ("home: same value (lisbon); frame cosine 0.88", "home is still Lisbon"),
    ("pet: another value beside 2 stored (accumulates)", "another pet beside the 2 known"),
    ("home: acme -> lisbon; frame cosine 0.91; said of 2024-05-03, before the current memory's 2026-11-27",
     "home changed from Acme to Lisbon; said of 3 May 2024, before the current memory's 27 Nov 2026"),
    ("the user prefers tea now", "the user prefers tea now"),  # an LLM's own words, as they are
    ("home: lisbon still holds", "home Lisbon still holds"),  # a fact restated from a superseded memory
])
def test_the_planners_rule_reads_as_a_clause(why, sentence):
    texts = ["I moved from Acme to Lisbon", "My brother works at Siemens", "sold the Subaru, got a Rivian"]
    assert reasons.why_sentence(why, texts) == sentence


def test_a_supersession_reads_as_a_sentence_with_its_evidence_linked(panel, user):
    before = say(user, "I live in Acme.", "Settling in", datetime(2026, 11, 20, 9, 0, tzinfo=UTC))
    after = say(user, "I moved to Lisbon last month.", "Moving", datetime(2026, 11, 27, 14, 14, tzinfo=UTC))
    old = Memory.objects.get(owner=user, content__contains="Acme")
    new = Memory.objects.get(owner=user, content__contains="Lisbon")
    assert old.superseded_by_id == new.pk
    stored = old.history.get(history_action=HistoryAction.Action.SUPERSEDE).history_change_reason
    assert "frame cosine" in stored and str(after.pk) in stored  # what is stored stays as the API reads it

    page = panel.get(f"/memories/{old.pk}/").content.decode()
    banner = re.search(r'<div class="reason" id="supersession-reason">(.*?)</div>', page, re.S).group(1)
    text = shown_text(banner)
    assert text == ("Replaced: home changed from Acme to Lisbon (said in conversation “Moving” on 27 Nov 2026) "
                    "Evidence: “I live in Acme.” (“Settling in”, 20 Nov 2026); “I moved to Lisbon last month.” "
                    "(“Moving”, 27 Nov 2026)"), text
    assert not UUID.search(text) and "cosine" not in text and "->" not in text
    for message in (before, after):
        assert f'href="/conversations/{message.conversation_id}/#message-{message.pk}"' in banner
    # the stored text, for the curious, collapsed
    details = re.search(r'<details class="raw-reason"><summary>details</summary><code>(.*?)</code></details>',
                        banner, re.S).group(1)
    assert details == stored.replace(">", "&gt;")

    # the same in the versions, on both memories; the new one says what it replaced, linked
    versions = re.search(r'<section class="card" id="history">.*?</section>', page, re.S).group(0)
    assert "Replaced: home changed from Acme to Lisbon" in shown_text(versions)
    assert "Learnt: home is Acme (said in conversation “Settling in” on 20 Nov 2026)" in shown_text(versions)
    page = panel.get(f"/memories/{new.pk}/").content.decode()
    versions = re.search(r'<section class="card" id="history">.*?</section>', page, re.S).group(0)
    assert "Replaces an older memory: home changed from Acme to Lisbon" in shown_text(versions)
    assert f'replaces <a href="/memories/{old.pk}/">“The user lives in Acme.”</a>' in versions
    assert not UUID.search(shown_text(versions))

    # metadata frames as people say them, the raw fields collapsed
    frames = re.search(r'<ul class="frames">(.*?)</ul>\s*<details class="raw-reason">.*?<code>(.*?)</code>', page,
                       re.S)
    assert shown_text(frames.group(1)) == "home: Lisbon" and "score:" in frames.group(2)


def test_a_reason_written_by_a_person_is_shown_as_written_with_its_ids_as_links(panel, user):
    old = services.memory_create(owner=user, content="Has a Fairphone 4").memory
    new = services.memory_create(owner=user, content="Has a Pixel 8", supersedes=old.pk,
                                 reason="switched phones").memory
    page = panel.get(f"/memories/{old.pk}/").content.decode()
    banner = re.search(r'<div class="reason" id="supersession-reason">(.*?)</div>', page, re.S).group(1)
    # the successor is named in the banner's sentence already; the stored reason with its id, for the curious
    assert shown_text(banner) == "Why: switched phones" and "<details" in banner and str(new.pk) in banner
    page = panel.get(f"/memories/{new.pk}/").content.decode()
    created = re.findall(r'<div class="reason muted">(.*?)</div>', page, re.S)[-1]
    assert shown_text(created) == "switched phones; replaces “Has a Fairphone 4”"
