"""Re-embedding throughput and search latency during a model switch (memento.reembed, issue 31).

Loads memories, conversation messages, document chunks and store items embedded by the local model, then
switches every table to a second model (the local model's vectors turned by a fixed rotation: the same cost per
text as the local model, vectors no search could compare with the old ones) with `reembed_all`, in a thread, while
this thread searches the memories as fast as it can. Prints the rows per second of each table and the hybrid
search's p50/p95 before, during and after the switch (query embedding included: each query text is new).

    .venv/bin/python bench/reembed.py [--memories 3000] [--messages 3000] [--chunks 600] [--items 300]
                                      [--batch-size 256]

Its own database (memento_bench_reembed); the bench users are wiped at the start. Both threads share this
process (its GIL, its connection pool of one connection each), on a shared 2-core machine: the load average is
printed."""

import argparse
import os
import sys
import threading
import time
import uuid
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import describe, setup_django, wipe_users  # noqa: E402
from bench.ingest import make_texts  # noqa: E402

PREFIX = "bench-reembed-"
TARGET = "bench-rotated"
USERS = 10


class Rotated:
    """The local model's vectors times a fixed orthogonal matrix (a second model of the same cost)."""

    def __init__(self, local: str):
        from integrations import embeddings

        self.embeddings, self.local = embeddings, local
        self.rotation, _ = np.linalg.qr(np.random.default_rng(31).normal(size=(384, 384)))
        self.model_name = TARGET

    def embed(self, texts):
        vectors = np.asarray(self.embeddings.embed_texts(texts, self.local)) @ self.rotation
        return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).tolist()


def load(args) -> list:
    """The bench users and their rows, embedded by the local model; returns the users."""
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from conversations.models import Conversation, Message
    from documents.models import Chunk, Document
    from integrations import embeddings
    from memories.models import EmbeddingSpace, Memory
    from store import ops
    from store.services import store_batch

    wipe_users(PREFIX)
    EmbeddingSpace.objects.all().delete()  # this bench's database: every table back to the configured model
    users = [get_user_model().objects.create_user(f"{PREFIX}{i}") for i in range(USERS)]
    texts = make_texts(args.memories + args.messages + args.chunks, seed=31)
    started = time.perf_counter()
    vectors = embeddings.embed_texts(texts)
    print(f"embedded {len(texts)} texts to load in {time.perf_counter() - started:.1f} s")
    model = settings.EMBEDDING_MODEL
    rows = list(zip(texts, vectors, strict=True))
    a, b = args.memories, args.memories + args.messages
    Memory.objects.bulk_create(
        [Memory(owner=users[i % USERS], key=str(uuid.uuid4()), content=text, embedding=vector, embedding_model=model)
         for i, (text, vector) in enumerate(rows[:a])], batch_size=500)
    conversations = [Conversation.objects.create(owner=user, title="bench") for user in users]
    Message.objects.bulk_create(
        [Message(conversation=conversations[i % USERS], owner=users[i % USERS], role="user", content=text,
                 sequence=i + 1, embedding=vector, embedding_model=model, extraction_status="skipped")
         for i, (text, vector) in enumerate(rows[a:b])], batch_size=500)
    documents = [Document.objects.create(owner=user, file="documents/bench.txt", filename="bench.txt")
                 for user in users]
    Chunk.objects.bulk_create(
        [Chunk(document=documents[i % USERS], owner=users[i % USERS], content=text, chunk_index=i,
               embedding=vector, embedding_model=model)
         for i, (text, vector) in enumerate(rows[b:])], batch_size=500)
    items = make_texts(args.items, seed=32)
    for user in users:
        store_batch(owner=user, batch=[
            ops.Put(namespace=("bench",), key=f"k{i}", value={"title": text, "tags": [text[:20]]},
                    index=["title", "tags[*]"], ttl=None)
            for i, text in enumerate(items) if i % USERS == users.index(user)])
    return users


def searches(users, queries: list[str], stop: threading.Event | None, count: int) -> list[float]:
    """Hybrid searches (each query text once: its embedding is timed too) until `stop` or `count` of them."""
    from django.db import connection

    from memories.search import memory_search

    timings = []
    i = 0
    while (stop is None and i < count) or (stop is not None and not stop.is_set() and i < len(queries)):
        started = time.perf_counter()
        memory_search(owner=users[i % len(users)], query=queries[i], mode="hybrid", limit=10)
        timings.append(time.perf_counter() - started)
        i += 1
    connection.close()
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--memories", type=int, default=3000)
    parser.add_argument("--messages", type=int, default=3000)
    parser.add_argument("--chunks", type=int, default=600)
    parser.add_argument("--items", type=int, default=300)
    parser.add_argument("--batch-size", type=int, default=256)
    args = parser.parse_args()
    setup_django("memento_bench_reembed")
    from django.conf import settings

    from integrations import embeddings
    from memento import reembed
    from memories import spaces

    users = load(args)
    spaces.record_models()
    local = settings.EMBEDDING_MODEL
    embeddings.register_provider(TARGET, Rotated(local))
    queries = [f"{text}?" for text in make_texts(20_000, seed=33)]
    before = searches(users, queries[:200], None, 200)

    settings.EMBEDDING_MODEL = TARGET
    spans: dict[str, list[float]] = {}

    def begin(table, total):
        spans[table.space] = [time.perf_counter(), 0.0, total]

    def advance(table, n):
        spans[table.space][1] = time.perf_counter()  # the table's switch follows its last batch

    done: dict = {}
    stop = threading.Event()

    def run():
        try:
            done.update(reembed.reembed_all(batch_size=args.batch_size, begin=begin, advance=advance))
        finally:
            stop.set()
            from django.db import connection

            connection.close()

    worker = threading.Thread(target=run)
    started = time.perf_counter()
    worker.start()
    during = searches(users, queries[200:], stop, len(queries) - 200)
    worker.join()
    total = time.perf_counter() - started
    after = searches(users, queries[-200:], None, 200)

    print(f"load average {os.getloadavg()[0]:.1f}; batch size {args.batch_size}")
    for space, (first, last, _total) in spans.items():
        seconds = max(last - first, 1e-9)
        rate = done.get(space, 0) / seconds
        print(f"  {space:9s} {done.get(space, 0):6d} rows in {seconds:6.1f} s: {rate:7.1f} rows/s "
              f"(its switch not included)")
    print(f"  all tables: {sum(done.values())} rows in {total:.1f} s (the four switches included)")
    print(f"search (hybrid, query embedded) before: {describe(before)}")
    print(f"search during the switch ({len(during)} searches): {describe(during)}")
    print(f"search after: {describe(after)}")


if __name__ == "__main__":
    main()
