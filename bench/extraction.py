"""Extraction pipeline speed: messages per second through the local extractor, and the time from
`POST /api/conversations/{id}/messages/` to the memory being findable by search, with a real worker running.

    .venv/bin/python bench/extraction.py [--messages 5000] [--latency-messages 60] [--brokers postgres,redis]

1. Extractor alone: `extract_local` over a mix of statements worth remembering, questions and small talk (the
   rule engine, no database).
2. Whole extraction service in this process (`message_extract`: extract, embed, reconcile, write with history),
   one message at a time as the worker runs it.
3. End to end: a real `celery -A memento worker` process; messages posted one at a time through the REST API;
   the clock stops when a hybrid search for the stated fact returns the new memory. Run once per broker: kombu's
   SQLAlchemy transport on the same PostgreSQL (the default, no extra service) and Redis (a throw-away
   redis-server, when installed).

Works in its own database (memento_bench_extraction) on the app's PostgreSQL server.
"""

import argparse
import os
import random
import statistics
import subprocess
import sys
import threading
import time
from contextlib import ExitStack
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import percentile, progress, setup_django, wipe_users  # noqa: E402

USER = "bench-extraction"
DATABASE = "memento_bench_extraction"

FOODS = ["peanuts", "shellfish", "gluten", "lactose", "sesame", "kiwi", "soy", "eggs", "mustard", "celery"]
CITIES = ["Berlin", "Lisbon", "Osaka", "Toronto", "Nairobi", "Oslo", "Lima", "Hanoi", "Quito", "Dublin"]
LANGS = ["Python", "Rust", "Go", "Kotlin", "Haskell", "Elixir", "Scala", "Julia", "Swift", "Clojure"]
NAMES = ["Emma", "Noah", "Mia", "Liam", "Zoe", "Omar", "Ines", "Kai", "Lena", "Ravi"]
STATEMENTS = [
    "I'm allergic to {food}.",
    "Remember that my locker code is {n}.",
    "I live in {city} now.",
    "I switched to {lang} last year.",
    "My daughter {name} starts school in May.",
    "I prefer tea over coffee in the morning, and I never eat {food}.",
    "My goal is to run a marathon in {city} next spring.",
    "I work as a nurse at the hospital in {city}.",
]
CHATTER = [
    "What's the weather like today?",
    "Thanks, that helps a lot!",
    "Can you explain how recursion works?",
    "ok",
    "Haha, nice one.",
]


def messages(count: int, seed: int = 7) -> list[str]:
    """Two statements for every question or bit of small talk, as in a chat with an assistant."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        if i % 3 == 2:
            out.append(rng.choice(CHATTER))
        else:
            out.append(rng.choice(STATEMENTS).format(
                food=rng.choice(FOODS), city=rng.choice(CITIES), lang=rng.choice(LANGS), name=rng.choice(NAMES),
                n=rng.randint(1000, 9999)))
    return out


def start_worker(database_url: str, broker: str) -> subprocess.Popen:
    env = {**os.environ, "DATABASE_URL": database_url, "CELERY_BROKER_URL": broker}
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "memento", "worker", "--pool", "solo", "--loglevel", "INFO",
         "--without-gossip", "--without-mingle", "--without-heartbeat"],
        cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line and process.poll() is not None:
            raise SystemExit("the worker exited before it was ready")
        if " ready." in line:
            break
    process.log = []
    threading.Thread(target=lambda: [process.log.append(line) for line in process.stdout], daemon=True).start()
    return process


def use_broker(url: str) -> None:
    """Point this process's Celery app (what `.delay()` in the view uses) at `url`."""
    import kombu.pools

    from memento.celery import app

    app.conf.broker_url = url
    app.conf.broker_transport_options = {} if url.startswith("sqla+") else {"polling_interval": 0.2}
    kombu.pools.reset()
    app._pool = None
    app.amqp._producer_pool = None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=5000, help="messages through the extractor alone")
    parser.add_argument("--service-messages", type=int, default=300, help="messages through the whole service")
    parser.add_argument("--latency-messages", type=int, default=60, help="messages posted per broker")
    parser.add_argument("--brokers", default="postgres,redis")
    args = parser.parse_args()

    database_url = setup_django(DATABASE)
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from rest_framework.test import APIClient

    import extraction
    from accounts.services import token_create
    from conversations import processing, services
    from conversations.models import Conversation, Message
    from memories.models import Memory
    from memories.search import memory_search

    wipe_users(USER)
    user = get_user_model().objects.create(username=USER)

    # 1. the rule engine alone
    texts = messages(args.messages)
    extraction.extract_local(texts[0])  # compile the patterns
    started = time.perf_counter()
    produced = sum(len(extraction.extract_local(text, role="user")) for text in texts)
    alone = time.perf_counter() - started
    print(f"model: {settings.EMBEDDING_MODEL} ({settings.EMBEDDING_PROVIDER}), CPUs: {os.cpu_count()}")
    print(f"\nlocal extractor alone: {len(texts)} messages, {produced} candidate memories, "
          f"{len(texts) / alone:,.0f} messages/s ({alone * 1e6 / len(texts):.0f} us per message)")

    # 2. the whole service, in process, one message at a time (the worker's unit of work)
    conversation = Conversation.objects.create(owner=user, title="bench service")
    service_texts = messages(args.service_messages, seed=8)
    rows = services.messages_append(conversation=conversation,
                                    messages=[{"role": "user", "content": t} for t in service_texts[:5]])
    for row, _ in rows:  # warm: model loaded, queries prepared
        processing.message_extract(message_id=row.pk)
    from conversations import tasks

    sent = tasks.extract_message.delay
    tasks.extract_message.delay = lambda *a, **k: None  # this part runs the service itself: queue nothing
    try:
        rows = services.messages_append(conversation=conversation,
                                        messages=[{"role": "user", "content": t} for t in service_texts])
    finally:
        tasks.extract_message.delay = sent
    started = time.perf_counter()
    for row, _ in progress(rows, desc="service", unit="msg"):
        processing.message_extract(message_id=row.pk)
    whole = time.perf_counter() - started
    memories = Memory.objects.filter(owner=user).count()
    print(f"whole extraction service (extract + embed + reconcile + write, one message per transaction): "
          f"{len(rows) / whole:,.1f} messages/s ({whole * 1000 / len(rows):.1f} ms per message; "
          f"{memories} memories stored)")

    # 3. POST -> searchable, with a real worker
    token = token_create(user=user, name="bench")
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {token.key}")
    from tests.redis_server import redis_server

    for broker_name in [b.strip() for b in args.brokers.split(",") if b.strip()]:
        redis = ExitStack()
        if broker_name == "redis":
            broker = redis.enter_context(redis_server())
            if broker is None:
                print("\nredis: skipped (redis-server not installed)")
                continue
        else:
            broker = "sqla+" + database_url.replace("postgresql://", "postgresql+psycopg://", 1)
        use_broker(broker)
        worker = start_worker(database_url, broker)
        try:
            cid = client.post("/api/conversations/", {"title": f"bench {broker_name}"}, format="json").json()["id"]
            latencies = []
            rng = random.Random(11)
            for i in progress(range(args.latency_messages + 3), desc=f"POST -> searchable ({broker_name})"):
                code = f"{rng.randint(10**7, 10**8 - 1)}"
                text = f"Remember that my locker code at the {rng.choice(CITIES)} gym is {code}."
                started = time.perf_counter()
                response = client.post(f"/api/conversations/{cid}/messages/",
                                       {"messages": [{"role": "user", "content": text}]}, format="json")
                assert response.status_code == 201, response.content
                message_id = response.json()[0]["id"]
                deadline = started + 60
                while True:
                    status = Message.objects.filter(pk=message_id).values_list("extraction_status", flat=True)[0]
                    if status == Message.Extraction.DONE and any(
                        code in hit.memory.content for hit in memory_search(owner=user, query=f"locker code {code}",
                                                                             limit=5).results
                    ):
                        break
                    if status == Message.Extraction.FAILED or time.perf_counter() > deadline:
                        raise SystemExit(f"message {message_id} was not extracted ({status}); the worker's log "
                                         "ends:\n" + "".join(worker.log[-40:]))
                    time.sleep(0.01)
                if i >= 3:  # the first few warm the worker up
                    latencies.append(time.perf_counter() - started)
            print(f"\nPOST messages -> memory found by hybrid search, broker {broker_name} "
                  f"({len(latencies)} messages, one at a time, polled every 10 ms):")
            p50, p95 = statistics.median(latencies) * 1000, percentile(latencies, 95) * 1000
            print(f"  p50 {p50:.0f} ms, p95 {p95:.0f} ms, max {max(latencies) * 1000:.0f} ms")
        finally:
            worker.terminate()
            worker.wait(timeout=30)
            redis.close()
    from kombu.transport.sqlalchemy import Channel

    for engine, _ in Channel._engines.values():
        engine.dispose()
    wipe_users(USER)


if __name__ == "__main__":
    main()
