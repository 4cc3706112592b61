"""What the Prometheus metrics and (enabled) OpenTelemetry tracing cost the served app, in one run.

    .venv/bin/python bench/metrics_overhead.py [--duration 20] [--rounds 6] [--clients 8] [--users 40]
                                               [--scrape-interval 15] [--mix-rounds 10]

Three copies of the app run side by side on the bench database, each under gunicorn with `serve`'s setup (2
processes x 2 threads, keep-alive 10 s, one torch thread, its own PROMETHEUS_MULTIPROC_DIR), differing only in:

    off      METRICS_ENABLED=false, no tracing
    metrics  METRICS_ENABLED=true
    traced   METRICS_ENABLED=true and tracing to a local OTLP/HTTP receiver (every span sent)

Outside this process, as in production: a real Prometheus (Debian's `prometheus` binary) scrapes the three every
`--scrape-interval` seconds for the whole run (`off` answers its scrapes with a 404, so all three pay a scrape),
and the OTLP receiver is a process of its own. This process only sends the load and reads the clocks.

Each round loads the three in turn for `--duration` seconds, in alternating orders (ABC, CBA, ABC ...), so that
drift of the machine and the database's growth fall on all three alike; every copy is warmed first. The load is
closed-loop: `--clients` threads each send the next request as soon as the last one is answered, so requests/s is
what the server can do, not what was asked of it. The mix is bench/load.py's without appends (no worker runs
here): reads 25%, lists 25%, searches 30%, writes 15%. Loopback only, bounded in time.

Reported per way: the median over rounds of requests/s, search p95 and web CPU per request, with their range, and
the median (range, and a 95% interval by resampling the rounds) of each round's ratio to `off` in that same
round: the figure the overhead target is read on. On a machine busy with other work requests/s swings by tens of
percent from one run to the next; bench/metrics_cost.py then measures in this process what the figures add to a
request (CPU per request of the same mix through Django, metrics on and off in turn) and what a figure, a span and
a scrape cost.
"""

import argparse
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack, contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import free_port, gunicorn, percentile, setup_django  # noqa: E402
from bench.metrics_cost import instrumentation_cost, mix_cpu, ratios  # noqa: E402

PREFIX = "overhead-"
MIX = (("read", 25), ("list", 25), ("search", 30), ("write", 15))  # bench/load.py's, less appends
WAYS = ("off", "metrics", "traced")
SERVE_ARGS = ("--keep-alive", "10")  # as `serve` runs gunicorn (memento/management/commands/serve.py)
UP_WITHIN = 120.0  # seconds for Prometheus or the receiver to come up


# --- The OTLP receiver, run as a process of its own (`--otlp-receiver`). ------------------------------------------
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


def receiver_main() -> int:
    """A stand-in OTLP/HTTP collector on loopback: takes every export, prints its port, and its counts at SIGTERM."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _ReceiverHandler)
    server.posts = server.bytes = 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print(server.server_port, flush=True)
    try:
        server.serve_forever()
    finally:
        print(json.dumps({"posts": server.posts, "bytes": server.bytes}), flush=True)
    return 0


@contextmanager
def receiver():
    """The receiver's process; yields (its port, a dict filled with its counts once the block ends)."""
    process = subprocess.Popen([sys.executable, __file__, "--otlp-receiver"], stdout=subprocess.PIPE, text=True)
    counts: dict[str, int] = {}
    try:
        yield int(process.stdout.readline()), counts
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=30)
        counts.update(json.loads(out.strip().splitlines()[-1]) if out.strip() else {})


# --- A real Prometheus scraping the three copies. ------------------------------------------------------------------
@contextmanager
def prometheus(targets: dict[str, str], interval: float, folder: Path):
    """Debian's `prometheus` scraping each of `targets` (way -> base URL) every `interval` seconds; yields its
    base URL."""
    binary = shutil.which("prometheus")
    if binary is None:
        raise SystemExit("the prometheus binary is missing (apt-get install prometheus)")
    hosts = "".join(f"      - targets: ['{url.removeprefix('http://')}']\n        labels: {{way: {way}}}\n"
                    for way, url in targets.items())
    config = folder / "prometheus.yml"
    config.write_text(f"global:\n  scrape_interval: {interval:g}s\n  scrape_timeout: {min(interval, 10):g}s\n"
                      f"scrape_configs:\n  - job_name: memento\n    static_configs:\n{hosts}")
    port = free_port()
    process = subprocess.Popen(
        [binary, f"--config.file={config}", f"--storage.tsdb.path={folder / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + UP_WITHIN
        while not _answers(f"{url}/-/ready"):
            if process.poll() is not None or time.monotonic() > deadline:
                raise SystemExit("prometheus did not come up")
            time.sleep(0.25)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=60)


def _answers(url: str) -> bool:
    try:
        return httpx.get(url, timeout=5).status_code == 200
    except httpx.HTTPError:
        return False


def scrapes(url: str) -> dict[str, tuple[int, int, float]]:
    """Per way: (scrapes, successful ones, mean scrape time in ms) as Prometheus recorded them."""
    def query(expression: str) -> dict[str, float]:
        answer = httpx.get(f"{url}/api/v1/query", params={"query": expression}, timeout=30).json()
        return {r["metric"]["way"]: float(r["value"][1]) for r in answer["data"]["result"]}

    total = query("count_over_time(up[6h])")
    ok = query("sum_over_time(up[6h])")
    seconds = query("avg_over_time(scrape_duration_seconds[6h])")
    return {way: (int(total.get(way, 0)), int(ok.get(way, 0)), seconds.get(way, 0.0) * 1000) for way in WAYS}


# --- The load. -----------------------------------------------------------------------------------------------------
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


def run(url: str, tokens: list[str], acked: dict[str, list[str]], *, clients: int, duration: float, seed: int
        ) -> tuple[float, float, int, float]:
    """(requests/s, search p95 in ms, errors, server CPU ms per request) of one closed-loop run."""
    from bench.load import Client

    http = httpx.Client(base_url=url, timeout=30.0,
                        limits=httpx.Limits(max_connections=clients, max_keepalive_connections=clients))
    names = [name for name, share in MIX for _ in range(share)]
    serial = iter(range(seed * 10**7, (seed + 1) * 10**7))  # distinct texts in every run
    lock = threading.Lock()
    done: list[tuple[str, float]] = []
    errors = [0]
    idle = []
    for k, token in enumerate(tokens):
        user = Client(http, token, random.Random(seed * 1000 + k))
        user.acked = dict.fromkeys(acked[token], "")  # ids to read; contents are not checked here
        idle.append(user)
    end = time.perf_counter() + duration

    def loop(k: int) -> None:
        rng = random.Random(seed * 100 + k)
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

    threads = [threading.Thread(target=loop, args=(k,)) for k in range(clients)]
    started, cpu = time.perf_counter(), server_cpu(url)
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed, cpu = time.perf_counter() - started, server_cpu(url) - cpu
    http.close()
    searches = [seconds * 1000 for name, seconds in done if name == "search"]
    return len(done) / elapsed, percentile(searches, 95), errors[0], cpu * 1000 / max(len(done), 1)


# --- The run. ------------------------------------------------------------------------------------------------------
def prepare(url: str, tokens: list[str]) -> dict[str, list[str]]:
    """Ten memories for each user (through the API, as the load writes them); their ids, by token."""
    from bench.load import Client

    print(f"Preparing {len(tokens)} users (10 memories each) ...", file=sys.stderr)
    acked = {}
    with httpx.Client(base_url=url, timeout=60.0) as http:
        serial = iter(range(10**6, 10**7))
        for k, token in enumerate(tokens):
            user = Client(http, token, random.Random(k))
            for _ in range(10):
                user.op("write", serial)
            acked[token] = list(user.acked)
    return acked


def spread(values: list[float], fmt: str) -> str:
    return f"{format(statistics.median(values), fmt)} [{format(min(values), fmt)}..{format(max(values), fmt)}]"


def interval(values: list[float]) -> str:
    """A 95% interval of the median of `values` (resampling the rounds, seeded)."""
    rng = random.Random(0)
    medians = sorted(statistics.median(rng.choices(values, k=len(values))) for _ in range(4000))
    return f"{medians[100]:+.1%}..{medians[3899]:+.1%}"


def report(results: dict[str, list[tuple]], args, loads: list[float], scraped: dict, received: dict) -> None:
    print(f"Closed loop, {args.clients} clients, {args.users} users, three gunicorn copies of 2 x 2 side by side, "
          f"{args.rounds} rounds of {args.duration:g} s per way (orders ABC, CBA, ...), Prometheus scraping every "
          f"{args.scrape_interval:g} s")
    print(f"Machine load (1-min average) at the runs' starts: median {statistics.median(loads):.2f}, "
          f"range {min(loads):.2f}..{max(loads):.2f}; uptime at the end: {os.popen('uptime').read().strip()}")
    print("Median over rounds [range]:")
    print(f"  {'way':8} {'req/s':>20} {'req/s vs off':>24} {'search p95 ms':>24} {'p95 vs off':>24} "
          f"{'CPU ms/req':>20} {'CPU vs off':>24} {'errors':>6}")

    def paired(runs: list[tuple], i: int) -> list[float]:  # each round's figure against off's in that round
        return [r[i] / o[i] - 1 for r, o in zip(runs, results["off"], strict=True)]

    for way, runs in results.items():
        print(f"  {way:8} {spread([r[0] for r in runs], '.1f'):>20} {spread(paired(runs, 0), '+.1%'):>24} "
              f"{spread([r[1] for r in runs], '.1f'):>24} {spread(paired(runs, 1), '+.1%'):>24} "
              f"{spread([r[3] for r in runs], '.2f'):>20} {spread(paired(runs, 3), '+.1%'):>24} "
              f"{sum(r[2] for r in runs):6d}")
    print("95% intervals of the medians of those ratios (rounds resampled): " + "; ".join(
        f"{way}: req/s {interval(paired(results[way], 0))}, search p95 {interval(paired(results[way], 1))}, "
        f"CPU {interval(paired(results[way], 3))}" for way in WAYS[1:]))
    print("Rounds (req/s): " + "; ".join(
        f"{k + 1}: " + " ".join(f"{way} {results[way][k][0]:.1f}" for way in WAYS) for k in range(args.rounds)))
    print("Prometheus scrapes (total / up / mean ms): " + ", ".join(
        f"{way} {total}/{ok}/{ms:.1f}" for way, (total, ok, ms) in scraped.items()))
    print(f"OTLP receiver: {received.get('posts', 0)} exports, {received.get('bytes', 0) / 1e6:.1f} MB")


def main() -> int:
    if sys.argv[1:] == ["--otlp-receiver"]:
        return receiver_main()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--duration", type=float, default=20.0, help="seconds per way and round (at most 600)")
    parser.add_argument("--rounds", type=int, default=6, help="rounds, each loading the three in turn (at most 60)")
    parser.add_argument("--clients", type=int, default=8, help="closed-loop client threads (at most 32)")
    parser.add_argument("--users", type=int, default=40)
    parser.add_argument("--scrape-interval", type=float, default=15.0, help="Prometheus' scrape interval, seconds")
    parser.add_argument("--warmup", type=float, default=10.0, help="seconds of load on each copy before round 1")
    parser.add_argument("--mix-rounds", type=int, default=10, help="rounds of the in-process measure (at most 60)")
    args = parser.parse_args()
    if not (0 < args.duration <= 600 and 0 < args.rounds <= 60 and 0 < args.clients <= 32
            and args.users > args.clients and 1 <= args.scrape_interval <= 300 and 0 <= args.warmup <= 120
            and 0 < args.mix_rounds <= 60):
        parser.error("bounds: 0 < duration <= 600, 0 < rounds <= 60, 0 < clients <= 32, users > clients, "
                     "1 <= scrape interval <= 300, 0 <= warmup <= 120, 0 < mix rounds <= 60")

    # this process measures the figures' cost as gunicorn's processes pay it: in multiprocess mode (the variable
    # must be set before prometheus_client is imported; each server below gets a folder of its own)
    folder = Path(tempfile.mkdtemp(prefix="memento-overhead-"))
    os.environ["PROMETHEUS_MULTIPROC_DIR"] = str(folder / "micro")
    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        os.environ.pop(name, None)
    database_url = setup_django()
    from bench.load import tokens_for

    tokens = tokens_for(args.users, PREFIX)
    common = {"OMP_NUM_THREADS": "1", "DJANGO_ALLOWED_HOSTS": "127.0.0.1"}
    results: dict[str, list[tuple]] = {way: [] for way in WAYS}
    loads: list[float] = []
    try:
        with ExitStack() as stack:
            port, received = stack.enter_context(receiver())
            ways = {"off": {"METRICS_ENABLED": "false"}, "metrics": {"METRICS_ENABLED": "true"},
                    "traced": {"METRICS_ENABLED": "true", "OTEL_EXPORTER_OTLP_ENDPOINT": f"http://127.0.0.1:{port}"}}
            urls = {way: stack.enter_context(gunicorn(
                database_url, workers=2, threads=2, extra_args=SERVE_ARGS,
                env={**common, **env, "PROMETHEUS_MULTIPROC_DIR": str(folder / way)})) for way, env in ways.items()}
            acked = prepare(urls["off"], tokens)
            prometheus_url = stack.enter_context(prometheus(urls, args.scrape_interval, folder))
            for k, way in enumerate(WAYS):
                run(urls[way], tokens, acked, clients=args.clients, duration=args.warmup, seed=k + 1)
            for round_ in range(args.rounds):
                for way in WAYS if round_ % 2 == 0 else WAYS[::-1]:
                    loads.append(os.getloadavg()[0])
                    seed = 10 + round_ * len(WAYS) + WAYS.index(way)
                    figures = run(urls[way], tokens, acked, clients=args.clients, duration=args.duration, seed=seed)
                    results[way].append(figures)
                    print(f"round {round_ + 1} {way:8} {figures[0]:7.1f} req/s  search p95 {figures[1]:7.1f} ms  "
                          f"errors {figures[2]}  CPU {figures[3]:.1f} ms/request  load {loads[-1]:.2f}",
                          file=sys.stderr)
            scraped = scrapes(prometheus_url)
        report(results, args, loads, scraped, received)
        on, off, errors = mix_cpu(tokens, acked, rounds=args.mix_rounds)
        print(f"\nThe mix through Django in this process, metrics on / off in turn, {args.mix_rounds} rounds of 100 "
              f"requests: CPU ms per request {spread(on, '.2f')} / {spread(off, '.2f')}, on against off in the same "
              f"round {statistics.median(ratios(on, off)):+.1%} (95%: {interval(ratios(on, off))}), "
              f"errors {errors}")
        print("The instrumentation's own cost in this process (CPU microseconds per call):")
        for what, micros in instrumentation_cost(folder / "metrics").items():
            print(f"  {what:45} {micros:9.1f} us")
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
