"""The instrumentation's own cost, measured in one process (bench/metrics_overhead.py runs it after the served
runs; it needs Django set up on the bench database and PROMETHEUS_MULTIPROC_DIR set before prometheus_client was
first imported, as in gunicorn's processes):

- microseconds of CPU per call of each figure, of one span, and of one scrape adding up a served copy's files;
- CPU per request of bench/load.py's mix (reads, lists, searches, writes) through Django's whole handler, with
  metrics on and off in turn, batch by batch: what a request costs more with the figures, without the network,
  gunicorn or the load generator in the way. CPU time of this process only (the database's is the same both
  ways: tests/observability/test_metrics.py holds a request's statements equal), so a machine busy with other
  work disturbs it far less than requests/s.
"""

import random
import time
import timeit
from json import dumps
from pathlib import Path

MIX = (("read", 25), ("list", 25), ("search", 30), ("write", 15))  # bench/load.py's, less appends


def micro(call, number: int = 20000) -> float:
    """Microseconds per call of `call`, best of three."""
    return min(timeit.repeat(call, number=number, repeat=3)) / number * 1e6


def instrumentation_cost(served: Path) -> dict[str, float]:
    """Microseconds of this process's CPU per call of what the instrumentation adds (multiprocess files), and of
    one scrape adding up the files the served `metrics` copy wrote in `served`."""
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
    from prometheus_client import CollectorRegistry, generate_latest, multiprocess

    from observability import exposition, metrics, tracing

    costs = {
        "request figure (labels + observe)":
            micro(lambda: metrics.REQUEST_SECONDS.labels("memory-search", "POST", "200").observe(0.01)),
        "search figure": micro(lambda: metrics.search_observed(mode="hybrid", path="snapshot", seconds=0.01)),
        "embedding figures": micro(lambda: metrics.embedding_observed(provider="onnx", texts=1, seconds=0.01,
                                                                        ok=True)),
    }
    exporter = InMemorySpanExporter()
    tracing.setup(exporter=exporter)

    def span():
        with tracing.span("search_memory memories", {"memento.search.mode": "hybrid"}):
            pass
        exporter.clear()

    costs["one span (tracing on, exported in memory)"] = micro(span, number=5000)
    tracing.shutdown()

    def scrape():
        registry = CollectorRegistry(auto_describe=False)
        multiprocess.MultiProcessCollector(registry, path=str(served))
        return generate_latest(registry) + generate_latest(exposition._scrape_time)

    files = len(list(served.glob("*.db")))
    costs[f"one scrape ({files} files + database gauges)"] = micro(scrape, number=20)
    return costs


class _InProcess:
    """The part of httpx.Client that bench.load.Client uses, answered by Django's test client in this process."""

    def __init__(self, client):
        self.client = client

    def request(self, method: str, path: str, headers=None, json=None, params=None):  # noqa: A002
        extra = {"HTTP_" + name.upper().replace("-", "_"): value for name, value in (headers or {}).items()}
        if method == "GET":
            return self.client.get(path, params or {}, **extra)
        return self.client.generic(method, path, data=dumps(json), content_type="application/json", **extra)



def mix_cpu(tokens: list[str], acked: dict[str, list[str]], *, rounds: int, batch: int = 100
            ) -> tuple[list[float], list[float], int]:
    """CPU milliseconds per request of the mix with metrics on and with them off, one batch each per round (in
    turn, the first way alternating), and how many answers were errors."""
    from django.test import Client as DjangoClient
    from django.test import override_settings

    from bench.load import Client

    names = [name for name, share in MIX for _ in range(share)]
    serial = iter(range(5 * 10**8, 6 * 10**8))
    clients, users = {}, {}
    for enabled in (True, False):
        with override_settings(METRICS_ENABLED=enabled):
            clients[enabled] = DjangoClient(HTTP_HOST="127.0.0.1")
            clients[enabled].get("/healthz")  # its handler is built, with or without the middleware, here
        users[enabled] = []
        for k, token in enumerate(tokens):
            user = Client(_InProcess(clients[enabled]), token, random.Random(k))
            user.acked = dict.fromkeys(acked[token], "")
            users[enabled].append(user)
    rng = random.Random(11)
    errors = [0]

    def cpu_per_request(enabled: bool, n: int) -> float:
        with override_settings(METRICS_ENABLED=enabled):
            started = time.process_time()
            for _ in range(n):
                errors[0] += rng.choice(users[enabled]).op(rng.choice(names), serial).status_code >= 400
            return (time.process_time() - started) / n * 1000

    for enabled in (True, False):  # warm both (search snapshots, the model)
        cpu_per_request(enabled, batch // 2)
    on, off = [], []
    for round_ in range(rounds):
        for enabled in (True, False) if round_ % 2 == 0 else (False, True):
            (on if enabled else off).append(cpu_per_request(enabled, batch))
    return on, off, errors[0]


def ratios(on: list[float], off: list[float]) -> list[float]:
    """Each round's figure with metrics on against off's in the same round, less one."""
    return [a / b - 1 for a, b in zip(on, off, strict=True)]
