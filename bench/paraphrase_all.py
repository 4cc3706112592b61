"""Needs phrased as questions, every set at once: hybrid recall@5 of memory search for each set's questions (tuned
and held out), against the set's whole owner and against sparse owners (each question against its own facts and
`--others` more of the set's, drawn with a fixed seed: a new user with a handful of memories).

    .venv/bin/python bench/paraphrase_all.py [--others 6] [--misses]

The sets are bench/sets/paraphrase_needs*.json (bench/paraphrase_needs.py asks one set in more detail). Everything
runs in the bench database (memento_bench), through `memories.search.memory_search` as the user.
"""

import argparse
import json
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import setup_django, wipe_users  # noqa: E402
from bench.paraphrase_needs import load  # noqa: E402

SETS = sorted((ROOT / "bench" / "sets").glob("paraphrase_needs*.json"))
USERNAME = "paraphrase-all"
K = 5
SEED = 19


def question_lists(data: dict) -> list[tuple[str, list[dict]]]:
    """(name, questions) of a set: its tuned questions and each held-out list."""
    return [(name, data[name]) for name in data if name == "questions" or name.startswith("heldout")]


def found(owner, question: dict, fact_of: dict) -> tuple[bool, list[str]]:
    """Whether one of the question's facts is in the top K, and the facts that came first."""
    from core import rls
    from memories.search import memory_search

    with rls.as_user(owner.pk):
        result = memory_search(owner=owner, query=question["q"], limit=10)
    ranked = [fact_of[r.memory.pk] for r in result.results]
    return bool(set(question["expect"]) & set(ranked[:K])), ranked[:3]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--others", type=int, default=6, help="facts besides its own in a sparse owner")
    parser.add_argument("--misses", action="store_true", help="print the questions missed at 5")
    args = parser.parse_args()
    setup_django()

    from django.contrib.auth import get_user_model

    from core import rls
    from memories.models import Memory

    draw = random.Random(SEED)
    totals = {"whole": [0, 0], "sparse": [0, 0]}
    print(f"{'set':<44}{'whole owner':>14}{'sparse owners':>16}")
    for path in SETS:
        data = json.loads(path.read_text())
        facts = {f["id"]: f for f in data["facts"]}
        for name, questions in question_lists(data):
            hits = {"whole": 0, "sparse": 0}
            wipe_users(USERNAME)
            owner = get_user_model().objects.create(username=USERNAME)
            whole = load(owner, data["facts"])
            for question in questions:
                ok, first = found(owner, question, whole)
                hits["whole"] += ok
                if args.misses and not ok:
                    print(f"  whole:  {question['q']!r} wants {question['expect']}, got {first}")
            for question in questions:
                with rls.as_user(owner.pk):
                    Memory.objects.filter(owner=owner).delete()
                others = [f for f in data["facts"] if f["id"] not in question["expect"]]
                chosen = [facts[i] for i in question["expect"]] + draw.sample(others, min(args.others, len(others)))
                draw.shuffle(chosen)
                ok, first = found(owner, question, load(owner, chosen))
                hits["sparse"] += ok
                if args.misses and not ok:
                    print(f"  sparse: {question['q']!r} wants {question['expect']}, got {first}")
            n = len(questions)
            for kind in totals:
                totals[kind][0] += hits[kind]
                totals[kind][1] += n
            label = f"{path.stem.removeprefix('paraphrase_needs').strip('_') or 'first owner'} / {name}"
            print(f"{label:<44}{hits['whole']:>10}/{n:<3}{hits['sparse']:>12}/{n:<3}", flush=True)
    print(f"{'every set':<44}" + "".join(f"{hits:>10}/{n:<3} {hits / n:5.1%}" for hits, n in totals.values()))


if __name__ == "__main__":
    main()
