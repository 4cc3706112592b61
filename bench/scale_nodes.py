"""Scale-out figures (issue 32): web nodes behind a round-robin client, and reads from a streaming replica.

    .venv/bin/python bench/scale_nodes.py nodes   [--rates 20,40,60] [--duration 20] [--p95 250]
    .venv/bin/python bench/scale_nodes.py replica [--rate 20] [--duration 20] [--writes 200]
    .venv/bin/python bench/scale_nodes.py sizes   [--memories 5000] [--messages 5000]

`nodes`: one, then two gunicorn web processes (`serve`'s shape: 1 worker x 4 threads each, one shared Redis cache
from a throw-away redis-server) on one bench database (memento_nodes); at each rate in turn bench/load.py's mix
without appends (no worker runs: reads 25, lists 25, searches 30, writes 15) is sent round-robin over the nodes'
URLs. Prints achieved requests/s and p95 per rate, and the highest rate whose p95 stays under `--p95` ms.

`replica`: a hot standby of the server (pg_basebackup -R with the embedded PostgreSQL's binaries, as
tests/standby.py), then one web process without and one with DATABASE_REPLICA_URLS, each sent the same mix:
search p95 with reads on the primary vs on the standby. Then the replication lag read-your-writes sees: after each
of `--writes` acknowledged writes, how long until the standby's replay position passes the primary's WAL position
read right after the write (polled every millisecond), and how many of the writer's immediate reads the node still
sent to the primary because of it.

`sizes`: bytes per memory and per message with their indexes (and the memory's history rows), from
`pg_total_relation_size` after writing `--memories` memories and `--messages` messages (embedded) through the
services into a database of their own (memento_sizes), 100 owners; the HNSW indexes' bytes per row on their own.

Loopback only and bounded, like bench/load.py; the machine's other load inflates every figure.
"""

import argparse
import itertools
import os
import random
import sys
import threading
import time
from collections import defaultdict
from contextlib import ExitStack
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import gunicorn, percentile, setup_django  # noqa: E402
from bench.load import PEOPLE, QUESTIONS, THINGS, fact, tokens_for  # noqa: E402

DATABASE = "memento_nodes"
PREFIX = "nodes-"
USERS = 40
CLIENTS = 16
MIX = (("read", 25), ("list", 25), ("search", 30), ("write", 15))


class User:
    def __init__(self, token: str, rng: random.Random):
        self.headers = {"Authorization": f"Token {token}"}
        self.rng = rng
        self.acked: list[str] = []

    def op(self, http: httpx.Client, name: str, serial) -> httpx.Response:
        rng = self.rng
        if name == "read" and self.acked:
            return http.get(f"/api/memories/{rng.choice(self.acked)}/", headers=self.headers)
        if name in ("read", "list"):
            return http.get("/api/memories/", params={"page_size": 20}, headers=self.headers)
        if name == "search":
            query = rng.choice(QUESTIONS).format(p=rng.choice(PEOPLE), t=rng.choice(THINGS))
            return http.post("/api/memories/search/", json={"query": query, "limit": 10}, headers=self.headers)
        r = http.post("/api/memories/", json={"content": fact(rng, next(serial)), "allow_duplicate": True},
                      headers=self.headers)
        if r.status_code in (200, 201):
            self.acked.append(r.json()["id"])
        return r


def run_load(urls: list[str], users: list[User], *, rate: float, duration: float) -> dict:
    """The mix at `rate` requests/s for `duration` s from CLIENTS threads, each request to the next URL in turn
    (round robin). Returns {"rate": achieved, "errors": n, op: [latencies]}."""
    clients = [httpx.Client(base_url=url, timeout=30.0) for url in urls]
    turn = itertools.count()
    names = [name for name, share in MIX for _ in range(share)]
    serial = itertools.count(int(time.time() * 1000))
    latencies: dict[str, list[float]] = defaultdict(list)
    errors = [0]
    lock = threading.Lock()
    idle = list(users)
    start = time.perf_counter()
    end, interval = start + duration, CLIENTS / rate

    def loop(k: int) -> None:
        local = random.Random(k)
        due = start + local.random() * interval
        while (now := time.perf_counter()) < end:
            if due > now:
                time.sleep(due - now)
            due = max(due + interval, time.perf_counter())
            name = local.choice(names)
            with lock:
                user = idle.pop(local.randrange(len(idle)))
                http = clients[next(turn) % len(clients)]
            t0 = time.perf_counter()
            try:
                failed = user.op(http, name, serial).status_code >= 400
            except httpx.HTTPError:
                failed = True
            with lock:
                idle.append(user)
                latencies[name].append(time.perf_counter() - t0)
                errors[0] += failed

    threads = [threading.Thread(target=loop, args=(k,), daemon=True) for k in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for client in clients:
        client.close()
    total = sum(len(v) for v in latencies.values())
    return {"rate": total / (time.perf_counter() - start), "errors": errors[0], **latencies}


def p95_ms(samples: list[float]) -> float:
    return percentile([s * 1000 for s in samples], 95) if samples else float("nan")


def prepared_users() -> list[User]:
    rng = random.Random(11)
    return [User(token, random.Random(rng.random())) for token in tokens_for(USERS, PREFIX)]


def warm(urls: list[str], users: list[User]) -> None:
    """Each user gets a few memories and each node loads its model and snapshots (not counted)."""
    run_load(urls, users, rate=10, duration=max(10.0, 2.0 * len(urls)))


def nodes(args) -> None:
    url = setup_django(DATABASE)
    from tests.redis_server import redis_server

    users = prepared_users()
    web_env = {"DJANGO_ALLOWED_HOSTS": "127.0.0.1"}
    print(f"{'nodes':>5} {'target':>7} {'achieved':>9} {'p95 ms':>8} {'search p95':>11} {'errors':>7}")
    best = {}
    with redis_server(database=1) as cache_url:
        if cache_url is None:
            raise SystemExit("redis-server is not installed (apt-get install redis-server)")
        for count in (1, 2):
            with ExitStack() as stack:
                urls = [stack.enter_context(gunicorn(url, workers=1, threads=4, env={**web_env,
                                                                                     "CACHE_URL": cache_url}))
                        for _ in range(count)]
                warm(urls, users)
                for rate in args.rates:
                    result = run_load(urls, users, rate=rate, duration=args.duration)
                    everything = [s for name, _ in MIX for s in result[name]]
                    p95 = p95_ms(everything)
                    print(f"{count:5d} {rate:7.0f} {result['rate']:9.1f} {p95:8.1f} {p95_ms(result['search']):11.1f} "
                          f"{result['errors']:7d}", flush=True)
                    if p95 <= args.p95 and not result["errors"]:
                        best[count] = max(best.get(count, 0.0), result["rate"])
    for count in (1, 2):
        print(f"{count} node(s): highest achieved rate with p95 <= {args.p95:g} ms: {best.get(count, 0.0):.1f} req/s")


def replica(args) -> None:
    url = setup_django(DATABASE)
    from django.db import connection

    from tests.standby import start_standby, stop_standby

    users = prepared_users()
    standby = start_standby()
    try:
        rows = {}
        for label, env in (("primary", {}), ("standby", {"DATABASE_REPLICA_URLS": standby.url()})):
            with gunicorn(url, workers=1, threads=4, env={"DJANGO_ALLOWED_HOSTS": "127.0.0.1", **env}) as base:
                warm([base], users)
                rows[label] = run_load([base], users, rate=args.rate, duration=args.duration)
        print(f"{'reads on':10} {'achieved':>9} {'search p95':>11} {'list p95':>9} {'read p95':>9} {'errors':>7}")
        for label, result in rows.items():
            print(f"{label:10} {result['rate']:9.1f} {p95_ms(result['search']):11.1f} {p95_ms(result['list']):9.1f} "
                  f"{p95_ms(result['read']):9.1f} {result['errors']:7d}")

        # replication lag as read-your-writes sees it
        lags, on_primary = [], 0
        user = users[0]
        with gunicorn(url, workers=1, threads=2, env={"DJANGO_ALLOWED_HOSTS": "127.0.0.1",
                                                      "DATABASE_REPLICA_URLS": standby.url()}) as base, \
                httpx.Client(base_url=base, timeout=30.0) as http, standby.superuser() as watch:
            serial = itertools.count()
            for _ in range(args.writes):
                written = http.post("/api/memories/", json={"content": fact(user.rng, next(serial)),
                                                            "allow_duplicate": True}, headers=user.headers)
                written.raise_for_status()
                acked = time.perf_counter()
                with connection.cursor() as cursor:
                    cursor.execute("SELECT pg_current_wal_lsn()::text")
                    target = cursor.fetchone()[0]
                caught_up = watch.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [target]).fetchone()[0]
                on_primary += not caught_up  # the node's next read of this user goes to the primary
                while not caught_up:
                    time.sleep(0.001)
                    caught_up = watch.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn",
                                              [target]).fetchone()[0]
                lags.append(time.perf_counter() - acked)
        ms = [lag * 1000 for lag in lags]
        print(f"replication lag after a write ({len(ms)} writes): p50 {percentile(ms, 50):.1f} ms, "
              f"p95 {percentile(ms, 95):.1f} ms, max {max(ms):.1f} ms; the standby was behind the write when it was "
              f"acknowledged {on_primary} times of {len(ms)} (those reads went to the primary)")
    finally:
        connection.close()
        stop_standby(standby)


SIZE_TABLES = ("memories_memory", "memories_memoryhistory", "memories_memoryevent", "conversations_message")


def sizes(args) -> None:
    setup_django("memento_sizes")
    from django.contrib.auth import get_user_model
    from django.db import connection

    from bench.common import wipe_users
    from conversations.models import Message
    from conversations.processing import messages_embed_pending
    from conversations.services import conversation_create, messages_append
    from memories.batch import memory_batch_create

    owners = 100
    wipe_users("sizes-")
    Message.objects.filter(owner__username__startswith="sizes-").delete()
    rng = random.Random(5)
    serial = itertools.count()
    for i in range(owners):
        user = get_user_model().objects.create(username=f"sizes-{i:03d}")
        memory_batch_create(owner=user, items=[{"content": fact(rng, next(serial)), "allow_duplicate": True}
                                               for _ in range(args.memories // owners)])
        conversation = conversation_create(owner=user, title="sizes")
        turns = [{"role": "user" if n % 2 else "assistant", "content": fact(rng, next(serial))}
                 for n in range(args.messages // owners)]
        for start in range(0, len(turns), 500):  # 500 a call, as the API takes them
            messages_append(conversation=conversation, messages=turns[start:start + 500])
    while messages_embed_pending():
        pass
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")  # settled sizes, as a database that has run a while
        print(f"{'table':26} {'rows':>8} {'total bytes/row':>16} {'heap+TOAST/row':>15} {'indexes/row':>12} "
              f"{'HNSW/row':>9}")
        for table in SIZE_TABLES:
            cursor.execute(f"SELECT count(*) FROM {table}")  # noqa: S608 (a constant name)
            rows = cursor.fetchone()[0]
            cursor.execute("SELECT pg_total_relation_size(%s), pg_table_size(%s), pg_indexes_size(%s), "
                           "coalesce((SELECT sum(pg_relation_size(i.indexrelid)) FROM pg_index i "
                           "JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam "
                           "WHERE i.indrelid = %s::regclass AND a.amname = 'hnsw'), 0)",
                           [table, table, table, table])
            total, heap, indexes, hnsw = cursor.fetchone()
            total, heap, indexes, hnsw = (n / rows if rows else float("nan") for n in (total, heap, indexes, hnsw))
            print(f"{table:26} {rows:8d} {total:16.0f} {heap:15.0f} {indexes:12.0f} {hnsw:9.0f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    n = sub.add_parser("nodes")
    n.add_argument("--rates", default="20,40,60", type=lambda s: [float(r) for r in s.split(",")])
    n.add_argument("--duration", type=float, default=20.0)
    n.add_argument("--p95", type=float, default=250.0)
    r = sub.add_parser("replica")
    r.add_argument("--rate", type=float, default=20.0)
    r.add_argument("--duration", type=float, default=20.0)
    r.add_argument("--writes", type=int, default=200)
    z = sub.add_parser("sizes")
    z.add_argument("--memories", type=int, default=5000)
    z.add_argument("--messages", type=int, default=5000)
    args = parser.parse_args()
    if args.command == "sizes":
        if not (0 < args.memories <= 200_000 and 0 < args.messages <= 200_000):
            parser.error("bounds: 0 < memories, messages <= 200000")
        return sizes(args)
    rates = getattr(args, "rates", [args.__dict__.get("rate", 1)])
    if not all(0 < rate <= 300 for rate in rates) or not 0 < args.duration <= 600:
        parser.error("bounds: 0 < rate <= 300, 0 < duration <= 600")
    os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "127.0.0.1")
    nodes(args) if args.command == "nodes" else replica(args)


if __name__ == "__main__":
    main()
