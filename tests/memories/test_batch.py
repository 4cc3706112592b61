"""Batch writes: all or nothing, the size limit, creates, upserts and duplicates in one call."""

import pytest
from django.core.exceptions import ValidationError

from memories import services
from memories.batch import memory_batch_create
from memories.models import Memory


def create(owner, content, **fields):
    return services.memory_create(owner=owner, content=content, actor=owner, **fields)


def test_batch_is_all_or_nothing(user):
    items = [{"content": f"fact number {i}"} for i in range(5)] + [{"content": ""}]
    with pytest.raises(ValidationError) as error:
        memory_batch_create(owner=user, items=items)
    assert error.value.message_dict["items"] == ["item 5: content: Content may not be blank."]
    assert not Memory.objects.exists()


def test_batch_rejects_more_than_the_limit(user, settings):
    with pytest.raises(ValidationError, match="At most 1000"):
        memory_batch_create(owner=user, items=[{"content": "x"}] * 1001)


def test_batch_creates_upserts_and_reports_duplicates(user):
    create(user, "Lives in Paris", key="home")
    create(user, "Enjoys long hikes in the Alps")
    writes = memory_batch_create(owner=user, items=[
        {"content": "Lives in Berlin", "key": "home"},
        {"content": "Enjoys long hikes in the Alps"},
        {"content": "Speaks Portuguese", "tags": ["language"]},
        {"content": "Speaks fluent Portuguese now", "key": "lang"},
        {"content": "Speaks Portuguese and Spanish", "key": "lang"},
    ])
    assert [w.outcome for w in writes] == ["updated", "duplicate", "created", "created", "updated"]
    assert writes[2].memory.history.get().history_action == "CREATE"
    assert Memory.objects.get(owner=user, key="lang").content == "Speaks Portuguese and Spanish"


def test_one_unreadable_row_does_not_stop_everyones_expiry(user, other_user, caplog):
    """A moment PostgreSQL stores but Python cannot read (year 10000 in UTC, imported before core.times checked
    it) is skipped and logged; everyone else's expired memories still expire."""
    from django.db import connection
    from django.utils import timezone

    from memories.batch import memories_deactivate_expired

    past = timezone.now() - timezone.timedelta(days=1)
    poisoned = create(other_user, "Poisoned row", expires_at=past).memory
    mine = [create(user, f"Expired fact {i}", expires_at=past).memory for i in range(3)]
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memories_memory SET created_at = '9999-12-31T23:59:59-12:00' WHERE id = %s",
                       [poisoned.pk])
    assert memories_deactivate_expired(batch_size=2) == 3
    assert not Memory.objects.filter(pk__in=[m.pk for m in mine], is_active=True).exists()
    assert Memory.objects.filter(pk=poisoned.pk, is_active=True).exists()
    assert f"expiry skipped memory {poisoned.pk}" in caplog.text


def test_one_unreadable_row_does_not_stop_the_pending_embedding_sweep(user, other_user, caplog):
    from django.db import connection

    from memories.batch import memories_embed_pending

    rows = [create(user, f"Waiting fact {i}").memory for i in range(3)] + [create(other_user, "Poisoned").memory]
    with connection.cursor() as cursor:
        cursor.execute("UPDATE memories_memory SET embedding = NULL WHERE id = ANY(%s)", [[r.pk for r in rows]])
        cursor.execute("UPDATE memories_memory SET created_at = '9999-12-31T23:59:59-12:00' WHERE id = %s",
                       [rows[-1].pk])
    assert memories_embed_pending(batch_size=2) == 3
    assert Memory.objects.filter(pk__in=[r.pk for r in rows[:3]], embedding__isnull=False).count() == 3
    assert f"embedding skipped memory {rows[-1].pk}" in caplog.text
