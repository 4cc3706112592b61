"""What the Prometheus metrics and (enabled) OpenTelemetry tracing cost the served app, in one run.

    .venv/bin/python bench/metrics_overhead.py [--duration 60] [--rounds 2] [--clients 8] [--users 40]

The app under gunicorn (2 processes x 2 threads, as `serve`) on the bench database, three ways, each started
afresh and run in turn, ABC then CBA (so that drift of the machine falls on all three alike):

    off      METRICS_ENABLED=false, no tracing
    metrics  metrics on (PROMETHEUS_MULTIPROC_DIR, as `serve`), /metrics scraped every 15 s as Prometheus would
    traced   metrics on and tracing to a local OTLP/HTTP receiver in this process (every span sent)

The served runs share the machine with whatever else runs on it; the instrumentation's own cost is also
measured in this process, where noise matters less (microseconds of CPU per call, in multiprocess mode, and a
whole request through Django's handler with the metrics middleware and without), against the served `off` way's
CPU per request.

Each run is closed-loop: `--clients` threads each send the next request as soon as the last one is answered, so
requests/s is what the server can do, not what was asked of it. The mix is bench/load.py's without appends (no
worker runs here): reads 25%, lists 25%, searches 30%, writes 15%, weighted the same. Loopback only, bounded in
time. Prints requests/s and search p95 per way and round, and each way's overhead against `off`.
"""

import argparse
import os
import random
import shutil
import sys
import tempfile
import threading
import time
import timeit
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import gunicorn, percentile, setup_django  # noqa: E402

PREFIX = "overhead-"
MIX = (("read", 25), ("list", 25), ("search", 30), ("write", 15))  # bench/load.py's, less appends


class Receiver(ThreadingHTTPServer):
    """A stand-in OTLP/HTTP collector on loopback: takes every export and counts it."""

    def __init__(self):
        super().__init__(("127.0.0.1", 0), _ReceiverHandler)
        self.posts = 0
        self.bytes = 0


class _ReceiverHandler(BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802
        size = int(self.headers.get("Content-Length", 0))
        self.rfile.read(size)
        self.server.posts += 1
        self.server.bytes += size
        self.send_response(200)
        self.end_headers()

    def log_message(self, format, *args):  # noqa: A002
        pass


def server_cpu(url: str) -> float:
    """CPU seconds (user + system) used so far by the gunicorn processes serving `url` (found by their command
    line): what a request costs, whatever else the machine is doing meanwhile."""
    bind = url.removeprefix("http://")
    total = 0.0
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and bind.encode() in (proc / "cmdline").read_bytes():
                fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
                total += (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:  # gone meanwhile
            continue
    return total


def run(url: str, tokens: list[str], acked: dict[str, list[str]], *, clients: int, duration: float,
        scrape: bool) -> tuple[float, float, int, float]:
    """(requests/s, search p95 in ms, errors, server CPU ms per request) of one closed-loop run."""
    from bench.load import Client

    http = httpx.Client(base_url=url, timeout=30.0,
                        limits=httpx.Limits(max_connections=clients + 1, max_keepalive_connections=clients + 1))
    names = [name for name, share in MIX for _ in range(share)]
    serial = iter(range(10**9, 2 * 10**9))
    lock = threading.Lock()
    done: list[tuple[str, float]] = []
    errors = [0]
    idle = []
    for k, token in enumerate(tokens):
        user = Client(http, token, random.Random(k))
        user.acked = dict.fromkeys(acked[token], "")  # ids to read; contents are not checked here
        idle.append(user)
    end = time.perf_counter() + duration

    def loop(k: int) -> None:
        rng = random.Random(k)
        while time.perf_counter() < end:
            with lock:
                user = idle.pop(rng.randrange(len(idle)))
            name = rng.choice(names)
            started = time.perf_counter()
            try:
                failed = user.op(name, serial).status_code >= 400
            except httpx.HTTPError:
                failed = True
            with lock:
                idle.append(user)
                done.append((name, time.perf_counter() - started))
                errors[0] += failed

    def scraper() -> None:
        while time.perf_counter() < end:
            http.get("/metrics").raise_for_status()
            time.sleep(15)  # a common scrape interval (Prometheus: 1 min by default), not a readiness wait

    threads = [threading.Thread(target=loop, args=(k,)) for k in range(clients)]
    if scrape:
        threads.append(threading.Thread(target=scraper))
    started, cpu = time.perf_counter(), server_cpu(url)
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed, cpu = time.perf_counter() - started, server_cpu(url) - cpu
    http.close()
    searches = [seconds * 1000 for name, seconds in done if name == "search"]
    return len(done) / elapsed, percentile(searches, 95), errors[0], cpu * 1000 / max(len(done), 1)


def micro(call, number: int = 20000) -> float:
    """Microseconds per call of `call`, best of three."""
    return min(timeit.repeat(call, number=number, repeat=3)) / number * 1e6


def instrumentation_cost() -> dict[str, float]:
    """Microseconds of this process's CPU per call of what the instrumentation adds (multiprocess files)."""
    from django.test import Client, override_settings
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from observability import metrics, tracing

    costs = {
        "request figure (labels + observe)":
            micro(lambda: metrics.REQUEST_SECONDS.labels("memory-search", "POST", "200").observe(0.01)),
        "search figure": micro(lambda: metrics.search_observed(mode="hybrid", path="snapshot", seconds=0.01)),
        "embedding figures": micro(lambda: metrics.embedding_observed(provider="onnx", texts=1, seconds=0.01,
                                                                        ok=True)),
    }

    def healthz(client: Client):
        return lambda: client.get("/healthz")

    with_metrics = Client()
    with override_settings(METRICS_ENABLED=False):
        without = Client()  # its handler is built without the middleware at its first request
        without.get("/healthz")
    with_metrics.get("/healthz")
    on, off = [], []
    for _ in range(3):  # in turn, so that a busy moment of the machine falls on both
        on.append(micro(healthz(with_metrics), number=1000))
        with override_settings(METRICS_ENABLED=False):
            off.append(micro(healthz(without), number=1000))
    costs["GET /healthz through Django, metrics on"] = min(on)
    costs["GET /healthz through Django, metrics off"] = min(off)
    exporter = InMemorySpanExporter()
    tracing.setup(exporter=exporter)

    def span():
        with tracing.span("search_memory memories", {"memento.search.mode": "hybrid"}):
            pass
        exporter.clear()

    costs["one span (tracing on, exported in memory)"] = micro(span, number=5000)
    tracing.shutdown()
    return costs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=60.0, help="seconds per run (at most 600)")
    parser.add_argument("--rounds", type=int, default=2, help="ABC CBA pairs count as two rounds (at most 6)")
    parser.add_argument("--clients", type=int, default=8, help="closed-loop client threads (at most 32)")
    parser.add_argument("--users", type=int, default=40)
    args = parser.parse_args()
    if not (0 < args.duration <= 600 and 0 < args.rounds <= 6 and 0 < args.clients <= 32
            and args.users > args.clients):
        parser.error("bounds: 0 < duration <= 600, 0 < rounds <= 6, 0 < clients <= 32, users > clients")

    # this process measures the figures' cost as gunicorn's processes pay it: in multiprocess mode (the variable
    # must be set before prometheus_client is imported; the servers below get their own)
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = tempfile.mkdtemp(prefix="memento-micro-")
    database_url = setup_django()
    from bench.load import Client, tokens_for

    tokens = tokens_for(args.users, PREFIX)
    receiver = Receiver()
    threading.Thread(target=receiver.serve_forever, daemon=True).start()
    multiproc = tempfile.mkdtemp(prefix="memento-metrics-")
    ways = {
        "off": {"METRICS_ENABLED": "false", "PROMETHEUS_MULTIPROC_DIR": tempfile.mkdtemp(prefix="memento-off-")},
        "metrics": {"METRICS_ENABLED": "true", "PROMETHEUS_MULTIPROC_DIR": multiproc},
        "traced": {"METRICS_ENABLED": "true", "PROMETHEUS_MULTIPROC_DIR": multiproc,
                   "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{receiver.server_port}"},
    }
    common = {"OMP_NUM_THREADS": "1", "DJANGO_ALLOWED_HOSTS": "127.0.0.1"}
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        os.environ.pop(name, None)

    acked: dict[str, list[str]] = {}
    with gunicorn(database_url, workers=2, threads=2, env={**common, **ways["off"]}) as url:
        print(f"Preparing {len(tokens)} users (10 memories each) ...", file=sys.stderr)
        http = httpx.Client(base_url=url, timeout=60.0)
        serial = iter(range(10**6, 10**9))
        for k, token in enumerate(tokens):
            user = Client(http, token, random.Random(k))
            for _ in range(10):
                user.op("write", serial)
            acked[token] = list(user.acked)
        http.close()

    order = list(ways)
    results: dict[str, list[tuple[float, float, int, float]]] = {way: [] for way in ways}
    for round_ in range(args.rounds):
        for way in order if round_ % 2 == 0 else order[::-1]:
            for stale in Path(multiproc).glob("*.db"):
                stale.unlink()
            with gunicorn(database_url, workers=2, threads=2, env={**common, **ways[way]}) as url:
                run(url, tokens, acked, clients=args.clients, duration=min(10.0, args.duration), scrape=False)
                figures = run(url, tokens, acked, clients=args.clients, duration=args.duration,
                              scrape=way != "off")
            results[way].append(figures)
            print(f"round {round_ + 1} {way:8} {figures[0]:7.1f} req/s  search p95 {figures[1]:7.1f} ms  "
                  f"errors {figures[2]}  CPU {figures[3]:.1f} ms/request", file=sys.stderr)

    print(f"Closed loop, {args.clients} clients, {args.users} users, gunicorn 2 x 2, {args.duration:g} s per run, "
          f"{args.rounds} rounds (ABC CBA), each way warmed 10 s first")
    print(f"{'way':8} {'req/s':>8} {'vs off':>8} {'search p95 ms':>14} {'vs off':>8} {'CPU ms/req':>11} "
          f"{'vs off':>8}  errors   (runs: req/s / p95 / CPU)")

    def mean(way: str, i: int) -> float:
        return sum(r[i] for r in results[way]) / len(results[way])

    for way, runs in results.items():
        each = ", ".join(f"{r[0]:.1f}/{r[1]:.0f}/{r[3]:.1f}" for r in runs)
        print(f"{way:8} {mean(way, 0):8.1f} {mean(way, 0) / mean('off', 0) - 1:+8.1%} {mean(way, 1):14.1f} "
              f"{mean(way, 1) / mean('off', 1) - 1:+8.1%} {mean(way, 3):11.2f} "
              f"{mean(way, 3) / mean('off', 3) - 1:+8.1%}  {sum(r[2] for r in runs):6d}   ({each})")
    print(f"OTLP receiver: {receiver.posts} exports, {receiver.bytes / 1e6:.1f} MB")
    print("\nThe instrumentation's own cost in this process (CPU microseconds per call):")
    for what, micros in instrumentation_cost().items():
        print(f"  {what:45} {micros:9.1f} us")
    print(f"  (served, off: {mean('off', 3) * 1000:.0f} us of web CPU per request)")
    for folder in (multiproc, ways["off"]["PROMETHEUS_MULTIPROC_DIR"], os.environ["PROMETHEUS_MULTIPROC_DIR"]):
        shutil.rmtree(folder, ignore_errors=True)
    receiver.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
