"""Webhook delivery latency under load, and the delivery success rate with a receiver that fails 30% of calls.

    .venv/bin/python bench/webhooks.py [--users 10] [--rate 10] [--searches 10] [--duration 60] [--fail 0.3]

The app under gunicorn (1 process, 4 threads) and one Celery worker (Redis when redis-server is installed, else
the PostgreSQL broker), in their own database (memento_bench_webhooks), WEBHOOKS_ALLOW_PRIVATE=1 so that a local
receiver (a threaded HTTP server in this process) may be registered. `--users` users each register one endpoint
(every event) through the API; for `--duration` seconds clients POST memories at `--rate` writes/s in all (each
write is one `memory.created` delivery) while others search at `--searches` requests/s. Latency is from the write's
201 reaching the client to the signed POST reaching the receiver (the same clock: both in this process).

Two phases: a receiver that always answers 200 (first-attempt latency), then one that answers 500 to a random
`--fail` share of calls, with retries paced for a bench (WEBHOOKS_RETRY_BACKOFF=1 s, at most 8 s, 8 retries):
delivered / events, the attempts they took, latency to the successful POST, and the deliveries that failed.
"""

import argparse
import json
import logging
import os
import random
import sys
import threading
import time
from contextlib import ExitStack
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import gunicorn, percentile, setup_django, wipe_users  # noqa: E402

DATABASE = "memento_bench_webhooks"
PREFIX = "bench-webhooks-"
PACE = {"WEBHOOKS_ALLOW_PRIVATE": "1", "WEBHOOKS_RETRY_BACKOFF": "1", "WEBHOOKS_RETRY_BACKOFF_MAX": "8",
        "WEBHOOKS_MAX_RETRIES": "8", "WEBHOOKS_DISABLE_AFTER": "100000"}


def _paced(rate: float, duration: float, action, clients: int) -> None:
    """`clients` threads doing `action(rng)` at `rate` per second in all for `duration` seconds."""
    end = time.monotonic() + duration
    interval = clients / rate

    def run(seed: int):
        rng = random.Random(seed)
        due = time.monotonic() + rng.random() * interval
        while due < end:
            time.sleep(max(0.0, due - time.monotonic()))
            action(rng)
            due += interval

    threads = [threading.Thread(target=run, args=(i,)) for i in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def phase(name: str, url: str, keys: list[str], receiver, args) -> None:
    from webhooks.models import Delivery

    receiver.received.clear()
    written: dict[str, float] = {}  # memory id -> when its 201 came back
    errors = []
    lock = threading.Lock()
    serial = iter(range(10**9))

    def write(rng):
        key = rng.choice(keys)
        with httpx.Client(base_url=url, headers={"Authorization": f"Token {key}"}, timeout=60) as http:
            n = next(serial)
            response = http.post("/api/memories/", json={"content": f"{name} note {n}: item {rng.random():.6f}",
                                                         "allow_duplicate": True})
        if response.status_code != 201:
            errors.append(response.status_code)
            return
        with lock:
            written[response.json()["id"]] = time.monotonic()

    def search(rng):
        with httpx.Client(base_url=url, headers={"Authorization": f"Token {rng.choice(keys)}"}, timeout=60) as http:
            http.post("/api/memories/search/", json={"query": "what items are noted?", "limit": 5})

    since = time.time()
    load = [threading.Thread(target=_paced, args=(args.rate, args.duration, write, 4)),
            threading.Thread(target=_paced, args=(args.searches, args.duration, search, 4))]
    for thread in load:
        thread.start()
    for thread in load:
        thread.join()
    # wait until every delivery of this phase is finished (or 10 minutes)
    deadline = time.monotonic() + 600
    ours = Delivery.objects.filter(owner__username__startswith=PREFIX, created_at__gte=_aware(since))
    while time.monotonic() < deadline and ours.exclude(status__in=("delivered", "failed")).exists():
        time.sleep(1)
    delivered_at = {}
    for request in receiver.received:
        if 200 <= request.status < 300:
            body = json.loads(request.body)
            delivered_at.setdefault(body["data"]["id"], request.at)
    latencies = [delivered_at[m] - t for m, t in written.items() if m in delivered_at]
    rows = list(ours.values_list("status", "attempts"))
    delivered = [a for s, a in rows if s == "delivered"]
    print(f"\n{name}: {len(written)} writes acknowledged ({len(errors)} errors) in {args.duration} s, "
          f"{len(rows)} deliveries")
    if latencies:
        ms = sorted(x * 1000 for x in latencies)
        print(f"  write acknowledged -> received: p50 {percentile(ms, 50):.0f} ms, p95 {percentile(ms, 95):.0f} ms,"
              f" max {ms[-1]:.0f} ms (n={len(ms)})")
    failed = sum(1 for s, _ in rows if s == "failed")
    print(f"  delivered {len(delivered)}/{len(rows)} ({100 * len(delivered) / max(1, len(rows)):.2f}%), failed "
          f"{failed}, unfinished {len(rows) - len(delivered) - failed}")
    if delivered:
        print(f"  attempts per delivered event: mean {sum(delivered) / len(delivered):.2f}, max {max(delivered)}; "
              f"receiver answered {len(receiver.received)} POSTs, "
              f"{sum(1 for r in receiver.received if r.status >= 500)} of them 500")


def _aware(epoch: float):
    from datetime import UTC, datetime

    return datetime.fromtimestamp(epoch, UTC)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=10)
    parser.add_argument("--rate", type=float, default=10.0, help="memory writes per second (each one event)")
    parser.add_argument("--searches", type=float, default=10.0, help="searches per second beside them")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds of load per phase")
    parser.add_argument("--fail", type=float, default=0.3, help="share of calls the receiver fails in phase 2")
    parser.add_argument("--worker-niceness", type=int, default=None,
                        help="the worker's WORKER_NICENESS (default: the setting's, 10: requests go first)")
    args = parser.parse_args()

    os.environ.update(PACE)
    if args.worker_niceness is not None:
        os.environ["WORKER_NICENESS"] = str(args.worker_niceness)
    database_url = setup_django(DATABASE)
    logging.getLogger("httpx").setLevel(logging.WARNING)  # Django's logging config would print every request
    from django.contrib.auth import get_user_model

    from accounts.services import token_create
    from bench.extraction import start_worker, use_broker
    from tests.redis_server import redis_server
    from tests.webhooks.receiver import start_receiver

    wipe_users(PREFIX)
    redis = ExitStack()
    broker = redis.enter_context(redis_server())
    if broker is None:
        broker = "sqla+" + os.environ["MAINTENANCE_DATABASE_URL"].replace("postgresql://", "postgresql+psycopg://", 1)
    use_broker(broker)
    receiver = start_receiver()
    worker = start_worker(database_url, broker)
    try:
        with gunicorn(database_url, workers=1, threads=4, env={"CELERY_BROKER_URL": broker, **PACE}) as url:
            User = get_user_model()
            keys = [token_create(user=User.objects.create(username=f"{PREFIX}{i:03d}"), name="bench").key
                    for i in range(args.users)]
            for key in keys:
                response = httpx.post(f"{url}/api/webhooks/", json={"url": receiver.url},
                                      headers={"Authorization": f"Token {key}"}, timeout=30)
                assert response.status_code == 201, response.text
            print(f"broker: {broker.split(':')[0]}; {args.users} users, {args.rate}/s writes + {args.searches}/s "
                  f"searches for {args.duration:.0f} s per phase; gunicorn 1x4, one worker (solo pool, nice "
                  f"{os.environ.get('WORKER_NICENESS', 'default')}); load average {os.getloadavg()[0]:.1f}")
            phase("all answered", url, keys, receiver, args)
            rng, lock = random.Random(7), threading.Lock()

            def flaky(n: int) -> int:
                with lock:
                    return 500 if rng.random() < args.fail else 200

            receiver.decide = flaky
            phase(f"{args.fail:.0%} failed", url, keys, receiver, args)
    finally:
        worker.terminate()
        worker.wait(timeout=30)
        receiver.server.shutdown()
        redis.close()
        wipe_users(PREFIX)


if __name__ == "__main__":
    main()
