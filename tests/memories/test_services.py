"""Memory writes: upsert, versions and history, supersession, duplicates, revert, forget."""

from unittest import mock

import pytest
from django.core.exceptions import ValidationError

from memories import batch, services
from memories.models import Memory
from tests.factories import MemoryFactory, ProjectFactory


def create(owner, content, **fields):
    return services.memory_create(owner=owner, content=content, actor=owner, **fields)


def actions(memory):
    return [h.history_action for h in memory.history.order_by("history_date", "history_id")]


def test_create_embeds_and_records_history(user):
    write = create(user, "Prefers window seats on flights")
    memory = write.memory
    assert write.outcome == "created"
    assert len(memory.embedding) == 384 and memory.embedding_model == "all-MiniLM-L6-v2"
    record = memory.history.get()
    assert (record.history_action, record.history_user, record.history_change_reason) == ("CREATE", user, "created")
    assert record.content == "Prefers window seats on flights"


def test_upsert_by_namespace_and_key_is_last_write_wins(user):
    first = create(user, "Lives in Paris", key="home", namespace=["memories", "profile"]).memory
    second = create(user, "Lives in Berlin", key="home", namespace=["memories", "profile"])
    assert second.outcome == "updated"
    assert second.memory.pk == first.pk
    assert second.memory.version == 2
    assert Memory.objects.filter(owner=user).count() == 1
    latest = first.history.order_by("-history_date").first()
    assert latest.history_action == "UPDATE" and "upsert of key 'home'" in latest.history_change_reason


def test_same_key_in_another_namespace_is_a_new_memory(user):
    create(user, "Lives in Paris", key="home", namespace=["memories", "a"])
    create(user, "Lives in Berlin", key="home", namespace=["memories", "b"])
    assert Memory.objects.filter(owner=user).count() == 2


def test_supersession_links_both_ways(user):
    old = create(user, "Liam struggles with calculus").memory
    new = create(user, "Liam mastered integration", supersedes=old.pk).memory
    old.refresh_from_db()
    assert new.supersedes_id == old.pk and old.superseded_by_id == new.pk
    assert new.source == "updated"
    assert actions(old) == ["CREATE", "SUPERSEDE"]
    assert list(Memory.objects.owned_by(user).active()) == [new]


def test_cannot_supersede_another_users_memory(user, other_user):
    theirs = MemoryFactory(owner=other_user)
    with pytest.raises(ValidationError) as error:
        create(user, "mine", supersedes=theirs.pk)
    assert "supersedes" in error.value.message_dict
    assert not Memory.objects.filter(owner=user).exists()


def test_cannot_supersede_twice_or_make_a_cycle(user):
    a = create(user, "version a", key="a").memory
    b = create(user, "version b", supersedes=a.pk).memory
    with pytest.raises(ValidationError, match="already superseded"):
        create(user, "version c", supersedes=a.pk)
    # upserting `a`'s key again while pointing it at b would loop a -> b -> a
    with pytest.raises(ValidationError, match="cycle|already superseded"):
        create(user, "version a2", key="a", supersedes=b.pk)


def test_near_identical_memory_is_not_stored_twice(user):
    first = create(user, "I am allergic to peanuts.").memory
    again = create(user, "I am allergic to peanuts")
    assert again.outcome == "duplicate" and again.memory.pk == first.pk
    assert Memory.objects.filter(owner=user).count() == 1
    forced = create(user, "I am allergic to peanuts", allow_duplicate=True)
    assert forced.outcome == "created"


def test_duplicates_are_per_owner_and_scope(user, other_user):
    project = ProjectFactory(owner=user)
    create(user, "I am allergic to peanuts")
    assert create(user, "I am allergic to peanuts", project=project).outcome == "created"
    assert create(other_user, "I am allergic to peanuts").outcome == "created"


def test_near_identical_text_with_other_figures_is_not_a_duplicate(user):
    first = create(user, "My locker code is 4411")
    other = create(user, "My locker code is 9072")
    assert other.outcome == "created" and other.memory.pk != first.memory.pk
    assert create(user, "my locker code is 4411.").outcome == "duplicate"


def test_different_memory_is_not_a_duplicate(user):
    create(user, "I am allergic to peanuts")
    assert create(user, "My daughter Emma starts school in May").outcome == "created"


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"content": ""}, "content"),
        ({"content": "   "}, "content"),
        ({"content": "word " * 2100}, "content"),
        ({"content": "ok", "namespace": ["memories", ""]}, "namespace"),
        ({"content": "ok", "importance": 1.5}, "importance"),
    ],
)
def test_bad_input_names_the_field_and_stores_nothing(user, fields, field):
    with pytest.raises(ValidationError) as error:
        services.memory_create(owner=user, **fields)
    assert field in error.value.message_dict
    assert not Memory.objects.exists()


def test_soft_delete_and_restore_are_versions(user):
    memory = create(user, "Has a cat named Miso").memory
    services.memory_soft_delete(memory=memory, actor=user)
    memory.refresh_from_db()
    assert not memory.is_active and memory.version == 2
    services.memory_restore(memory=memory, actor=user)
    memory.refresh_from_db()
    assert memory.is_active and memory.version == 3
    assert actions(memory) == ["CREATE", "DELETE", "RESTORE"]


def test_revert_makes_a_new_version_equal_to_the_old_one(user):
    memory = create(user, "Favourite colour is blue", tags=["colour"]).memory
    original_embedding = list(memory.embedding)
    services.memory_update(memory=memory, data={"content": "Favourite colour is green", "tags": []}, actor=user)
    reverted = services.memory_revert(memory=memory, version=1, actor=user)
    assert reverted.version == 3
    assert reverted.content == "Favourite colour is blue" and reverted.tags == ["colour"]
    assert list(reverted.embedding) == pytest.approx(original_embedding, abs=1e-6)
    assert actions(reverted) == ["CREATE", "UPDATE", "REVERT"]
    assert reverted.history.order_by("-history_date").first().history_change_reason == "reverted to version 1"


def test_revert_to_unknown_version_is_a_validation_error(user):
    memory = create(user, "Something").memory
    with pytest.raises(ValidationError) as error:
        services.memory_revert(memory=memory, version=9)
    assert "version" in error.value.message_dict


def test_forget_erases_memory_and_history_and_unlinks_the_chain(user):
    old = create(user, "Works at Acme").memory
    new = create(user, "Works at Globex", supersedes=old.pk).memory
    services.memory_forget(memory=old, actor=user)
    assert not Memory.objects.filter(pk=old.pk).exists()
    assert not Memory.history.filter(id=old.pk).exists()
    new.refresh_from_db()
    assert new.supersedes_id is None
    assert actions(new)[-1] == "UPDATE"


def test_touch_sets_accessed_at_and_logs_events_without_new_versions(user, settings):
    memory = create(user, "Drinks oat milk").memory
    services.memories_touch(memory_ids=[memory.pk], owner_id=user.pk, action="READ")
    memory.refresh_from_db()
    assert memory.accessed_at is not None
    assert memory.events.get().action == "READ"
    assert memory.history.count() == 1
    settings.MEMORY_LOG_READS = False
    services.memories_touch(memory_ids=[memory.pk], owner_id=user.pk, action="READ")
    assert memory.events.count() == 1


def test_a_memory_stored_unindexed_is_never_embedded(user):
    memory = create(user, "Kept for filters and keywords only", indexed=False).memory
    services.memory_update(memory=memory, data={"content": "Still only for keywords"})
    batch.memories_embed_pending()

    memory.refresh_from_db()
    assert memory.embedding is None and memory.embedding_model == ""
    assert [h.history_action for h in memory.history.all()] == ["UPDATE", "CREATE"]


def test_a_ttl_runs_from_the_last_write_or_read(user):
    from datetime import timedelta

    from django.utils import timezone

    memory = create(user, "Short-lived note", ttl_minutes=10).memory
    assert Memory.objects.active().filter(pk=memory.pk).exists()
    old = timezone.now() - timedelta(minutes=11)
    Memory.objects.filter(pk=memory.pk).update(updated_at=old, accessed_at=None)
    assert not Memory.objects.active().filter(pk=memory.pk).exists()

    services.memories_touch(memory_ids=[memory.pk], owner_id=user.pk, action="READ")  # a read refreshes it
    assert Memory.objects.active().filter(pk=memory.pk).exists()


# --- valid time ---------------------------------------------------------------------------------------------------

def at(text):
    from datetime import datetime
    return datetime.fromisoformat(text).replace(tzinfo=__import__("datetime").UTC)


def test_valid_from_is_the_event_time_else_the_message_time_else_now(user):
    from tests.factories import MessageFactory
    happened = create(user, "Ran a marathon", happened_at=at("2024-04-21T09:00")).memory
    assert happened.valid_from == at("2024-04-21T09:00") and happened.valid_to is None
    message = MessageFactory(conversation__owner=user, sent_at=at("2024-06-20T18:30"))
    said = create(user, "Keeps bees", message=message, conversation=message.conversation).memory
    assert said.valid_from == at("2024-06-20T18:30")
    with mock.patch("memories.supersession.timezone.now", return_value=at("2025-01-02T03:04")):  # now, no clock
        plain = create(user, "Likes jazz").memory
    assert plain.valid_from == at("2025-01-02T03:04")


def test_superseding_ends_the_old_memorys_valid_time(user):
    old = create(user, "Lives in Paris", valid_from=at("2022-01-01T00:00")).memory
    new = create(user, "Lives in Grenoble", valid_from=at("2024-05-01T00:00"), supersedes=old.pk).memory
    old.refresh_from_db()
    assert old.valid_to == new.valid_from == at("2024-05-01T00:00")
    assert new.valid_to is None


def test_an_older_statement_enters_the_chain_as_the_past(user):
    first = create(user, "Lives in Paris", valid_from=at("2020-01-01T00:00")).memory
    current = create(user, "Lives in Grenoble", valid_from=at("2024-05-01T00:00"), supersedes=first.pk).memory
    middle = create(user, "Lives in Lyon", valid_from=at("2023-03-01T00:00"), past_of=current).memory
    for memory in (first, current, middle):
        memory.refresh_from_db()
    assert [m.content for m in services_chain(current)] == ["Lives in Paris", "Lives in Lyon", "Lives in Grenoble"]
    assert middle.superseded_by_id == current.pk and middle.valid_to == at("2024-05-01T00:00")
    assert first.superseded_by_id == middle.pk and first.valid_to == at("2023-03-01T00:00")
    assert current.valid_to is None
    assert list(Memory.objects.owned_by(user).active()) == [current]
    assert actions(middle) == ["CREATE", "SUPERSEDE"]


def test_an_oldest_statement_goes_to_the_start_of_the_chain(user):
    current = create(user, "Works at Doctolib", valid_from=at("2024-05-01T00:00")).memory
    create(user, "Works at Acme", valid_from=at("2021-09-01T00:00"), past_of=current)
    oldest = create(user, "Works at Initech", valid_from=at("2019-02-01T00:00"), past_of=current).memory
    assert [m.content for m in services_chain(current)] == ["Works at Initech", "Works at Acme", "Works at Doctolib"]
    oldest.refresh_from_db()
    assert oldest.valid_to == at("2021-09-01T00:00")


def services_chain(memory):
    from memories.selectors import memory_chain
    return memory_chain(memory=Memory.objects.get(pk=memory.pk))


def test_reverting_a_supersession_makes_the_old_memory_current_again(user):
    old = create(user, "Has a Toyota", valid_from=at("2022-01-01T00:00")).memory
    new = create(user, "Has a Volvo", valid_from=at("2024-01-01T00:00"), supersedes=old.pk).memory
    services.memory_revert(memory=old, version=1, actor=user)
    old.refresh_from_db()
    new.refresh_from_db()
    assert old.superseded_by_id is None and old.valid_to is None
    assert new.supersedes_id is None
    assert set(Memory.objects.owned_by(user).active()) == {old, new}
    assert actions(old) == ["CREATE", "SUPERSEDE", "REVERT"]
    assert "supersession of" in new.history.order_by("-history_date").first().history_change_reason


def test_a_keyed_write_that_meets_a_near_duplicate_gives_it_the_key(user):
    plain = create(user, "Is allergic to peanuts").memory
    keyed = create(user, "Is allergic to peanuts.", key="allergy")
    assert keyed.outcome == "duplicate" and keyed.memory.pk == plain.pk
    plain.refresh_from_db()
    assert plain.key == "allergy"
    again = create(user, "Is allergic to peanuts", key="other-key")
    assert again.outcome == "duplicate"
    assert Memory.objects.get(pk=plain.pk).key == "allergy"  # a chosen key stays
