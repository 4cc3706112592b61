"""panel.activity: the activity charts' figures, counted right and scoped to their owner (None: everyone)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from memories import services
from memories.models import Memory, MemoryEvent
from panel import activity
from tests.factories import MemoryFactory, MessageFactory

pytestmark = pytest.mark.django_db


def this_week(data):
    return len(data["weeks"]) - 1


def test_memories_added_per_week_by_category_and_source(user, other_user):
    MemoryFactory.create_batch(3, owner=user, category="preference", source="explicit")
    MemoryFactory(owner=user, category="", source="extracted")
    old = MemoryFactory(owner=user, category="preference")
    Memory.objects.filter(pk=old.pk).update(created_at=timezone.now() - timedelta(weeks=3))
    MemoryFactory.create_batch(5, owner=other_user, category="travel")

    mine = activity.added_per_week(owner=user, by="category")
    now = this_week(mine)
    assert mine["series"]["preference"][now] == 3 and mine["series"]["preference"][now - 3] == 1
    assert mine["series"]["none"][now] == 1 and "travel" not in mine["series"]
    by_source = activity.added_per_week(owner=user, by="source")["series"]
    assert by_source["explicit"][now] == 3 and by_source["extracted"][now] == 1
    everyone = activity.added_per_week(owner=None, by="category")
    assert everyone["series"]["travel"][now] == 5 and everyone["series"]["preference"][now] == 3


def test_many_categories_beyond_the_busiest_are_other(user):
    for i in range(activity.TOP_SERIES + 2):
        MemoryFactory.create_batch(10 - i, owner=user, category=f"c{i}")
    series = activity.added_per_week(owner=user, by="category")["series"]
    assert len(series) == activity.TOP_SERIES + 1
    assert sum(series[activity.OTHER]) == (10 - activity.TOP_SERIES) + (10 - activity.TOP_SERIES - 1)


def test_superseded_and_forgotten_per_week(user, other_user):
    first = services.memory_create(owner=user, content="Ana lives in Porto").memory
    services.memory_create(owner=user, content="Ana lives in Faro", supersedes=first.pk)
    services.memory_soft_delete(memory=services.memory_create(owner=user, content="Ana owns a red bike").memory)
    services.memory_soft_delete(memory=services.memory_create(owner=other_user, content="Bo has a cat").memory)
    mine = activity.changes_per_week(owner=user)
    now = this_week(mine)
    assert mine["series"]["superseded"][now] == 1 and mine["series"]["forgotten"][now] == 1
    assert activity.changes_per_week(owner=None)["series"]["forgotten"][now] == 2


def test_extraction_lag_is_the_time_from_a_message_to_its_memories(user, other_user):
    message = MessageFactory(conversation__owner=user)
    received = message.created_at
    for minutes in (1, 3, 10):
        memory = MemoryFactory(owner=user, message=message, source="extracted")
        Memory.objects.filter(pk=memory.pk).update(created_at=received + timedelta(minutes=minutes))
    theirs = MessageFactory(conversation__owner=other_user)
    memory = MemoryFactory(owner=other_user, message=theirs)
    Memory.objects.filter(pk=memory.pk).update(created_at=theirs.created_at + timedelta(hours=5))
    lag = activity.extraction_lag_per_week(owner=user)
    assert lag["median"][-1] == pytest.approx(180, abs=1) and lag["max"][-1] == pytest.approx(600, abs=1)
    assert activity.extraction_lag_per_week(owner=None)["max"][-1] == pytest.approx(5 * 3600, abs=1)
    assert activity.pending_extraction(owner=user) == 1  # the factory's message was never extracted


def test_searches_per_day_are_counted_when_recorded_also_when_nothing_was_found(user, other_user):
    memory = MemoryFactory(owner=user)
    for ids in ([memory.pk], [], [memory.pk]):
        services.memories_touch(memory_ids=ids, owner_id=user.pk, action=MemoryEvent.Action.SEARCH, query="x")
    services.memories_touch(memory_ids=[memory.pk], owner_id=user.pk, action=MemoryEvent.Action.READ)
    services.memories_touch(memory_ids=[], owner_id=other_user.pk, action=MemoryEvent.Action.SEARCH, query="y")
    days = activity.searches_per_day(owner=user)
    assert len(days) == activity.DAYS and days[-1] == (timezone.now().date(), 3)
    assert sum(n for _, n in days[:-1]) == 0
    assert activity.searches_per_day(owner=None)[-1][1] == 4
