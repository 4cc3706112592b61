"""Consolidation: near-duplicates merged (superseded "merged into ..."), expired memories retired, the profile
refreshed, every change listed and revertible; hand-edited memories untouched; shares bounded."""

import itertools
from datetime import timedelta
from types import SimpleNamespace
from unittest import mock

import pytest
from django.utils import timezone

from memories import services as memory_services
from memories.models import Memory
from profiles import consolidation, selectors
from profiles.models import ConsolidationRun
from tests.factories import UserFactory
from tests.worker import wait_for

SAME = ["Caroline loves hiking in the mountains.", "Caroline loves hiking in the mountains!",
        "Caroline really loves hiking in the mountains."]


def _write(owner, content, **fields):
    return memory_services.memory_create(owner=owner, content=content, allow_duplicate=True,
                                         **{"subject": "Caroline", "category": "preference", **fields}).memory


@pytest.fixture
def run_now(eager, django_capture_on_commit_callbacks):
    def run(owner, trigger="request"):
        with django_capture_on_commit_callbacks(execute=True):
            started = consolidation.consolidation_start(owner=owner, trigger=trigger)
        return ConsolidationRun.objects.get(pk=started.pk)
    return run


def test_near_duplicates_are_merged_into_the_first_and_can_be_reverted(user, run_now):
    first, *others = [_write(user, text) for text in SAME]
    other_subject = _write(user, "Caroline loves hiking in the mountains.", subject="Melanie")
    unrelated = _write(user, "Caroline adopted a cat named Oscar.", category="relationship")
    run = run_now(user)
    assert run.status == "done" and run.finished_at is not None and run.memories_seen == 5
    first.refresh_from_db()
    assert first.superseded_by_id is None and first.metadata["evidence_count"] == 3
    assert sorted(first.metadata["merged"]) == sorted(str(m.pk) for m in others)
    for other in others:
        other.refresh_from_db()
        assert other.superseded_by_id == first.pk and other.is_active
        assert other.history.first().history_change_reason.startswith(f"merged into {first.pk}")
    for untouched in (other_subject, unrelated):
        untouched.refresh_from_db()
        assert untouched.superseded_by_id is None and untouched.version == 1
    merges = [c for c in run.changes if c["action"] == "merge"]
    assert {c["memory"] for c in merges} == {str(m.pk) for m in others} and run.changes[-1]["action"] == "profile"
    entry = next(e for _, es in selectors.profile_view(owner=user).sections for e in es if "hiking" in e.text
                 and e.key.startswith("caroline"))
    assert entry.evidence_count == 3
    reverted = consolidation.consolidation_revert(run=run, change=run.changes.index(merges[0]), actor=user)
    assert reverted.count == 1
    back = Memory.objects.get(pk=merges[0]["memory"])
    assert back.superseded_by_id is None and back.valid_to is None
    first.refresh_from_db()
    assert first.metadata["evidence_count"] == 2 and merges[0]["memory"] not in first.metadata["merged"]
    assert consolidation.consolidation_revert(run=run, actor=user).count == 1  # the rest; the first is done


def test_hand_edited_memories_are_never_touched_and_expired_ones_retire(user, run_now):
    first = _write(user, SAME[0])
    edited = _write(user, SAME[1])
    memory_services.memory_update(memory=edited, data={"importance": 0.9}, actor=user)
    expired = _write(user, "Caroline's parking permit is valid.", expires_at=timezone.now() + timedelta(seconds=1))
    Memory.objects.filter(pk=expired.pk).update(expires_at=timezone.now() - timedelta(minutes=1))
    run = run_now(user)
    edited.refresh_from_db()
    first.refresh_from_db()
    assert edited.superseded_by_id is None and first.superseded_by_id is None
    expired.refresh_from_db()
    assert expired.is_active is False and expired.history.first().history_change_reason.startswith("expired")
    retire = next(i for i, c in enumerate(run.changes) if c["action"] == "retire")
    consolidation.consolidation_revert(run=run, change=retire, actor=user)
    expired.refresh_from_db()
    assert expired.is_active


def test_a_run_works_in_bounded_shares(user, run_now, settings):
    settings.CONSOLIDATION_SHARE = 2
    [_write(user, text) for text in SAME]
    _write(user, "Caroline works at the shelter.", category="fact")
    tick = 1.5
    ticks = itertools.count(step=tick)  # a fake clock that moves one tick between any two readings
    with mock.patch.object(consolidation, "time", SimpleNamespace(monotonic=lambda: next(ticks))):
        run = run_now(user)
    assert run.status == "done" and run.memories_seen == 3  # 2, then the one left live after the merge
    assert len([c for c in run.changes if c["action"] == "merge"]) == 2
    # bookkeeping, not speed: each of the two shares reads the fake clock twice, and the run adds their spans
    assert run.seconds == 2 * tick


def test_the_sweep_starts_runs_for_owners_with_enough_new_memories(db, settings, eager):
    settings.CONSOLIDATION_AFTER = 3
    busy, quiet = UserFactory(), UserFactory()
    for text in SAME:
        _write(busy, text)
    _write(quiet, SAME[0])
    assert consolidation.consolidation_sweep() == 1
    assert ConsolidationRun.objects.get().owner == busy and ConsolidationRun.objects.get().trigger == "new memories"
    assert consolidation.consolidation_sweep() == 0  # one running run per owner


def test_api_starts_lists_and_reverts(api, other_api, user, run_now):
    [_write(user, text) for text in SAME[:2]]
    started = api.post("/api/consolidation/", format="json")
    assert started.status_code == 202 and started.json()["status"] == "running"
    assert api.post("/api/consolidation/", format="json").json()["id"] == started.json()["id"]
    rid = started.json()["id"]
    consolidation.consolidation_step(run_id=rid)
    assert api.get(f"/api/consolidation/{rid}/").json()["status"] == "done"
    assert other_api.get(f"/api/consolidation/{rid}/").status_code == 404
    response = api.post(f"/api/consolidation/{rid}/revert/", {"change": 99}, format="json")
    assert response.status_code == 400 and "change" in response.json()
    assert api.post(f"/api/consolidation/{rid}/revert/", {}, format="json").status_code == 200
    assert Memory.objects.filter(owner=user, superseded_by__isnull=False).count() == 0


@pytest.mark.slow
def test_a_run_on_the_real_worker(celery_worker):
    user = UserFactory()
    [_write(user, text) for text in SAME]
    run = consolidation.consolidation_start(owner=user)
    done = wait_for(lambda: ConsolidationRun.objects.filter(pk=run.pk, status="done").first(), worker=celery_worker)
    assert len([c for c in done.changes if c["action"] == "merge"]) == 2


def test_another_persons_attribute_is_no_near_duplicate_of_the_users(user, run_now, settings):
    def frame(holder):
        return {"attribute": "employer", "value": "siemens",
                "frames": [{"holder": holder, "attribute": "employer", "value": "siemens", "single": True,
                            "ended": False, "score": 0.9}]}

    own = _write(user, "Caroline works at Siemens.", category="fact", metadata=frame(""))
    brothers = _write(user, "Caroline's brother works at Siemens.", category="fact", metadata=frame("brother"))
    settings.CONSOLIDATION_THRESHOLD = 0.85
    assert 1.0 - consolidation.nearest_of_owner(
        Memory.objects.filter(pk=brothers.pk), owner_id=user.pk, vector=own.embedding, model=own.embedding_model,
        limit=1)[0].distance >= settings.CONSOLIDATION_THRESHOLD  # near enough to merge, were it the same person
    run = run_now(user)
    assert not [c for c in run.changes if c["action"] == "merge"]
    for memory in (own, brothers):
        memory.refresh_from_db()
        assert memory.superseded_by_id is None
