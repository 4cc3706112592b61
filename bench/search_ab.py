"""Memory search of this checkout against an earlier commit's, interleaved call by call in one process on the same
LoCoMo users (bench/locomo_recall.py loads them), query vectors given: a before/after that the machine's load
cannot tilt, since both see the same moments.

    .venv/bin/python bench/search_ab.py --base 6e80914 [--conversations conv-26,conv-30,conv-41]

The base's memories/search/{query,sql,ranking}.py are read with `git show` into a temporary package and imported
beside the current ones (dates.py and the selectors' filters are shared); the database, models and the rest are this
checkout's.
"""

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import setup_django  # noqa: E402
from bench.locomo_recall import DEFAULT_PATH, USER_PREFIX, load_dataset  # noqa: E402


def base_search(base: str):
    """memory_search as it was at commit `base`, as a module of a temporary package."""
    package = Path(tempfile.mkdtemp(prefix="memento-ab-")) / "basesearch"
    package.mkdir()
    (package / "__init__.py").write_text("")
    for name in ("query", "sql", "ranking"):
        source = subprocess.run(["git", "show", f"{base}:memories/search/{name}.py"], cwd=ROOT, check=True,
                                capture_output=True, text=True).stdout
        for module in ("query", "sql", "ranking"):
            source = source.replace(f"from memories.search.{module} ", f"from basesearch.{module} ")
        (package / f"{name}.py").write_text(source)
    sys.path.insert(0, str(package.parent))
    from basesearch.query import memory_search

    return memory_search


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base", required=True, help="the commit to compare with")
    parser.add_argument("--conversations", default="conv-26,conv-30,conv-41")
    args = parser.parse_args()
    samples = args.conversations.split(",")
    _, questions, _ = load_dataset(DEFAULT_PATH)
    questions = [q for q in questions if q.sample_id in samples]
    setup_django(migrate=False)
    from django.contrib.auth import get_user_model

    from core import rls
    from integrations.embeddings import embed_texts
    from memories.models import Memory
    from memories.search import memory_search

    users = {u.username: u for u in get_user_model().objects.filter(username__startswith=USER_PREFIX)}
    sizes = [Memory.objects.filter(owner=users[USER_PREFIX + s]).count() for s in samples]
    vectors = embed_texts([q.text for q in questions])
    searches = {args.base: base_search(args.base), "this checkout": memory_search}
    print(f"{len(questions)} LoCoMo questions of {', '.join(samples)} ({', '.join(map(str, sizes))} memories), "
          f"limit 10, query vectors given, as the user; the two interleaved call by call")
    for mode in ("hybrid", "semantic", "keyword"):
        timings: dict[str, list[float]] = {name: [] for name in searches}
        for i, (question, vector) in enumerate(zip(questions, vectors, strict=True)):
            owner = users[USER_PREFIX + question.sample_id]
            with rls.as_user(owner.pk):
                for name in list(searches)[:: 1 if i % 2 else -1]:
                    started = time.perf_counter()
                    searches[name](owner=owner, query=question.text, mode=mode, limit=10, query_vector=vector,
                                   threshold=0 if mode == "semantic" else None)
                    if i >= 20:  # the first ones warm caches and plans
                        timings[name].append((time.perf_counter() - started) * 1000)
        for name, values in timings.items():
            values.sort()
            print(f"  {mode:8} {name:15} p50 {statistics.median(values):5.1f} ms  "
                  f"p95 {values[int(len(values) * 0.95)]:5.1f} ms  (n={len(values)})")


if __name__ == "__main__":
    main()
