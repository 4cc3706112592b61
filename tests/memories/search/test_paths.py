"""The owner figures a search's path rests on (memories.search.paths)."""

from django.core.cache import cache
from django.db import connection

from memories import batch
from memories.models import MemoryStamp
from memories.search.paths import owner_figures


def test_the_owner_count_is_the_one_the_stamp_row_keeps(user):
    batch.memory_batch_create(owner=user, items=[{"content": f"note {i}"} for i in range(3)], actor=user)
    assert MemoryStamp.objects.get(owner_id=user.pk).rows == 3
    # the trigger's count is what the figures take, not a count of the rows: told apart here by changing it
    MemoryStamp.objects.filter(owner_id=user.pk).update(rows=5000)
    cache.clear()
    with connection.cursor() as cursor:
        assert owner_figures(cursor, user.pk).total == 5000


def test_an_owner_without_a_stamp_row_is_counted(user):
    batch.memory_batch_create(owner=user, items=[{"content": f"note {i}"} for i in range(3)], actor=user)
    MemoryStamp.objects.filter(owner_id=user.pk).delete()
    cache.clear()
    with connection.cursor() as cursor:
        assert owner_figures(cursor, user.pk).total == 3
        assert owner_figures(cursor, user.pk + 1000).total == 0  # no memories at all
