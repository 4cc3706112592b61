"""LoCoMo evidence retrieval through memory search: Recall@1/5/10/20 and NDCG@10 for semantic, keyword and hybrid
search side by side, overall and per question category.

    .venv/bin/python bench/locomo_recall.py [path/to/locomo10.json] [--reuse] [--rankings default,weighted,rrf]

Data: LoCoMo (Maharana et al., ACL 2024, arXiv:2402.17753), CC BY-NC 4.0, read from ../shared/bench/locomo10.json
(never copied into this repository). Each of the 10 conversations goes to its own Django user; every dialog turn
becomes one memory ("speaker: text", happened_at = its session's date, metadata.dia_id) through
memories.batch.memory_batch_create. Every question of categories 1-4 is searched with limit 20; a question's Recall@k
is the fraction of its evidence turns in the top k. Searches get the question's vector precomputed (the bench
measures search, not query embedding). Everything runs in a dedicated database (memento_bench).
"""

import argparse
import math
import re
import statistics
import sys
import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import progress, setup_django, wipe_users  # noqa: E402

DEFAULT_PATH = ROOT.parent / "shared" / "bench" / "locomo10.json"
USER_PREFIX = "locomo-"
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}
KS = (1, 5, 10, 20)
LIMIT = 20
SESSION_KEY = re.compile(r"session_(\d+)")
DIA_ID = re.compile(r"D(\d+):(\d+)")


@dataclass
class Turn:
    dia_id: str
    session: int
    speaker: str
    text: str
    happened_at: datetime


@dataclass
class Question:
    sample_id: str
    category: int
    text: str
    evidence: list[str]


@dataclass
class EvidenceReport:
    repaired: int = 0  # malformed entries turned into valid ids
    dropped: int = 0  # entries that name no existing turn
    questions_without_evidence: int = 0


def parse_session_date(value: str) -> datetime:
    """'1:56 pm on 8 May, 2023' -> 2023-05-08 13:56 UTC."""
    return datetime.strptime(value.strip(), "%I:%M %p on %d %B, %Y").replace(tzinfo=UTC)


def conversation_turns(conversation: dict) -> list[Turn]:
    turns = []
    sessions = sorted(int(m.group(1)) for key in conversation if (m := SESSION_KEY.fullmatch(key)))
    for number in sessions:
        happened_at = parse_session_date(conversation[f"session_{number}_date_time"])
        for turn in conversation[f"session_{number}"]:
            turns.append(Turn(turn["dia_id"], number, turn["speaker"], turn["text"], happened_at))
    return turns


def repair_evidence(entries: list[str], known: set[str], report: EvidenceReport) -> list[str]:
    """Evidence ids as the file gives them, with the malformed ones repaired where the intent is clear
    ('D8:6; D9:17' -> two ids, 'D:11:26' -> 'D11:26', 'D30:05' -> 'D30:5') and ids of turns that do not exist
    ('D10:19' in a 9-turn session, a bare 'D') dropped."""
    out: list[str] = []
    for entry in entries:
        if entry in known:
            out.append(entry)
            continue
        found = [f"D{int(s)}:{int(t)}" for s, t in DIA_ID.findall(entry.replace("D:", "D"))]
        valid = [dia for dia in found if dia in known]
        if valid:
            report.repaired += 1
            out.extend(valid)
        else:
            report.dropped += 1
    return list(dict.fromkeys(out))


def load_dataset(path: Path) -> tuple[dict[str, list[Turn]], list[Question], EvidenceReport]:
    import json

    data = json.loads(path.read_text())
    turns: dict[str, list[Turn]] = {}
    questions: list[Question] = []
    report = EvidenceReport()
    for sample in data:
        sample_turns = conversation_turns(sample["conversation"])
        turns[sample["sample_id"]] = sample_turns
        known = {t.dia_id for t in sample_turns}
        for qa in sample["qa"]:
            if qa["category"] not in CATEGORIES:
                continue
            evidence = repair_evidence(qa.get("evidence") or [], known, report)
            if not evidence:
                report.questions_without_evidence += 1
                continue
            questions.append(Question(sample["sample_id"], qa["category"], qa["question"], evidence))
    return turns, questions, report


# --- loading --------------------------------------------------------------------------------------------------


def memory_items(sample_id: str, turns: list[Turn]) -> list[dict]:
    return [
        {
            "content": f"{turn.speaker}: {turn.text}",
            "happened_at": turn.happened_at,
            "metadata": {"dia_id": turn.dia_id, "locomo": sample_id},
            # each session is one conversation of the two speakers
            "source_ref": {"conversation_id": f"locomo/{sample_id}/session_{turn.session}", "message_id": turn.dia_id},
            "source": "import",
            "allow_duplicate": True,
        }
        for turn in turns
    ]


def load_memories(turns: dict[str, list[Turn]], *, reuse: bool) -> dict[str, object]:
    """One user per conversation; returns sample_id -> user. With `reuse`, data already loaded is kept when it is
    complete."""
    from django.contrib.auth import get_user_model

    from memories.batch import memory_batch_create
    from memories.models import Memory

    User = get_user_model()
    if reuse:
        users = {u.username.removeprefix(USER_PREFIX): u for u in User.objects.filter(username__startswith=USER_PREFIX)}
        if set(users) == set(turns) and all(
            Memory.objects.owned_by(users[s]).filter(embedding__isnull=False).count() == len(turns[s]) for s in turns
        ):
            print(f"reusing {sum(map(len, turns.values()))} memories already loaded", file=sys.stderr)
            return users
    wipe_users(USER_PREFIX)
    users = {}
    total = sum(len(t) for t in turns.values())
    with progress(total=total, desc="storing turns", unit="turn") as bar:
        for sample_id, sample_turns in turns.items():
            user = User.objects.create(username=f"{USER_PREFIX}{sample_id}")
            users[sample_id] = user
            items = memory_items(sample_id, sample_turns)
            for start in range(0, len(items), 1000):
                batch = items[start : start + 1000]
                writes = memory_batch_create(owner=user, items=batch, reason="locomo bench")
                assert all(w.outcome == "created" for w in writes), "every turn must be stored"
                bar.update(len(batch))
    return users


# --- evaluation -----------------------------------------------------------------------------------------------


def ndcg_at(found: list[str], relevant: set[str], k: int = 10) -> float:
    dcg = sum(1 / math.log2(i + 2) for i, dia in enumerate(found[:k]) if dia in relevant)
    ideal = sum(1 / math.log2(i + 2) for i in range(min(len(relevant), k)))
    return dcg / ideal if ideal else 0.0


def metrics(found: list[str], relevant: set[str]) -> dict[str, float]:
    out = {f"R@{k}": len(relevant & set(found[:k])) / len(relevant) for k in KS}
    out["NDCG@10"] = ndcg_at(found, relevant)
    return out


@dataclass(frozen=True)
class Run:
    mode: str
    ranking: str | None

    @property
    def label(self) -> str:
        return f"{self.mode}/{self.ranking}" if self.ranking else self.mode


def evaluate(users, questions: list[Question], runs: list[Run]):
    from core import rls
    from integrations.embeddings import embed_texts
    from memories.search import memory_search

    started = time.perf_counter()
    vectors = embed_texts([q.text for q in questions])
    print(f"embedded {len(questions)} questions in {time.perf_counter() - started:.1f} s", file=sys.stderr)
    scores: dict[Run, list[tuple[int, dict[str, float]]]] = defaultdict(list)
    timings: dict[Run, list[float]] = defaultdict(list)
    labels: dict[Run, str] = {}
    ranked: dict[str, list[list[str]]] = defaultdict(list)
    for question, vector in progress(list(zip(questions, vectors, strict=True)), desc="searching", unit="question"):
        relevant = set(question.evidence)
        owner = users[question.sample_id]
        for run in runs:
            with rls.as_user(owner.pk):  # as a request runs it (the planner sees the policy as the user)
                started = time.perf_counter()
                result = memory_search(
                    owner=owner, query=question.text, mode=run.mode, limit=LIMIT,
                    threshold=0.0 if run.mode == "semantic" else None, ranking=run.ranking, query_vector=vector,
                )
                timings[run].append((time.perf_counter() - started) * 1000)
            labels[run] = f"{run.mode}/{result.ranking}"
            found = [item.memory.metadata["dia_id"] for item in result.results]
            scores[run].append((question.category, metrics(found, relevant)))
            ranked[labels[run]].append(found)
    return scores, timings, labels, ranked


def table(scores, labels, category: int | None) -> str:
    columns = [f"R@{k}" for k in KS] + ["NDCG@10"]
    width = max(len(label) for label in labels.values()) + 2
    lines = [f"{'mode/ranking':<{width}}{'n':>6}" + "".join(f"{c:>9}" for c in columns)]
    for run, rows in scores.items():
        chosen = [m for cat, m in rows if category is None or cat == category]
        if not chosen:
            continue
        means = [statistics.fmean(m[c] for m in chosen) for c in columns]
        lines.append(f"{labels[run]:<{width}}{len(chosen):>6}" + "".join(f"{v:>9.4f}" for v in means))
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH, help="locomo10.json")
    parser.add_argument("--reuse", action="store_true", help="keep the memories loaded by an earlier run")
    parser.add_argument("--rankings", default="", help="extra hybrid rankings to compare, comma-separated")
    parser.add_argument("--set", choices=("all", "first", "last"), default="all",
                        help="questions of all conversations, the first five (tuning) or the last five")
    parser.add_argument("--dump", type=Path, help="write each question's ranked dia_ids here (to diff two runs)")
    args = parser.parse_args()

    turns, questions, report = load_dataset(args.path)
    if args.set != "all":
        samples = list(turns)[:5] if args.set == "first" else list(turns)[5:]
        questions = [q for q in questions if q.sample_id in samples]
    setup_django()

    from memories.search import DEFAULT_RANKING, RANKINGS

    extra = [r for r in args.rankings.split(",") if r]
    unknown = [r for r in extra if r not in RANKINGS]
    if unknown:
        parser.error(f"unknown rankings {unknown}; choose from {sorted(RANKINGS)}")
    users = load_memories(turns, reuse=args.reuse)
    runs = [Run("semantic", None), Run("keyword", None), Run("hybrid", None)]
    runs += [Run("hybrid", r) for r in extra if r != DEFAULT_RANKING]
    scores, timings, labels, found = evaluate(users, questions, runs)
    if args.dump:
        import json

        args.dump.write_text(json.dumps(found, indent=0))

    print(f"LoCoMo evidence retrieval: {sum(map(len, turns.values()))} turns in {len(turns)} conversations, "
          f"{len(questions)} questions of categories 1-4 (limit {LIMIT}; questions of {args.set} conversations).")
    print(f"Evidence ids: {report.repaired} malformed entries repaired, {report.dropped} naming no existing turn "
          f"dropped, {report.questions_without_evidence} questions left without evidence skipped.")
    print("Semantic mode runs with threshold=0 (the API default of 0.7 returns almost nothing for questions "
          "against dialog turns with this model). Query vectors are precomputed.\n")
    print("Overall")
    print(table(scores, labels, None))
    for category, name in CATEGORIES.items():
        print(f"\nCategory {category} ({name})")
        print(table(scores, labels, category))
    print("\nSearch latency in this run (ms, without query embedding)")
    for run, values in timings.items():
        ordered = sorted(values)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        print(f"  {labels[run]:<28} p50 {statistics.median(ordered):6.2f}   p95 {p95:6.2f}")


if __name__ == "__main__":
    main()
