"""Mixed load against the served app (README's `./dev.sh serve`), loopback only and bounded.

    .venv/bin/python bench/load.py [--url http://127.0.0.1:8000] [--users 120] [--rate 100] [--duration 600]

Creates (or reuses) `--users` users `load-NNN` with API tokens in the served app's database, gives each a
conversation and a few memories through the API, then runs the mix below for `--duration` seconds at up to
`--rate` requests/s from `--clients` threads (each client keeps its own schedule; a late client does not
catch up by bursting, so the achieved rate is what the server sustained):

    reads 25%  (GET one of the user's memories)      lists 25%   (GET /api/memories/?page_size=20)
    searches 30%  (POST /api/memories/search/)       writes 15%  (POST /api/memories/)
    appends 5%  (POST /api/conversations/<id>/messages/)

Prints achieved requests/s, p50/p95/p99 and errors per operation, then reads back every acknowledged write:
each must answer 200 with the content the server acknowledged (0 lost is the target).
"""

import argparse
import itertools
import logging
import os
import random
import sys
import threading
import time
from collections import defaultdict
from pathlib import Path
from urllib.parse import urlsplit

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import percentile  # noqa: E402

LOOPBACK = {"127.0.0.1", "localhost", "::1"}
MIX = (("read", 25), ("list", 25), ("search", 30), ("write", 15), ("append", 5))
PEOPLE = ("Ana", "Bruno", "Chen", "Dara", "Emeka", "Farah", "Goran", "Hana", "Ivo", "Jun")
THINGS = ("peanuts", "sailing", "jazz", "Lisbon", "a red bicycle", "sourdough", "chess", "the marathon",
          "Kyoto", "pottery", "a new job", "tomatoes", "the dentist", "violin lessons", "a rescue dog")
VERBS = ("likes", "is allergic to", "talked about", "is planning", "bought", "is learning", "visited", "avoids")
QUESTIONS = ("what is {p} allergic to?", "where did {p} travel?", "what does {p} like?", "{t}",
             "who is learning {t}?", "plans for {t}")


def fact(rng: random.Random, n: int) -> str:
    # A serial number keeps every text distinct, and the varied parts keep near-duplicate merging out of the way
    # (each write is its own memory, so "acknowledged" means one row to read back).
    return (f"{rng.choice(PEOPLE)} {rng.choice(VERBS)} {rng.choice(THINGS)} and {rng.choice(VERBS)} "
            f"{rng.choice(THINGS)} (note {n}).")


def tokens_for(users: int, prefix: str = "load-") -> list[str]:
    """Tokens of users <prefix>000.. in the served app's database (created when missing)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memento.settings")
    import django

    django.setup()
    logging.getLogger("httpx").setLevel(logging.WARNING)  # Django's logging config would print every request
    from django.contrib.auth import get_user_model

    from accounts.services import token_create

    User = get_user_model()
    keys = []
    for i in range(users):
        user, created = User.objects.get_or_create(username=f"{prefix}{i:03d}")
        if created:
            user.set_unusable_password()
            user.save()
        keys.append(token_create(user=user, name="bench").key)
    return keys


class Client:
    """One simulated user: its token, its conversation and the writes the server acknowledged."""

    def __init__(self, http: httpx.Client, token: str, rng: random.Random):
        self.http, self.rng = http, rng
        self.headers = {"Authorization": f"Token {token}"}
        self.acked: dict[str, str] = {}
        self.conversation = ""

    def call(self, method: str, path: str, **kwargs) -> httpx.Response:
        return self.http.request(method, path, headers=self.headers, **kwargs)

    def prepare(self, serial) -> None:
        r = self.call("POST", "/api/conversations/", json={"title": "load"})
        r.raise_for_status()
        self.conversation = r.json()["id"]
        for _ in range(3):
            self.op("write", serial)

    def op(self, name: str, serial) -> httpx.Response:
        rng = self.rng
        if name == "read":
            memory_id = rng.choice(list(self.acked)) if self.acked else "00000000-0000-0000-0000-000000000000"
            return self.call("GET", f"/api/memories/{memory_id}/")
        if name == "list":
            return self.call("GET", "/api/memories/", params={"page_size": 20})
        if name == "search":
            query = rng.choice(QUESTIONS).format(p=rng.choice(PEOPLE), t=rng.choice(THINGS))
            return self.call("POST", "/api/memories/search/", json={"query": query, "limit": 10})
        if name == "write":
            content = fact(rng, next(serial))
            r = self.call("POST", "/api/memories/", json={"content": content, "allow_duplicate": True})
            if r.status_code in (200, 201):
                body = r.json()
                self.acked[body["id"]] = body["content"]
            return r
        if name == "append":
            text = f"I {rng.choice(VERBS).replace('is ', 'am ')} {rng.choice(THINGS)}."
            return self.call("POST", f"/api/conversations/{self.conversation}/messages/",
                             json={"messages": [{"role": "user", "content": text}]})
        raise ValueError(name)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--url", default="http://127.0.0.1:8000")
    parser.add_argument("--users", type=int, default=120)
    parser.add_argument("--rate", type=float, default=100.0, help="target requests/s (at most 500)")
    parser.add_argument("--duration", type=float, default=600.0, help="seconds of load (at most 3600)")
    parser.add_argument("--clients", type=int, default=32, help="concurrent connections (at most 128)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--prefix", default="load-", help="user names (a new prefix: users with no memories yet)")
    args = parser.parse_args()
    host = urlsplit(args.url).hostname or ""
    if host not in LOOPBACK:
        parser.error(f"--url must be a loopback address (got {host!r}): this tool loads only your own machine")
    if not (0 < args.rate <= 500 and 0 < args.duration <= 3600 and 0 < args.clients <= 128
            and args.users > args.clients):
        parser.error("bounds: 0 < rate <= 500, 0 < duration <= 3600, 0 < clients <= 128, users > clients")

    rng = random.Random(args.seed)
    serial = itertools.count(int(time.time()))
    http = httpx.Client(base_url=args.url, timeout=30.0,
                        limits=httpx.Limits(max_connections=args.clients, max_keepalive_connections=args.clients))
    users = [Client(http, token, random.Random(rng.random())) for token in tokens_for(args.users, args.prefix)]
    print(f"Preparing {len(users)} users (a conversation and 3 memories each) ...", file=sys.stderr)
    for user in users:
        user.prepare(serial)

    names = [name for name, share in MIX for _ in range(share)]
    latencies: dict[str, list[float]] = defaultdict(list)
    errors: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    lock = threading.Lock()
    start = time.perf_counter()
    end = start + args.duration
    interval = args.clients / args.rate

    def client_loop(k: int) -> None:
        local = random.Random(args.seed * 1000 + k)
        due = start + local.random() * interval  # spread the clients' first requests over one interval
        while True:
            now = time.perf_counter()
            if now >= end:
                return
            if due > now:
                time.sleep(due - now)
            due = max(due + interval, time.perf_counter())
            name = local.choice(names)
            # a user with no request in flight (each simulated user sends one at a time, and its acked dict is
            # its thread's alone): waiting for another client's request of the same user is not server latency,
            # and was counted in it before
            with lock:
                user = local.choice(idle)
                idle.remove(user)
            t0 = time.perf_counter()
            try:
                status = user.op(name, serial).status_code
                failed = None if status < 400 or (name == "read" and not user.acked and status == 404) else str(status)
            except httpx.HTTPError as exc:
                failed = type(exc).__name__
            elapsed = time.perf_counter() - t0
            with lock:
                idle.append(user)
                latencies[name].append(elapsed)
                if failed:
                    errors[name][failed] += 1

    idle = list(users)  # more users than clients: one is always free
    threads = [threading.Thread(target=client_loop, args=(k,), daemon=True) for k in range(args.clients)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        time.sleep(min(10.0, max(0.1, end - time.perf_counter())))
        done = sum(len(v) for v in latencies.values())
        print(f"  {time.perf_counter() - start:6.0f} s  {done} requests", file=sys.stderr)
    elapsed = time.perf_counter() - start

    total = sum(len(v) for v in latencies.values())
    print(f"Load: {len(users)} users, {args.clients} clients, target {args.rate:g} req/s for {args.duration:g} s")
    print(f"Achieved: {total} requests in {elapsed:.0f} s = {total / elapsed:.1f} req/s, "
          f"errors {sum(sum(e.values()) for e in errors.values())}")
    print(f"{'operation':10} {'n':>7} {'share':>6} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8}  errors")
    for name, _ in MIX:
        ms = [s * 1000 for s in latencies[name]] or [float("nan")]
        n = len(latencies[name])
        print(f"{name:10} {n:7d} {n / max(total, 1):6.0%} {percentile(ms, 50):8.1f} "
              f"{percentile(ms, 95):8.1f} {percentile(ms, 99):8.1f}  {dict(errors[name]) or '-'}")

    acked = [(user, memory_id, content) for user in users for memory_id, content in user.acked.items()]
    lost = []
    for user, memory_id, content in acked:
        r = user.call("GET", f"/api/memories/{memory_id}/")
        if r.status_code != 200 or r.json().get("content") != content:
            lost.append((memory_id, r.status_code))
    print(f"Acknowledged writes read back: {len(acked) - len(lost)} of {len(acked)} (lost {len(lost)})")
    for memory_id, status in lost[:10]:
        print(f"  lost {memory_id}: HTTP {status}")
    print(extraction_backlog(args.prefix))
    return 1 if lost else 0


def extraction_backlog(prefix: str) -> str:
    """How far the worker is behind the appends: the users' messages still waiting for extraction, the oldest."""
    from django.db.models import Count, Min
    from django.utils import timezone

    from conversations.models import Message

    # this process reads as the maintenance role with the bypass on (memento.settings), as for the tokens above
    waiting = Message.objects.filter(owner__username__startswith=prefix, extraction_status="pending").aggregate(
        n=Count("id"), oldest=Min("created_at"))
    age = (timezone.now() - waiting["oldest"]).total_seconds() if waiting["oldest"] else 0
    return f"Appended messages waiting for extraction at the end: {waiting['n']} (oldest {age:.0f} s)"


if __name__ == "__main__":
    sys.exit(main())
