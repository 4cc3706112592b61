"""Search latency with query embedding included, Memento's search service next to LangGraph's PostgresStore, on
the same LoCoMo turns, the same model (all-MiniLM-L6-v2) and the same server, in one run.

    .venv/bin/pip install -r bench/requirements.txt     # langgraph-checkpoint-postgres, psycopg-pool
    .venv/bin/python bench/locomo_recall.py             # once: loads the LoCoMo users into memento_bench
    .venv/bin/python bench/search_vs_langgraph.py [--questions 0] [--set all|first|last]

Memento: `memory_search` as the conversation's user (row-level security on, limit 10), embedding the question
itself through its configured runtime (EMBEDDING_RUNTIME: ONNX Runtime by default), in hybrid and in semantic mode.
PostgresStore: LangGraph's own store in a database of its own on the same embedded PostgreSQL, one namespace per
conversation, `content` indexed ("speaker: text", as Memento stores it), `search(namespace, query=..., limit=10)`;
its `embed` is the same model twice over: on torch (sentence-transformers, as LangChain's HuggingFace embeddings
run it) and on the ONNX Runtime path Memento uses, so the search engines can be compared with equal embedding
cost. The store is loaded with the vectors Memento already holds for the same texts (no second embedding pass).

Every question is asked once per system (distinct questions; Memento's per-process query cache is cleared before
each of its searches, so it embeds every question as PostgresStore does), and the systems take turns question by
question in a rotating order: the load other work puts on this 2-core machine falls on all of them alike. Also
prints each system's Recall@10 on LoCoMo's evidence turns.
LoCoMo is read from ../shared/bench/locomo10.json (never copied into this repository).
"""

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import bench_database_url, describe, progress, setup_django  # noqa: E402
from bench.locomo_recall import DEFAULT_PATH, load_dataset, load_memories  # noqa: E402

STORE_DATABASE = "memento_bench_langgraph_locomo"
LIMIT = 10


def load_store(store, turns, vectors_by_text: dict) -> None:
    """Every turn as a PostgresStore item, namespace ("locomo", sample id), unless already there."""
    from langgraph.store.base import PutOp

    loaded = {ns[1]: len(store.search(ns, limit=10_000)) for ns in (("locomo", s) for s in turns)}
    if all(loaded[s] == len(t) for s, t in turns.items()):
        print("reusing the PostgresStore items already loaded", file=sys.stderr)
        return
    ops = [PutOp(("locomo", sample), turn.dia_id, {"content": f"{turn.speaker}: {turn.text}", "dia_id": turn.dia_id})
           for sample, sample_turns in turns.items() for turn in sample_turns]
    for start in progress(range(0, len(ops), 500), desc="PostgresStore"):
        store.batch(ops[start : start + 500])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=0, help="at most this many (0: all distinct questions)")
    parser.add_argument("--set", choices=("all", "first", "last"), default="all")
    args = parser.parse_args()

    turns, questions, _ = load_dataset(DEFAULT_PATH)
    if args.set != "all":
        samples = list(turns)[:5] if args.set == "first" else list(turns)[5:]
        questions = [q for q in questions if q.sample_id in samples]
    setup_django()
    import psycopg
    from django.conf import settings
    from langgraph.store.postgres import PostgresStore

    from core import rls
    from integrations import embeddings
    from memories.models import Memory
    from memories.search import memory_search
    from memories.search.query import _query_vector

    users = load_memories(turns, reuse=True)
    memento_provider = embeddings.get_provider()
    torch_provider = embeddings.LocalProvider(settings.EMBEDDING_MODEL, settings.EMBEDDING_BATCH_SIZE)
    rls.activate(None, bypass=True)
    stored = dict(Memory.objects.filter(owner__in=users.values()).values_list("content", "embedding"))
    rls.reset()

    def stored_vectors(texts):  # loading only: the vectors Memento holds for the same texts
        return [list(stored[t]) if t in stored else torch_provider.embed([t])[0] for t in texts]

    url = bench_database_url(STORE_DATABASE)
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    index = {"dims": 384, "embed": stored_vectors, "fields": ["content"]}
    with PostgresStore.from_conn_string(url, index=index) as loader:
        loader.setup()
        load_store(loader, turns, stored)

    seen, asked = set(), []
    for q in questions:
        if (q.sample_id, q.text) not in seen:
            seen.add((q.sample_id, q.text))
            asked.append(q)
    if args.questions:
        asked = asked[: args.questions]

    def memento(mode):
        def search(q):
            owner = users[q.sample_id]
            _query_vector.cache_clear()  # every system embeds every question
            with rls.as_user(owner.pk):  # as a request runs it (not timed: the request binds it once)
                started = time.perf_counter()
                result = memory_search(owner=owner, query=q.text, mode=mode, limit=LIMIT,
                                       threshold=0.0 if mode == "semantic" else None)
                elapsed = time.perf_counter() - started
            return elapsed, [r.memory.metadata["dia_id"] for r in result.results]
        return search

    def langgraph(store):
        def search(q):
            started = time.perf_counter()
            items = store.search(("locomo", q.sample_id), query=q.text, limit=LIMIT)
            return time.perf_counter() - started, [item.value["dia_id"] for item in items]
        return search

    runtime = getattr(memento_provider, "runtime", "torch")
    with PostgresStore.from_conn_string(url, index={"dims": 384, "embed": torch_provider.embed,
                                                    "fields": ["content"]}) as lg_torch, \
            PostgresStore.from_conn_string(url, index={"dims": 384, "embed": memento_provider.embed,
                                                       "fields": ["content"]}) as lg_same:
        systems = {
            f"Memento hybrid ({runtime})": memento("hybrid"),
            f"Memento semantic ({runtime})": memento("semantic"),
            "PostgresStore (torch)": langgraph(lg_torch),
            f"PostgresStore ({runtime})": langgraph(lg_same),
        }
        warm = [q for q in questions if q not in asked][:20] or asked[:20]
        for search in systems.values():  # models loaded, connections and plans warm
            for q in warm:
                search(q)
        samples = {name: [] for name in systems}
        recall = {name: [] for name in systems}
        names = list(systems)
        for i, q in enumerate(progress(asked, desc="searching", unit="question")):
            for name in names[i % len(names):] + names[: i % len(names)]:
                elapsed, found = systems[name](q)
                samples[name].append(elapsed)
                recall[name].append(len(set(q.evidence) & set(found)) / len(q.evidence))

    import os

    load = os.getloadavg()
    print(f"\nLoCoMo ({args.set} conversations): {len(asked)} distinct questions, {sum(map(len, turns.values()))} "
          f"turns, limit {LIMIT}; query embedding included (all-MiniLM-L6-v2 on the CPU); systems interleaved "
          f"question by question; load average at the end {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f}")
    for name in names:
        r10 = sum(recall[name]) / len(recall[name])
        print(f"  {name:32} {describe(samples[name])}  R@10 {r10:.3f}")


if __name__ == "__main__":
    main()
