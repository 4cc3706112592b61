"""Does another user's data change how long my keyword search takes? (the full-text timing side channel)

Two users in a bench database: `me` with ME_ROWS memories, `them` with THEIR_ROWS memories that all contain one
word (absent from mine). `me` searches (keyword mode, under row-level security as a request runs) for that word
and for a word nobody has; the two medians should be the same when nothing leaks. Also prints the plan of the
keyword match under RLS (is the full-text index used, and on what).

    .venv/bin/python bench/fts_side_channel.py [--rounds 200]
"""

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import setup_django, wipe_users  # noqa: E402

ME_ROWS, THEIR_ROWS = 20_000, 50_000  # with 20k rows of mine the planner uses the full-text index
COMMON, NOWHERE = "zanzibar", "quokka"


def populate() -> tuple[object, object]:
    from django.contrib.auth import get_user_model

    from memories.models import Memory

    wipe_users("fts-")
    User = get_user_model()
    me, them = User.objects.create(username="fts-me"), User.objects.create(username="fts-them")
    mine = [Memory(owner=me, content=f"Note {i}: prefers tea, walks the dog at {i % 24} o'clock", key=f"n{i}",
                   indexed=False) for i in range(ME_ROWS)]
    theirs = [Memory(owner=them, content=f"Trip {i} to {COMMON} with {COMMON} friends", key=f"t{i}", indexed=False)
              for i in range(THEIR_ROWS)]
    for batch in (mine, theirs):
        Memory.objects.bulk_create(batch, batch_size=5000)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE memories_memory")
    return me, them


def timed_search(owner, word: str, rounds: int) -> float:
    from core import rls
    from memories.search import memory_search

    times = []
    with rls.as_user(owner.pk):
        for _ in range(rounds):
            start = time.perf_counter()
            memory_search(owner=owner, query=word, mode="keyword", limit=20)
            times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def plan(owner, word: str) -> str:
    """EXPLAIN ANALYZE of the search's own statement (captured as it runs), under RLS as `owner`."""
    from django.db import connection, transaction

    from core import rls
    from memories.search import memory_search

    statements = []

    def capture(execute, sql, params, many, context):
        if "kwm" in sql:
            statements.append((sql, params))
        return execute(sql, params, many, context)

    with rls.as_user(owner.pk):
        with connection.execute_wrapper(capture):
            memory_search(owner=owner, query=word, mode="keyword", limit=20)
        sql, params = statements[0]
        with transaction.atomic(), connection.cursor() as cursor:
            cursor.execute(f"EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) {sql}", params)
            lines = [row[0] for row in cursor.fetchall()]
    return "\n".join(line for line in lines if "kwm" in line or "Index" in line or "Heap" in line
                     or "Filter" in line or "Scan" in line)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=200)
    args = parser.parse_args()
    setup_django("memento_bench_fts")
    print(f"load average at start: {os.getloadavg()[0]:.2f} (2 cores, shared with other engineers' runs)")
    me, _ = populate()
    for word in (COMMON, NOWHERE):  # warm the caches
        timed_search(me, word, 20)
    common = timed_search(me, COMMON, args.rounds)
    nowhere = timed_search(me, NOWHERE, args.rounds)
    print(f"me: {ME_ROWS} rows; them: {THEIR_ROWS} rows, each with {COMMON!r}; {args.rounds} keyword searches each")
    print(f"  median {COMMON!r} (common in their data): {common:.2f} ms")
    print(f"  median {NOWHERE!r} (in nobody's data):    {nowhere:.2f} ms")
    print(f"  difference: {common - nowhere:+.2f} ms ({common / nowhere:.2f}x); load average {os.getloadavg()[0]:.2f}")
    print(f"plan of my match for {COMMON!r} under RLS:\n{plan(me, COMMON)}")
    wipe_users("fts-")


if __name__ == "__main__":
    main()
