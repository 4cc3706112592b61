"""Ingest throughput: memories per second through the batch endpoint over HTTP, next to the raw throughput of the
same embedding model in the same run (target: >= 80% of raw).

    .venv/bin/python bench/ingest.py [--memories 5000] [--batch 1000]

Runs against a dedicated database (memento_bench_ingest) on the embedded server (or DATABASE_URL's server) and a
gunicorn process it starts itself on a free port.
"""

import argparse
import os
import random
import sys
import time
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import bench_database_url, gunicorn  # noqa: E402

PEOPLE = ["Emma", "Liam", "Olivia", "Noah", "Ava", "Mia", "Lucas", "Sofia", "Ethan", "Zoe"]
PLACES = ["Berlin", "Lisbon", "Kyoto", "Toronto", "Nairobi", "Austin", "Oslo", "Lima", "Seoul", "Porto"]
THINGS = ["hiking", "sourdough baking", "chess", "jazz piano", "bouldering", "watercolour", "Rust", "Python",
          "marathon training", "birdwatching", "salsa dancing", "astronomy", "pottery", "sailing"]
TEMPLATES = [
    "{p} moved to {c} in {y} and loves {t}.",
    "{p} is allergic to {t2} and avoids it at restaurants in {c}.",
    "My friend {p} started {t} last {m} and practises every weekend near {c}.",
    "{p} prefers {t} over {t2}, especially on rainy days in {c}.",
    "In {m} {y}, {p} travelled to {c} for a conference about {t}.",
    "{p}'s daughter takes {t} lessons on Tuesdays; pick-up is at 5 pm in {c}.",
    "Remember that {p} wants a reminder about {t} before the trip to {c} in {m}.",
]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October"]


def make_texts(n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    texts = []
    for i in range(n):
        text = rng.choice(TEMPLATES).format(
            p=rng.choice(PEOPLE), c=rng.choice(PLACES), t=rng.choice(THINGS), t2=rng.choice(THINGS),
            m=rng.choice(MONTHS), y=rng.randint(2015, 2025),
        )
        texts.append(f"{text} (note {i})")
    return texts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=5000)
    parser.add_argument("--batch", type=int, default=1000)
    args = parser.parse_args()

    url = bench_database_url("memento_bench_ingest")
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memento.settings")
    import django

    django.setup()
    from django.contrib.auth import get_user_model
    from django.core.management import call_command

    from accounts.services import token_create
    from integrations.embeddings import get_provider
    from memories import services
    from memories.models import Memory

    call_command("migrate", verbosity=0)
    user, _ = get_user_model().objects.get_or_create(username="bench-ingest")
    for memory in Memory.objects.filter(owner=user).iterator():
        services.memory_forget(memory=memory)
    token = token_create(user=user, name="bench").key

    texts = make_texts(args.memories)
    provider = get_provider()
    provider.embed(texts[:64])  # warm up
    started = time.perf_counter()
    provider.embed(texts)
    raw_seconds = time.perf_counter() - started
    raw_rate = len(texts) / raw_seconds

    headers = {"Authorization": f"Token {token}"}
    with gunicorn(url, workers=1, threads=2, extra_args=("--timeout", "300")) as base:
        # warm up the web process (model load) outside the timing
        requests.post(f"{base}/api/memories/batch/", json={"items": [{"content": "warm-up", "key": "warm"}]},
                      headers=headers, timeout=300).raise_for_status()
        started = time.perf_counter()
        stored = 0
        for start in range(0, len(texts), args.batch):
            items = [{"content": t} for t in texts[start : start + args.batch]]
            response = requests.post(f"{base}/api/memories/batch/", json={"items": items}, headers=headers,
                                     timeout=600)
            response.raise_for_status()
            stored += sum(1 for r in response.json() if r["outcome"] == "created")
        http_seconds = time.perf_counter() - started
    http_rate = len(texts) / http_seconds

    print(f"memories: {len(texts)} ({stored} stored as new), batches of {args.batch}")
    print(f"raw embedding (same model, this process): {raw_rate:8.1f} texts/s  ({raw_seconds:.1f} s)")
    print(f"batch endpoint over HTTP, end to end:      {http_rate:8.1f} memories/s  ({http_seconds:.1f} s)")
    print(f"ratio: {http_rate / raw_rate:.0%} of raw embedding throughput (target >= 80%)")


if __name__ == "__main__":
    main()
