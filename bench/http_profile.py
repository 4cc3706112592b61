"""Where each operation of bench/load.py's mix spends CPU, and how many SQL statements it sends.

    .venv/bin/python bench/http_profile.py prepare          # once: users, tokens, memories in memento_http
    .venv/bin/python bench/http_profile.py count            # statements per request (in process, app role)
    .venv/bin/python bench/http_profile.py profile [--op search] [-n 300]   # pyinstrument of one operation
    .venv/bin/python bench/http_profile.py cpu [-n 300]     # CPU per request under a real gunicorn (1 x 1)

`count` and `profile` run the app in this process as a web process does (the app role, row-level security
enforced) through Django's test client; the bookkeeping written after a response is included (the client closes
the response). `cpu` serves the app with gunicorn (one worker, one thread, as `serve` configures its web
processes), sends each operation `-n` times in turn from one connection, and reads the CPU time (user + system)
that the gunicorn worker and this cluster's PostgreSQL processes spent meanwhile, from /proc: CPU per request,
which the load of other processes on the machine inflates far less than wall-clock time.
"""

import argparse
import itertools
import os
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import bench_database_url, setup_django  # noqa: E402
from bench.load import PEOPLE, QUESTIONS, THINGS, VERBS, fact  # noqa: E402

DATABASE = "memento_http"
PREFIX = "httpprof-"
USERS = 20
MEMORIES = 60  # per user: about what a load user holds after a few minutes of the mix
OPS = ("read", "list", "search", "write", "append")
TICKS = os.sysconf("SC_CLK_TCK")


def prepare() -> None:
    setup_django(DATABASE)
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from kombu import Connection

    from bench.common import wipe_users
    from conversations.services import conversation_create
    from memento.roles import grant_app_role
    from memories.batch import memory_batch_create

    with Connection(settings.CELERY_BROKER_URL) as broker:  # appends queue tasks: the broker's tables, made by
        broker.default_channel.session  # noqa: B018   the owner (the worker does it when `serve` starts)
    grant_app_role()  # ... and usable by the app role
    wipe_users(PREFIX)
    rng = random.Random(3)
    serial = itertools.count()
    for i in range(USERS):
        user = get_user_model().objects.create(username=f"{PREFIX}{i:03d}")
        conversation_create(owner=user, title="profile")
        memory_batch_create(owner=user, items=[{"content": fact(rng, next(serial)), "allow_duplicate": True}
                                               for _ in range(MEMORIES)])
    print(f"{USERS} users with {MEMORIES} memories each in {DATABASE}")


def as_web_process() -> None:
    """Django set up on the bench database as gunicorn's web processes run: the app role, RLS by default."""
    os.environ["MEMENTO_DATABASE_ROLE"] = "app"
    setup_django(DATABASE, migrate=False)
    from core import rls

    rls.enforce_by_default()


class Users:
    """The prepared users: token, a conversation id and memory ids each; request arguments per operation."""

    def __init__(self, rng: random.Random):
        from django.contrib.auth import get_user_model

        from accounts.services import token_create
        from conversations.models import Conversation
        from core import rls
        from memories.models import Memory

        self.rng, self.serial = rng, itertools.count(int(time.time() * 1000))
        self.users = []
        for user in get_user_model().objects.filter(username__startswith=PREFIX).order_by("username"):
            with rls.as_user(user.pk):
                conversation = Conversation.objects.filter(owner=user).values_list("pk", flat=True).first()
                memories = list(Memory.objects.filter(owner=user).values_list("pk", flat=True)[:50])
            key = token_create(user=user, name="bench").key  # keys are not stored: a new token per run
            self.users.append((key, str(conversation), [str(m) for m in memories]))
        if not self.users:
            raise SystemExit("run `bench/http_profile.py prepare` first")

    def request(self, op: str) -> tuple[str, str, dict | None, dict]:
        token, conversation, memories = self.rng.choice(self.users)
        headers = {"Authorization": f"Token {token}"}
        rng = self.rng
        if op == "read":
            return "GET", f"/api/memories/{rng.choice(memories)}/", None, headers
        if op == "list":
            return "GET", "/api/memories/?page_size=20", None, headers
        if op == "search":
            query = rng.choice(QUESTIONS).format(p=rng.choice(PEOPLE), t=rng.choice(THINGS))
            return "POST", "/api/memories/search/", {"query": query, "limit": 10}, headers
        if op == "write":
            return "POST", "/api/memories/", {"content": fact(rng, next(self.serial)), "allow_duplicate": True}, headers
        if op == "append":
            text = f"I {rng.choice(VERBS).replace('is ', 'am ')} {rng.choice(THINGS)}."
            return ("POST", f"/api/conversations/{conversation}/messages/",
                    {"messages": [{"role": "user", "content": text}]}, headers)
        raise ValueError(op)


def test_client_call(client, method, path, body, headers):
    import json

    data = "" if body is None else json.dumps(body)
    response = client.generic(method, path, data, content_type="application/json", headers=headers)
    assert response.status_code < 300, (path, response.status_code, response.content[:300])
    return response


def count(args) -> None:
    as_web_process()
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    users, client = Users(random.Random(5)), Client()
    for op in OPS:
        for _ in range(3):
            test_client_call(client, *users.request(op))  # warm: connection, caches
        with CaptureQueriesContext(connection) as captured:
            test_client_call(client, *users.request(op))
        print(f"{op}: {len(captured.captured_queries)} statements")
        if args.verbose:
            for query in captured.captured_queries:
                print(f"    {query['time']:>6}  {query['sql'][:150]}")


def profile(args) -> None:
    """cProfile on this process's CPU time (not wall-clock: time waiting for PostgreSQL is left out)."""
    import cProfile
    import pstats

    as_web_process()
    from django.test import Client

    users, client = Users(random.Random(5)), Client()
    for _ in range(20):
        test_client_call(client, *users.request(args.op))
    requests = [users.request(args.op) for _ in range(args.n)]
    started = time.process_time()
    for request in requests:
        test_client_call(client, *request)
    cpu = (time.process_time() - started) / len(requests)
    profiler = cProfile.Profile(time.process_time)
    profiler.enable()
    for request in [users.request(args.op) for _ in range(args.n)]:
        test_client_call(client, *request)
    profiler.disable()
    stats = pstats.Stats(profiler, stream=sys.stderr)
    stats.sort_stats(args.sort).print_stats(args.lines)
    print(f"{args.op}: {cpu * 1000:.2f} ms of this process's CPU per request (unprofiled)")


def _cpu_seconds(pids) -> dict[int, float]:
    found = {}
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        found[pid] = (int(fields[11]) + int(fields[12])) / TICKS  # utime, stime
    return found


def _spent(before: dict[int, float], after: dict[int, float]) -> float:
    """CPU spent between two readings by processes alive at the second (new ones: all of theirs)."""
    return sum(cpu - before.get(pid, 0.0) for pid, cpu in after.items())


def _children(pid: int) -> list[int]:
    found = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        children = (task / "children").read_text().split()
        found += [int(c) for c in children]
    return found


def _postgres_pids() -> list[int]:
    """This cluster's backends serving the bench database (the web process's connections and its broker's; not
    other databases' sessions, autovacuum or the checkpointer, whose coming and going would blur the figure)."""
    from django.conf import settings

    pgdata = settings.STATE_DIR / "pgdata"
    postmaster = int((pgdata / "postmaster.pid").read_text().split()[0])
    found = []
    for pid in _children(postmaster):
        try:
            title = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
        except FileNotFoundError:
            continue
        if f" {DATABASE} " in title:
            found.append(pid)
    return found


def cpu(args) -> None:
    import logging

    import httpx

    from bench.common import gunicorn

    logging.getLogger("httpx").setLevel(logging.WARNING)

    url = setup_django(DATABASE, migrate=False)  # the app role's URL for gunicorn; this process reads ids
    users = Users(random.Random(5))
    ops = args.ops.split(",")
    extra = tuple(args.gunicorn_args.split()) if args.gunicorn_args else ()
    env = {"OMP_NUM_THREADS": "1", "MEMENTO_DATABASE_ROLE": "app"}
    with gunicorn(url, workers=1, threads=args.threads, extra_args=extra, env=env) as base:
        http = httpx.Client(base_url=base, timeout=60)
        server = int(Path("/proc").joinpath(str(os.getpid()), "task", str(os.getpid()), "children").read_text()
                     .split()[-1])
        workers = _children(server)

        def send(op):
            method, path, body, headers = users.request(op)
            response = http.request(method, path, json=body, headers=headers)
            assert response.status_code < 300, (path, response.status_code, response.text[:300])

        for op in ops:  # warm every path: imports, the model, plans
            for _ in range(20):
                send(op)
        print(f"gunicorn 1 worker x {args.threads} thread(s) {' '.join(extra)}; {args.n} requests per operation, "
              f"{args.rounds} interleaved rounds; load average {os.getloadavg()[0]:.2f}")
        totals = {op: [0.0, 0.0, 0.0, 0] for op in ops}
        for _ in range(args.rounds):
            for op in ops:
                time.sleep(0.3)  # let the previous operation's bookkeeping and PostgreSQL's background work settle
                web0, pg0, wall0 = _cpu_seconds(workers), _cpu_seconds(_postgres_pids()), time.perf_counter()
                for _ in range(args.n // args.rounds):
                    send(op)
                time.sleep(0.05)  # the last response's after-response write
                total = totals[op]
                total[0] += _spent(web0, _cpu_seconds(workers))
                total[1] += _spent(pg0, _cpu_seconds(_postgres_pids()))
                total[2] += time.perf_counter() - wall0 - 0.05
                total[3] += args.n // args.rounds
        print(f"{'operation':10} {'web CPU ms':>10} {'PG CPU ms':>10} {'sum ms':>8} {'wall ms':>8}  (per request)")
        for op, (web, pg, wall, n) in totals.items():
            print(f"{op:10} {web / n * 1000:10.2f} {pg / n * 1000:10.2f} {(web + pg) / n * 1000:8.2f} "
                  f"{wall / n * 1000:8.2f}")
        print(f"load average at the end {os.getloadavg()[0]:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("prepare", "count", "profile", "cpu"))
    parser.add_argument("--op", default="search", choices=OPS)
    parser.add_argument("--ops", default=",".join(OPS))
    parser.add_argument("-n", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--gunicorn-args", default="")
    parser.add_argument("-v", "--verbose", action="store_true")
    parser.add_argument("--sort", default="cumulative", help="profile: pstats order (cumulative, tottime)")
    parser.add_argument("--lines", type=int, default=60, help="profile: how many functions")
    args = parser.parse_args()
    bench_database_url(DATABASE)
    {"prepare": lambda _: prepare(), "count": count, "profile": profile, "cpu": cpu}[args.command](args)


if __name__ == "__main__":
    main()
