"""LangGraph store latency: Memento through the adapter (MementoStore -> HTTP -> gunicorn) next to LangGraph's
own PostgresStore (in this process, on the same embedded PostgreSQL server, in a database of its own), on the
same data and with the same embedding model (all-MiniLM-L6-v2, the `content` field indexed).

    .venv/bin/pip install -r bench/requirements.txt   # langgraph-checkpoint-postgres
    .venv/bin/python bench/store.py [--items 2000] [--samples 200]

Both stores get the same items (generated sentences with a number and a group), then, one call at a time:
put (an upsert of an existing item: its text is embedded again), get, search with a query (limit 10), and
search with a filter and no query, the two stores' calls interleaved. Prints p50/p95/p99 per operation and
store. Both embed with the same code and model: PostgresStore in this process, Memento in its web process (so
Memento's figures include an HTTP round trip, authentication and row-level security).
"""

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "clients" / "python"))

from bench.common import bench_database_url, describe, gunicorn, progress, setup_django, wipe_users  # noqa: E402
from bench.ingest import MONTHS, PEOPLE, PLACES, THINGS, make_texts  # noqa: E402
from bench.search_latency import QUERIES  # noqa: E402

PREFIX = "bench-store-"
NAMESPACE = ("bench", "notes")


def value(i: int, text: str) -> dict:
    return {"content": text, "n": i, "group": f"g{i % 10}"}


def timed(samples: list[float], call, *args, **kwargs) -> None:
    started = time.perf_counter()
    call(*args, **kwargs)
    samples.append(time.perf_counter() - started)


def measure(stores: dict, texts: list[str], queries: list[str], samples: int) -> dict[str, dict[str, list]]:
    """The same calls on every store, interleaved call by call (the machine's load moves during a run; each
    store sees the same moments). Every search query is a different text: nothing is served from a cache."""
    rng = random.Random(3)
    out = {name: {"put": [], "get": [], "search (query)": [], "search (filter)": []} for name in stores}
    for store in stores.values():  # warm: connections, the model, caches
        for q in range(10):
            store.search(NAMESPACE, query=f"warm-up question number {q}", limit=10)
            store.get(NAMESPACE, f"k{rng.randrange(len(texts))}")
    for s in range(samples):
        i = rng.randrange(len(texts))
        new_value = value(i, texts[(i + s + 1) % len(texts)])
        query = queries[s % len(queries)]
        group = f"g{s % 10}"
        for name, store in stores.items():
            timed(out[name]["put"], store.put, NAMESPACE, f"k{i}", new_value)
            timed(out[name]["get"], store.get, NAMESPACE, f"k{i}")
            timed(out[name]["search (query)"], store.search, NAMESPACE, query=query, limit=10)
            timed(out[name]["search (filter)"], store.search, NAMESPACE, filter={"group": group}, limit=10)
    return out


def load(store, texts: list[str]) -> float:
    from langgraph.store.base import PutOp

    started = time.perf_counter()
    for start in progress(range(0, len(texts), 200), desc=type(store).__name__):
        store.batch([PutOp(NAMESPACE, f"k{i}", value(i, texts[i])) for i in range(start, min(start + 200, len(texts)))])
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=2000)
    parser.add_argument("--samples", type=int, default=200)
    args = parser.parse_args()

    database_url = setup_django("memento_bench_store")
    from django.contrib.auth import get_user_model
    from langgraph.store.postgres import PostgresStore
    from memento_client.langgraph import MementoStore

    from accounts.services import token_create
    from integrations import embeddings

    wipe_users(PREFIX)
    user = get_user_model().objects.create_user(username=f"{PREFIX}user", password="x")
    token = token_create(user=user, name="bench").key
    texts = make_texts(args.items, seed=21)
    rng = random.Random(8)
    queries = list(dict.fromkeys(
        rng.choice(QUERIES).format(p=rng.choice(PEOPLE), c=rng.choice(PLACES), t=rng.choice(THINGS),
                                   m=rng.choice(MONTHS)) for _ in range(20 * args.samples)))[: args.samples]

    def embed(batch: list[str]) -> list[list[float]]:
        return embeddings.embed_texts(batch)  # the model Memento's server runs, in this process

    index = {"dims": 384, "embed": embed, "fields": ["content"]}
    langgraph_url = bench_database_url("memento_bench_langgraph_store")
    import psycopg

    with psycopg.connect(langgraph_url, autocommit=True) as conn:  # a fresh store each run
        conn.execute("DROP TABLE IF EXISTS store_vectors, store, store_migrations, vector_migrations CASCADE")

    with gunicorn(database_url, workers=2, threads=4, env={"MEMORY_LOG_READS": "false"}) as url:
        with MementoStore(url=url, token=token, index={"fields": ["content"]}) as memento, \
                PostgresStore.from_conn_string(langgraph_url, index=index) as postgres:
            postgres.setup()
            loaded = {"Memento (MementoStore over HTTP)": load(memento, texts),
                      "LangGraph PostgresStore": load(postgres, texts)}
            results = measure({"Memento (MementoStore over HTTP)": memento, "LangGraph PostgresStore": postgres},
                              texts, queries, args.samples)

    print(f"\nLangGraph store latency, {args.items} items in one namespace, {args.samples} calls each, one at a "
          f"time (all-MiniLM-L6-v2 on the CPU for both)")
    for name, seconds in loaded.items():
        print(f"  load {args.items} items in batches of 200: {name}: {seconds:.1f} s")
    for operation in ("put", "get", "search (query)", "search (filter)"):
        print(f"\n{operation}:")
        for name, samples in results.items():
            print(f"  {name:34} {describe(samples[operation])}")


if __name__ == "__main__":
    main()
