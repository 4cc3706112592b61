"""Reconciliation: extracted candidate memories folded into the owner's memories, each decision (ADD, UPDATE,
NOOP, KEEP) with its reason and evidence in the history reason.

What a statement is about comes from its attribute frames (`frames`: extraction.attributes.statement_frames,
passed in by the callers, which sit above both apps): holder, attribute, value, whether it ends something. A
candidate is compared with the owner's live memories of the same holder and attribute, stored ones by their
metadata, the others (hand-written, imported, older extractions) classified on the fly among its nearest:
- same single-valued attribute, different value -> UPDATE: the new memory supersedes them (valid_to set), unless
  what it says became true before the current one did: then it enters that memory's chain as the past;
- same value (or a near-identical memory) -> NOOP: the existing memory is refreshed;
- an accumulating attribute with a new value, another holder, an event, no attribute -> ADD (KEEP when a memory
  of the same attribute stays beside it).
The decision for each candidate is memories.planning's; this module reads what it needs and writes the decision.
"""

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from django.db import transaction
from django.db.models import Q
from django.utils import timezone

from integrations import embeddings
from memories.models import HistoryAction, Memory
from memories.planning import Plan, carried, plan_for, scope_queryset, timing
from memories.supersession import link_supersession
from memories.vectors import embed_or_pending, nearest_of_owner
from memories.versions import save_version
from memories.writes import prepare_item, write_one

Action = HistoryAction.Action
NEIGHBOURS = 8  # nearest live memories classified on the fly, per candidate


@dataclass(frozen=True)
class Decision:
    """What reconciliation did with one extracted candidate: ADD or KEEP (a new memory), UPDATE (`memory`
    supersedes `targets`, or entered their chain as the past), NOOP (`memory` is the existing one that says it)."""

    action: str
    memory: Memory
    reason: str
    targets: tuple = ()


@dataclass
class Known:
    """The frames of stored memories, read before the reconciling transaction: memory id -> frames."""

    frames: dict = field(default_factory=dict)
    neighbours: list = field(default_factory=list)  # per candidate: [(memory, cosine)]
    candidate_frames: list = field(default_factory=list)
    restated: dict = field(default_factory=dict)  # a stored frame's fact alone -> its vector (planning.carried)
    written: set = field(default_factory=set)  # ids of the memories this batch (one message) wrote


def _similar(owner, project, vector, limit: int = NEIGHBOURS) -> list[tuple[Memory, float]]:
    return [(m, 1.0 - m.distance) for m in nearest_of_owner(scope_queryset(owner, project), owner_id=owner.pk,
                                                           vector=vector, limit=limit)]


def _stored_frames(memory: Memory) -> list[dict] | None:
    """The frames a memory's metadata records (written by this module), or None to classify it."""
    meta = memory.metadata if isinstance(memory.metadata, dict) else {}
    if "frames" in meta and isinstance(meta["frames"], list):
        return meta["frames"]
    return None


def _as_dicts(frames) -> list[dict]:
    return [{"attribute": f.attribute, "value": f.value, "holder": f.holder, "single": f.single,
             "ended": f.ended, "score": f.score, **({"replaces": f.replaces} if f.replaces else {}),
             **({"restated": f.restated} if getattr(f, "restated", "") else {}),
             **({"denied": True} if getattr(f, "denied", False) else {})} for f in frames]


def reconcile_frames(*, owner, candidates, vectors, project=None, frames: Callable | None = None,
                     self_names=()) -> Known:
    """Everything slow a reconciliation needs, before its transaction: the candidates' frames, their nearest live
    memories and the frames of those that do not record theirs (one batch through `frames`)."""
    known = Known()
    if frames is None:
        return known
    known.candidate_frames = [_as_dicts(f) for f in frames(
        [(c.content, c.subject) for c in candidates], self_names=self_names)]
    # memories recording a single-valued attribute of a candidate, however far their words are from it
    attributes = {f["attribute"] for fs in known.candidate_frames for f in fs if f["single"]}
    unknown: dict = {}
    for candidate, vector in zip(candidates, vectors, strict=True):
        scope = project if candidate.scope == "project" else None
        near = _similar(owner, scope, vector) if vector is not None else []
        same = list(scope_queryset(owner, scope).filter(_attribute_q(attributes))
                    .order_by("-valid_from")[:20]) if attributes else []
        known.neighbours.append(near)
        for memory in [m for m, _ in near] + same:
            stored = _stored_frames(memory)
            if stored is not None:
                known.frames[memory.pk] = stored
            else:
                unknown[memory.pk] = memory
    if unknown:
        memories = list(unknown.values())
        for memory, found in zip(memories, frames([(m.content, m.subject) for m in memories],
                                                  self_names=self_names), strict=True):
            known.frames[memory.pk] = _as_dicts(found)
    texts = list(dict.fromkeys(f["restated"] for fs in known.frames.values() for f in fs if f.get("restated")))
    if texts:
        known.restated = dict(zip(texts, embed_or_pending(texts)[0], strict=True))
    return known


def _attribute_q(attributes) -> Q:
    q = Q()
    for attribute in attributes:
        q |= Q(metadata__frames__contains=[{"attribute": attribute}])
    return q


def memories_reconcile(*, owner, candidates, project=None, reason: str, conversation=None, message=None,
                       source_ref: dict | None = None, source: str = Memory.Source.EXTRACTED,
                       llm_decide=None, vectors: list[list[float] | None] | None = None,
                       happened_at=None, frames: Callable | None = None, self_names=(),
                       known: Known | None = None) -> list[Decision]:
    """Fold extracted candidates into the owner's memories, one by one (a later candidate sees an earlier one).
    `frames(statements, self_names=...)`: the attribute frames of (content, subject) pairs (without it only
    near-identical memories are recognised); `known`: reconcile_frames' answer, computed before the caller's
    transaction (else computed here). `llm_decide(candidate, similar)` -> (action, target_id, why), when given,
    chooses instead of the frames (after the near-identical check); the valid-time rule applies to its UPDATEs
    too. `vectors`: the candidates' embeddings, when the caller already has them. `happened_at`: when what they
    say was said (a candidate's own `valid_from`, when it has one, comes first)."""
    if not candidates:
        return []
    if vectors is None:
        vectors, model_name = embed_or_pending([c.content for c in candidates])
    else:  # the caller's vectors: of the model they name (memories.spaces)
        model_name = embeddings.model_of(next((v for v in vectors if v is not None), None))
    if known is None:
        known = reconcile_frames(owner=owner, candidates=candidates, vectors=vectors, project=project,
                                 frames=frames, self_names=self_names)
    context = dict(reason=reason, conversation=conversation, message=message, source_ref=source_ref or {},
                   source=source, happened_at=happened_at, model_name=model_name)
    decisions: list[Decision] = []
    # what a message says ended goes first ("my new Leaf ... Sold the Yaris last week"): the new value then
    # retires the old one and the ending both, as when the ending is said first
    order = sorted(range(len(candidates)), key=lambda i: not _only_endings(
        known.candidate_frames[i] if known.candidate_frames else []))
    with transaction.atomic():
        for index in order:
            candidate, vector = candidates[index], vectors[index]
            scope = project if candidate.scope == "project" else None
            found = known.candidate_frames[index] if known.candidate_frames else []
            near = known.neighbours[index] if known.neighbours else (
                _similar(owner, scope, vector) if vector is not None else [])
            # the LLM reconciler is asked about stored memories only: one reply already made the batch coherent
            near = _live(near, decisions, [vectors[i] for i in order[:len(decisions)]] if llm_decide is None
                         else None, vector)
            plan = plan_for(owner, candidate, found, near, known, scope, llm_decide, when=timing(
                candidate, happened_at))
            decision = _apply(owner, candidate, vector, plan, found, scope=scope, own_slot=llm_decide is not None,
                              **context)
            if decision.action == "UPDATE" and not plan.past:
                _carry(owner, decision, found, known, reason=reason, model_name=model_name)
            if decision.action in ("ADD", "KEEP", "UPDATE"):
                known.frames[decision.memory.pk] = found
                known.written.add(decision.memory.pk)
            decisions.append(decision)
    return [decision for _, decision in sorted(zip(order, decisions, strict=True), key=lambda pair: pair[0])]


def _only_endings(frames: list[dict]) -> bool:
    return bool(frames) and all(f["single"] and f.get("ended") for f in frames)


def _live(near, decisions, written_vectors, vector) -> list[tuple[Memory, float]]:
    """The nearest memories read before the transaction, less those an earlier candidate superseded, and with
    those the earlier candidates of this batch wrote that are still current ("my final day at Zalando; on Monday
    I start at N26": the second retires what the first wrote)."""
    gone = {t.pk for d in decisions for t in d.targets if d.action == "UPDATE"}
    live = [(m, s) for m, s in near if m.pk not in gone]
    written = {} if written_vectors is None else {
        d.memory.pk: v for d, v in zip(decisions, written_vectors, strict=True)
        if d.action in ("ADD", "KEEP", "UPDATE") and d.memory.pk not in gone}
    held = {m.pk for m, _ in live}
    current = Memory.objects.filter(pk__in=[pk for pk in written if pk not in held], superseded_by__isnull=True,
                                    is_active=True) if written else []
    live += [(memory, _cosine(vector, written[memory.pk]) if vector is not None and written[memory.pk] is not None
              else 0.0) for memory in current]
    return sorted(live, key=lambda item: -item[1])


def _cosine(a, b) -> float:
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    return float(a @ b / max(np.linalg.norm(a) * np.linalg.norm(b), 1e-12))


def _evidence(candidate_message, targets) -> str:
    ids = [str(m.message_id) for m in targets if m.message_id] + (
        [str(candidate_message.pk)] if candidate_message is not None else [])
    return f"; evidence messages {', '.join(dict.fromkeys(ids))}" if ids else ""


def _apply(owner, candidate, vector, plan: Plan, found, *, scope, own_slot, reason, conversation, message,
           source_ref, source, happened_at, model_name) -> Decision:
    """Write what the plan says. `own_slot`: the extractor's attribute names the memory (the LLM's slot), the
    frames are kept beside it; else the frame's name does."""
    note = f"{reason}: {plan.action} ({plan.why}{_evidence(message, plan.targets)})"
    if plan.action == "NOOP":
        memory = Memory.objects.select_for_update().get(pk=plan.targets[0].pk)
        memory.confidence = min(1.0, max(memory.confidence, 0.5) + 0.1)
        memory.accessed_at = timezone.now()
        memory.version += 1
        save_version(memory, action=Action.UPDATE, reason=note)
        return Decision("NOOP", memory, note, tuple(plan.targets))
    slot = getattr(candidate, "attribute", "")
    metadata = {"attribute": slot} if slot else {}
    if found:
        metadata = {"attribute": slot if own_slot and slot else found[0]["attribute"], "value": found[0]["value"],
                    "frames": found}
    update = plan.action == "UPDATE"
    item = prepare_item({
        "content": candidate.content, "category": candidate.category, "subject": candidate.subject,
        "tags": list(candidate.tags), "entities": dict(candidate.entities), "importance": candidate.importance,
        "metadata": metadata, "project": scope, "conversation": conversation, "message": message,
        "source_ref": source_ref, "source": Memory.Source.EXPLICIT if getattr(candidate, "explicit", False) else source,
        "supersedes": plan.targets[0].pk if update and not plan.past else None,
        "past_of": plan.targets[0] if update and plan.past else None,
        "happened_at": happened_at, "valid_from": getattr(candidate, "valid_from", None),
    })
    write = write_one(owner=owner, item=item, vector=vector, model_name=model_name, duplicate=None, actor=None,
                      reason=note)
    if update and not plan.past:
        for other in plan.targets[1:]:  # a second current value of the attribute, or a companion attribute's
            old = Memory.objects.select_for_update().get(pk=other.pk)
            if old.superseded_by_id is None and old.is_active:
                link_supersession(write.memory, old, actor=None, reason=f"{note}; superseded by {write.memory.pk}")
    return Decision(plan.action, write.memory, note, tuple(plan.targets))


def _carry(owner, decision: Decision, found: list[dict], known: Known, *, reason: str, model_name: str) -> None:
    """What a superseded memory said of its other attributes still holds: each such fact is written again, alone,
    as of when it was said ("moved to Lyon for work at Acme" superseded by "I work at Bosch now" leaves "The user
    lives in Lyon.")."""
    for target in decision.targets:
        for frame in carried(known.frames.get(target.pk, []), found, decision.memory.content):
            if scope_queryset(owner, target.project).filter(metadata__frames__contains=[{
                    "holder": frame["holder"], "attribute": frame["attribute"], "value": frame["value"]}]).exists():
                continue  # another current memory says it
            note = (f"{reason}: KEEP ({frame['attribute']}: {frame['value']} still holds; restated from {target.pk}, "
                    f"superseded by {decision.memory.pk}{_evidence(None, [target])})")
            item = prepare_item({
                "content": frame["restated"], "category": target.category, "subject": target.subject,
                "tags": list(target.tags), "entities": dict(target.entities), "importance": target.importance,
                "metadata": {"attribute": frame["attribute"], "value": frame["value"], "frames": [frame]},
                "project": target.project, "conversation": target.conversation, "message": target.message,
                "source_ref": dict(target.source_ref or {}), "source": target.source,
                "happened_at": target.happened_at, "valid_from": target.valid_from,
            })
            vector = known.restated.get(frame["restated"])
            write = write_one(owner=owner, item=item, vector=vector,
                              model_name=model_name if vector is not None else "", duplicate=None, actor=None,
                              reason=note)
            known.frames[write.memory.pk] = [frame]
