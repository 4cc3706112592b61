"""EXPLAIN (ANALYZE, BUFFERS) of the candidates' statement (memories.search.sql.candidates) of a large owner's
searches, as the search service runs it: the statement is captured with `connection.execute_wrapper` inside the
search's own transaction (so the HNSW settings `search_start` made are in force) and explained there, as the user
(row-level security on). Uses the data bench/search_latency.py loaded.

    .venv/bin/python bench/search_explain.py [--memories 1000000] [--queries 40] [--mode hybrid] [--show 2]

Prints the plans of the first `--show` queries, then per plan node kind the median time and shared buffers
over all queries (a node's time includes its children's)."""

import argparse
import random
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import setup_django  # noqa: E402
from bench.search_latency import PREFIX, QUERIES, SIZES  # noqa: E402


def walk(node, found, path="") -> None:
    """Each node's time (x loops) and shared buffers, keyed by its path of node labels."""
    label = " ".join(filter(None, [node.get("Subplan Name"), node["Node Type"], node.get("CTE Name"),
                                   node.get("Index Name")]))
    key = f"{path}/{label}"
    found[key].append((node["Actual Total Time"] * node.get("Actual Loops", 1),
                       node.get("Shared Hit Blocks", 0) + node.get("Shared Read Blocks", 0)))
    for child in node.get("Plans", []):
        walk(child, found, key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=1_000_000)
    parser.add_argument("--queries", type=int, default=40)
    parser.add_argument("--mode", default="hybrid")
    parser.add_argument("--show", type=int, default=2)
    args = parser.parse_args()
    setup_django(SIZES[args.memories][2], migrate=False)
    from django.contrib.auth import get_user_model
    from django.db import connection

    from bench.ingest import MONTHS, PEOPLE, PLACES, THINGS
    from core import rls
    from integrations.embeddings import get_provider
    from memories.search import memory_search

    heavy = get_user_model().objects.get(username=f"{PREFIX}heavy")
    rng = random.Random(9)
    queries = [rng.choice(QUERIES).format(p=rng.choice(PEOPLE), c=rng.choice(PLACES), t=rng.choice(THINGS),
                                          m=rng.choice(MONTHS)) for _ in range(args.queries)]
    vectors = get_provider().embed(queries)
    plans: list[dict] = []

    def explain(execute, sql, params, many, context):
        result = execute(sql, params, many, context)
        if sql.startswith("WITH") and ("kwm AS MATERIALIZED" in sql or "sem AS MATERIALIZED" in sql):
            with connection.cursor() as cursor:  # a cursor of its own: the caller still fetches from the first
                cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) {sql}", params)
                plans.append(cursor.fetchone()[0][0])
        return result

    def search(query, vector):
        memory_search(owner=heavy, query=query, mode=args.mode, limit=10,
                      threshold=0 if args.mode == "semantic" else None, query_vector=vector)

    with rls.as_user(heavy.pk):
        for query, vector in zip(queries, vectors, strict=True):  # warm
            search(query, vector)
        with connection.execute_wrapper(explain):
            for query, vector in zip(queries, vectors, strict=True):
                search(query, vector)
    for query, plan in list(zip(queries, plans, strict=True))[: args.show]:
        print(f"--- {query!r}: {plan['Execution Time']:.1f} ms")
        print(_text(plan["Plan"]))
    found: dict = defaultdict(list)
    for plan in plans:
        walk(plan["Plan"], found)
    print(f"\n{len(plans)} statements ({args.mode}), execution median "
          f"{statistics.median(p['Execution Time'] for p in plans):.1f} ms, planning median "
          f"{statistics.median(p['Planning Time'] for p in plans):.1f} ms; per node: median ms, median buffers")
    for key, values in found.items():
        print(f"  {statistics.median(v[0] for v in values):7.2f} ms {statistics.median(v[1] for v in values):8.0f}"
              f"  {key}")


def _text(node, depth=0) -> str:
    line = (f"{'  ' * depth}{node['Node Type']} {node.get('CTE Name', '')} {node.get('Index Name', '')} "
            f"rows={node.get('Actual Rows')} loops={node.get('Actual Loops')} "
            f"time={node.get('Actual Total Time')} ms buffers={node.get('Shared Hit Blocks', 0)}"
            f"+{node.get('Shared Read Blocks', 0)}r")
    return "\n".join([line, *(_text(child, depth + 1) for child in node.get("Plans", []))])


if __name__ == "__main__":
    main()
