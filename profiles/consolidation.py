"""Consolidation: a background pass over one user's memories that merges near-duplicates of the same subject and
attribute (the others superseded "merged into ..." through memories.supersession, their evidence counted on the
one kept), retires expired memories (soft-deleted), and refreshes the profile. Every change is listed on its
ConsolidationRun with its reason and can be reverted; nothing is deleted, and a memory the user edited by hand is
never touched.

One user's run never delays another's requests or runs: a task works on one share of the owner's memories
(CONSOLIDATION_SHARE), holding the owner's claim, then queues the next share behind everyone else's work."""

import time
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.exceptions import ValidationError
from django.db import connection, transaction
from django.db.models import Q
from django.utils import timezone

from core import events
from core.claims import ClaimKind, claim, unclaimed
from memories.models import HistoryAction, Memory, Project
from memories.services import memory_restore, memory_revert, memory_soft_delete, memory_update
from memories.supersession import link_supersession
from memories.vectors import nearest_of_owner, numbers_in
from memories.versions import save_version
from profiles import tasks
from profiles.models import ConsolidationRun, Profile
from profiles.sections import attribute_of, holder_of
from profiles.services import evidence_of, profile_rebuild

Action = HistoryAction.Action
NEIGHBOURS = 8  # nearest live memories compared with each memory of a share
STALE_AFTER = timedelta(minutes=10)  # a running run this old that nobody works on is sent again
HAND_EDITS = (Action.UPDATE, Action.REVERT, Action.RESTORE)  # versions a signed-in user made by hand


def consolidation_start(*, owner, trigger: str = "request") -> ConsolidationRun:
    """Start a run for `owner` (or return the one already running), its first share queued on commit."""
    with transaction.atomic():
        running = ConsolidationRun.objects.select_for_update().filter(
            owner=owner, status=ConsolidationRun.Status.RUNNING).first()
        if running is not None:
            return running
        run = ConsolidationRun.objects.create(owner=owner, trigger=trigger,
                                              high_water=Memory.objects.owned_by(owner).count())
        transaction.on_commit(lambda: tasks.consolidate.delay(run.pk))
    return run


def consolidation_step(*, run_id: int) -> bool:
    """One share of a run, under the owner's claim (a second delivery leaves it to the first). Returns whether
    more is left (the task then queues itself again)."""
    run = ConsolidationRun.objects.filter(pk=run_id).first()
    if run is None or run.status != ConsolidationRun.Status.RUNNING:
        return False
    with claim(ClaimKind.CONSOLIDATION_OWNER, run.owner_id) as mine:
        if not mine:
            return False
        started = time.monotonic()
        more = _share(run)
        with transaction.atomic():
            locked = ConsolidationRun.objects.select_for_update().get(pk=run.pk)
            locked.cursor, locked.memories_seen = run.cursor, run.memories_seen
            locked.seconds += time.monotonic() - started
            if not more:
                locked.status, locked.finished_at = ConsolidationRun.Status.DONE, timezone.now()
                events.emit(events.CONSOLIDATION_RUN, owner_id=locked.owner_id, payload={
                    "id": locked.pk, "trigger": locked.trigger, "memories_seen": locked.memories_seen,
                    "changes": len(locked.changes)})
            locked.save()
        return more


def _share(run: ConsolidationRun) -> bool:
    """Compare the next share of memories with their nearest neighbours and merge near-duplicates; after the
    last share, retire expired memories and refresh the profiles."""
    owner_id = run.owner_id
    share = list(Memory.objects.filter(owner_id=owner_id).active()
                 .filter(Q(created_at__gt=run.cursor) if run.cursor else Q())
                 .order_by("created_at", "pk")[:settings.CONSOLIDATION_SHARE])
    edited = _hand_edited(owner_id, [m.pk for m in share])
    merged: set = set()
    for memory in share:
        if memory.pk in merged or memory.pk in edited or memory.embedding is None:
            continue
        group = [m for m in _near(memory, edited) if m.pk not in merged]
        if group:
            merged.update(_merge(run, memory, group))
    if share:
        run.cursor = share[-1].created_at
        run.memories_seen += len(share)
    if len(share) == settings.CONSOLIDATION_SHARE:
        return True
    _retire_expired(run)
    _refresh_profiles(run)
    return False


def _hand_edited(owner_id, ids) -> set:
    """Memories a signed-in user changed by hand (a version with a user and an edit action)."""
    return set(Memory.history.filter(owner_id=owner_id, id__in=ids, history_user__isnull=False,
                                     history_action__in=HAND_EDITS).values_list("id", flat=True))


def _near(memory: Memory, edited: set) -> list[Memory]:
    """The live near-duplicates of `memory`: cosine at least CONSOLIDATION_THRESHOLD, same subject (and the same
    holder of its attribute: "the user's brother works at Siemens" is no duplicate of "the user works at Siemens"),
    same project, no other attribute, the same figures, not edited by hand."""
    attribute = attribute_of(memory)
    holder = holder_of(memory)
    found = []
    for other in nearest_of_owner(Memory.objects.filter(owner_id=memory.owner_id, project_id=memory.project_id)
                                  .active().exclude(pk=memory.pk), owner_id=memory.owner_id,
                                  vector=memory.embedding, model=memory.embedding_model, limit=NEIGHBOURS):
        if 1.0 - other.distance < settings.CONSOLIDATION_THRESHOLD:
            break
        other_attribute = attribute_of(other)
        if (other.subject or "").lower() != (memory.subject or "").lower() or other.pk in edited:
            continue
        if holder_of(other) != holder:
            continue
        if attribute and other_attribute and attribute != other_attribute:
            continue
        if numbers_in(other.content) != numbers_in(memory.content) or other.category == "reminder":
            continue
        found.append(other)
    if found:
        found = [m for m in found if m.pk not in _hand_edited(memory.owner_id, [m.pk for m in found])]
    return found


def _merge(run: ConsolidationRun, memory: Memory, group: list[Memory]) -> list:
    """Keep the statement said first (it has held longest), supersede the others "merged into" it, and count
    their evidence on it. Returns the merged ids."""
    with transaction.atomic():
        ids = [memory.pk, *(m.pk for m in group)]
        rows = {m.pk: m for m in Memory.objects.select_for_update().filter(pk__in=ids).active()}
        if memory.pk not in rows or len(rows) < 2:
            return []
        keep = min(rows.values(), key=lambda m: (m.valid_from, m.created_at))
        others = [m for m in rows.values() if m.pk != keep.pk]
        keep_version = keep.version
        meta = dict(keep.metadata) if isinstance(keep.metadata, dict) else {}
        meta["evidence_count"] = evidence_of(keep) + sum(evidence_of(m) for m in others)
        meta["merged"] = [*meta.get("merged", []), *(str(m.pk) for m in others)]
        sources = [m.message_id for m in others if m.message_id]
        if sources:
            meta["merged_messages"] = [*meta.get("merged_messages", []), *(str(s) for s in sources)]
        keep.metadata = meta
        keep.version += 1
        save_version(keep, action=Action.UPDATE, reason=f"consolidation run {run.pk}: {len(others)} near-duplicate(s)"
                                                        f" merged into it: {', '.join(str(m.pk) for m in others)}")
        for other in others:
            before = other.version
            reason = (f"merged into {keep.pk} (consolidation run {run.pk}: near-duplicate, same subject"
                      f"{' and attribute ' + attribute_of(keep) if attribute_of(keep) else ''})")
            link_supersession(keep, other, actor=None, reason=reason)
            _record(run, {"action": "merge", "memory": str(other.pk), "into": str(keep.pk), "reason": reason,
                          "content": other.content[:300], "version_before": before,
                          "into_version_before": keep_version})
    return [m.pk for m in others] + ([keep.pk] if keep.pk != memory.pk else [])


def _retire_expired(run: ConsolidationRun) -> None:
    for memory in (Memory.objects.filter(owner_id=run.owner_id, is_active=True).expired()
                   .order_by("created_at")[:settings.CONSOLIDATION_SHARE]):
        reason = f"expired (consolidation run {run.pk})"
        with transaction.atomic():
            memory_soft_delete(memory=memory, reason=reason)
            _record(run, {"action": "retire", "memory": str(memory.pk), "reason": reason,
                          "content": memory.content[:300]})


def _refresh_profiles(run: ConsolidationRun) -> None:
    projects = set(Profile.objects.filter(owner_id=run.owner_id).values_list("project_id", flat=True)) | {None}
    for project_id in projects:
        project = Project.objects.filter(pk=project_id).first() if project_id else None
        profile_rebuild(owner=run.owner_id, project=project, reason=f"refreshed by consolidation run {run.pk}")
    with transaction.atomic():
        _record(run, {"action": "profile", "reason": "profile refreshed", "profiles": len(projects)})


def _record(run: ConsolidationRun, change: dict) -> None:
    """A change, written to the run inside the transaction that makes it: a run never did what it does not list."""
    run.changes.append({**change, "at": timezone.now().isoformat()})
    ConsolidationRun.objects.filter(pk=run.pk).update(changes=run.changes)


@dataclass(frozen=True)
class Reverted:
    run: ConsolidationRun
    count: int


def consolidation_revert(*, run: ConsolidationRun, change: int | None = None, actor=None) -> Reverted:
    """Undo one change of a run (its index in `changes`) or all of them: a merged memory is current again (its
    supersession undone, the evidence taken back from the one kept); a retired memory is restored."""
    indexes = range(len(run.changes)) if change is None else [change]
    if change is not None and not 0 <= change < len(run.changes):
        raise ValidationError({"change": [f"This run has {len(run.changes)} changes."]})
    count = 0
    for index in indexes:
        entry = run.changes[index]
        if entry.get("reverted_at") or entry["action"] not in ("merge", "retire"):
            continue
        memory = Memory.objects.filter(owner_id=run.owner_id, pk=entry["memory"]).first()
        if memory is None:
            continue
        if entry["action"] == "merge":
            _unmerge(memory, entry, actor)
        else:
            memory_restore(memory=memory, actor=actor, reason=f"retirement by consolidation run {run.pk} reverted")
        with transaction.atomic():
            locked = ConsolidationRun.objects.select_for_update().get(pk=run.pk)
            locked.changes[index]["reverted_at"] = timezone.now().isoformat()
            locked.save(update_fields=["changes"])
            run.changes = locked.changes
        count += 1
    return Reverted(run, count)


def _unmerge(memory: Memory, entry: dict, actor) -> None:
    memory_revert(memory=memory, version=entry["version_before"], actor=actor,
                  reason=f"merge into {entry['into']} reverted")
    keep = Memory.objects.filter(owner_id=memory.owner_id, pk=entry["into"]).first()
    if keep is not None and isinstance(keep.metadata, dict) and str(memory.pk) in keep.metadata.get("merged", []):
        meta = dict(keep.metadata)
        meta["merged"] = [m for m in meta["merged"] if m != str(memory.pk)]
        meta["evidence_count"] = max(1, evidence_of(keep) - evidence_of(memory))
        memory_update(memory=keep, data={"metadata": meta}, actor=actor,
                      reason=f"merge of {memory.pk} reverted")


def consolidation_sweep() -> int:
    """Periodic: start a run for every owner with CONSOLIDATION_AFTER memories or more written since their last
    run began (or ever), and for owners whose last run is older than CONSOLIDATION_PERIOD_HOURS with anything new
    since. Returns how many were started."""
    with connection.cursor() as cursor:
        cursor.execute(f"""
            SELECT m.owner_id,
                   CASE WHEN count(*) >= %(after)s THEN 'new memories' ELSE 'periodic' END
            FROM {Memory._meta.db_table} m
            LEFT JOIN LATERAL (SELECT max(started_at) AS last FROM {ConsolidationRun._meta.db_table} r
                               WHERE r.owner_id = m.owner_id) r ON true
            WHERE m.created_at > coalesce(r.last, '-infinity')
              AND NOT EXISTS (SELECT 1 FROM {ConsolidationRun._meta.db_table} x
                              WHERE x.owner_id = m.owner_id AND x.status = 'running')
            GROUP BY m.owner_id, r.last
            HAVING count(*) >= %(after)s
                OR (r.last IS NOT NULL AND r.last < now() - make_interval(hours => %(hours)s))
            LIMIT 1000""", {"after": settings.CONSOLIDATION_AFTER, "hours": settings.CONSOLIDATION_PERIOD_HOURS})
        rows = cursor.fetchall()
    for owner_id, trigger in rows:
        consolidation_start(owner=_owner(owner_id), trigger=trigger)
    # runs whose task was lost (a worker killed outright): nobody holds their owner's claim
    stale = ConsolidationRun.objects.filter(status=ConsolidationRun.Status.RUNNING,
                                            started_at__lt=timezone.now() - STALE_AFTER)
    by_owner = {str(run.owner_id): run.pk for run in stale[:1000]}
    for owner_id in unclaimed(ClaimKind.CONSOLIDATION_OWNER, list(by_owner)):
        tasks.consolidate.delay(by_owner[owner_id])
    return len(rows)


def _owner(owner_id):
    return get_user_model().objects.get(pk=owner_id)


def consolidation_mark_failed(*, run_id: int, error: str) -> None:
    with transaction.atomic():
        run = ConsolidationRun.objects.select_for_update().filter(pk=run_id).first()
        if run is not None and run.status == ConsolidationRun.Status.RUNNING:
            run.status, run.error, run.finished_at = ConsolidationRun.Status.FAILED, error[:2000], timezone.now()
            run.save()
