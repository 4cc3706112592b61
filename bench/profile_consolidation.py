"""Consolidation and profiles on LoCoMo: near-duplicate pairs before and after a consolidation run, its cost, the
profile's size, how many LoCoMo observations a profile entry covers, and the context's evidence recall before and
after.

    .venv/bin/python bench/profile_consolidation.py [--set first|last|all] [--budget 1000] [--reuse]

Conversations are loaded as bench/locomo_conversations.py loads them (two users per conversation, one per
speaker, the local extractor). A near-duplicate pair is two live memories of one user with the same subject and
cosine >= 0.9. Consolidation runs here, share by share (what the worker's task does), for every user. An
observation is covered when a profile entry has cosine >= COVERED to it (LoCoMo's observations about each
speaker, all of them: no labelled subset). Data: ../shared/bench/locomo10.json (never copied into this
repository). Runs in its own database (memento_bench_profile).
"""

import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import setup_django  # noqa: E402
from bench.locomo_conversations import arguments, chosen, evaluate, load, observations  # noqa: E402

PAIR_COSINE = 0.9
COVERED = 0.6


def near_duplicate_pairs(user) -> int:
    from memories.models import Memory

    rows = list(Memory.objects.filter(owner=user).active().filter(embedding__isnull=False)
                .values_list("subject", "embedding"))
    pairs = 0
    by_subject: dict[str, list] = {}
    for subject, vector in rows:
        by_subject.setdefault((subject or "").lower(), []).append(vector)
    for vectors in by_subject.values():
        if len(vectors) < 2:
            continue
        matrix = np.array(vectors, dtype=np.float32)
        sims = matrix @ matrix.T
        pairs += int((np.triu(sims, k=1) >= PAIR_COSINE).sum())
    return pairs


def consolidate(user) -> tuple[float, int, int]:
    """One run for `user`, share by share in this process. Returns (seconds, memories compared, merges)."""
    from profiles.consolidation import consolidation_step
    from profiles.models import ConsolidationRun

    run = ConsolidationRun.objects.create(owner=user, trigger="bench")
    started = time.perf_counter()
    while consolidation_step(run_id=run.pk):
        pass
    run.refresh_from_db()
    return time.perf_counter() - started, run.memories_seen, sum(c["action"] == "merge" for c in run.changes)


def main() -> None:
    parser = arguments(__doc__.splitlines()[0], default_set="first")
    parser.add_argument("--budget", type=int, default=1000)
    args = parser.parse_args()

    setup_django("memento_bench_profile")
    from core import rls
    from integrations.embeddings import embed_texts
    from memories.models import Memory
    from profiles.models import ConsolidationRun
    from profiles.selectors import profile_view

    samples, turns, questions = chosen(args)
    users, _ = load(samples, turns, reuse=args.reuse)
    rls.activate(None, bypass=True)
    ConsolidationRun.objects.filter(owner__in=users.values()).delete()  # a --reuse run starts from the same state

    before_pairs = {key: near_duplicate_pairs(u) for key, u in users.items()}
    before_live = sum(Memory.objects.filter(owner=u).active().count() for u in users.values())
    recall_before, used_before = evaluate(samples, questions, users, [args.budget])
    rls.activate(None, bypass=True)

    seconds = compared = merges = 0
    for user in users.values():
        s, c, m = consolidate(user)
        seconds, compared, merges = seconds + s, compared + c, merges + m
    after_pairs = {key: near_duplicate_pairs(u) for key, u in users.items()}
    after_live = sum(Memory.objects.filter(owner=u).active().count() for u in users.values())
    recall_after, used_after = evaluate(samples, questions, users, [args.budget])
    rls.activate(None, bypass=True)

    sizes, entries, covered, total = [], [], 0, 0
    for sample in samples:
        obs = observations(sample)
        for (sample_id, speaker), user in users.items():
            if sample_id != sample["sample_id"]:
                continue
            view = profile_view(owner=user)
            sizes.append(view.tokens)
            texts = [e.text for _, es in view.sections for e in es if e.pk in view.shown]
            entries.append(len(texts))
            mine = [text for s, text, _ in obs if s == speaker]
            if not mine or not texts:
                total += len(mine)
                continue
            sims = np.array(embed_texts(mine)) @ np.array(embed_texts(texts)).T
            covered += int((sims.max(axis=1) >= COVERED).sum())
            total += len(mine)

    names = ", ".join(sorted(s["sample_id"] for s in samples))
    print(f"LoCoMo {args.set} ({names}): {len(users)} users, {len(questions)} questions")
    print(f"near-duplicate pairs (same subject, cosine >= {PAIR_COSINE}): {sum(before_pairs.values())} before, "
          f"{sum(after_pairs.values())} after consolidation "
          f"({sum(after_pairs.values()) / max(sum(before_pairs.values()), 1):.2f} of before)")
    print(f"live memories: {before_live} before, {after_live} after; {merges} merged")
    print(f"consolidation: {seconds:.1f} s for {compared} memories compared "
          f"({1000 * seconds / max(compared, 1):.1f} s per 1,000)")
    b, a = recall_before[args.budget]["all"], recall_after[args.budget]["all"]
    print(f"evidence recall at {args.budget} tokens: {statistics.mean(b):.3f} before, {statistics.mean(a):.3f} "
          f"after (tokens used {statistics.mean(used_before[args.budget]):.0f} / "
          f"{statistics.mean(used_after[args.budget]):.0f})")
    print(f"profile: {statistics.mean(sizes):.0f} tokens on average (max {max(sizes)}), "
          f"{statistics.mean(entries):.1f} entries shown; observations covered by an entry (cosine >= {COVERED}): "
          f"{covered} of {total} ({covered / max(total, 1):.3f})")


if __name__ == "__main__":
    main()
