"""The context's head (profiles.context): packed within its budget from light rows, token counts from the cached
counter, and an edit shows at once with its true size."""

from integrations.embeddings import token_ids
from memories import services as memory_services
from profiles import services
from profiles.context import profile_block
from profiles.models import ProfileEntry


def test_an_edited_entry_shows_at_once_and_the_block_counts_its_true_tokens(user):
    for text in ("The user lives in Lisbon.", "The user works at Siemens.", "The user is allergic to peanuts."):
        memory_services.memory_create(owner=user, content=text)
    before = profile_block(owner=user, budget=2000)
    assert "Siemens" in before.text and before.tokens == len(token_ids(before.text))
    entry = ProfileEntry.objects.get(owner=user, text__contains="Siemens")
    services.entry_update(entry=entry, data={"text": "Works at Siemens in Munich, on rail signalling, since 2019"})
    after = profile_block(owner=user, budget=2000)
    assert "on rail signalling" in after.text and f"- {entry.text}\n" not in after.text + "\n"
    assert after.tokens == len(token_ids(after.text)) > before.tokens
    assert entry.memory_ids and set(entry.memory_ids) <= set(after.memory_ids)
