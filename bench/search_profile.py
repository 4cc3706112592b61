"""Where a search's time goes, for a user of ~600 memories (a LoCoMo conversation loaded by
bench/locomo_recall.py): the search service with the query vector given, the whole HTTP path in this process
(middleware, token authentication, row-level security, view, service, serializer, and the bookkeeping write: Django's
test client closes the response before returning it, so this figure includes the write a real server does after
sending) with the query's vector already in the per-process cache, and the bookkeeping write alone.

    .venv/bin/python bench/locomo_recall.py            # once: loads the LoCoMo users into memento_bench
    .venv/bin/python bench/search_profile.py [--queries 300] [--profile service|http] [--sample N]

Prints p50/p95 per stage; with --profile, a pyinstrument report of that stage over the same queries (stderr).
Queries are LoCoMo's own questions for that conversation, so the SQL sees real matches.
"""

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import describe, setup_django  # noqa: E402
from bench.locomo_recall import DEFAULT_PATH, USER_PREFIX, load_dataset  # noqa: E402


def timed(call, items, cpu: list | None = None) -> list[float]:
    samples = []
    cpu_started = time.process_time()
    for item in items:
        started = time.perf_counter()
        call(item)
        samples.append(time.perf_counter() - started)
    if cpu is not None:  # this process's CPU time per call: what the load of other processes does not inflate much
        cpu.append((time.process_time() - cpu_started) / len(items))
    return samples


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversation", default="conv-26", help="LoCoMo sample id (its user must be loaded)")
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--profile", choices=("service", "http", ""), default="")
    parser.add_argument("--modes", default="hybrid,semantic,keyword")
    args = parser.parse_args()

    _, questions, _ = load_dataset(DEFAULT_PATH)
    setup_django(migrate=False)
    from django.contrib.auth import get_user_model
    from django.test import Client

    from accounts.services import token_create
    from core import rls
    from memories import services
    from memories.models import Memory, MemoryEvent
    from memories.search import embed_query, memory_search

    owner = get_user_model().objects.get(username=f"{USER_PREFIX}{args.conversation}")
    texts = [q.text for q in questions if q.sample_id == args.conversation]
    texts = (texts * (args.queries // max(len(texts), 1) + 1))[: args.queries]
    vectors = {text: embed_query(text, None, what="bench")[0] for text in texts}  # fills the per-process cache
    token = token_create(user=owner, name="bench").key
    client = Client(HTTP_AUTHORIZATION=f"Token {token}")
    total = Memory.objects.filter(owner=owner).count()
    print(f"user {owner.username}: {total} memories; {len(texts)} queries ({len(set(texts))} distinct), limit 10")

    def service(mode):
        def run(text):
            with rls.as_user(owner.pk):
                memory_search(owner=owner, query=text, mode=mode, limit=10, threshold=0 if mode == "semantic" else None,
                              query_vector=vectors[text])
        return run

    def http(mode):
        def run(text):
            response = client.post("/api/memories/search/", {"query": text, "limit": 10, "mode": mode},
                                   content_type="application/json")
            assert response.status_code == 200, response.content
        return run

    touched = [list(Memory.objects.filter(owner=owner).values_list("pk", flat=True)[:10])]

    def touch(_):
        services.memories_touch(memory_ids=touched[0], owner_id=owner.pk, action=MemoryEvent.Action.SEARCH,
                                query="bench")

    stages = []
    for mode in args.modes.split(","):
        stages += [(f"service {mode:8} (vector given)", service(mode)),
                   (f"HTTP    {mode:8} (vector cached)", http(mode))]
    stages.append(("bookkeeping write alone (10 ids)", touch))
    for _, run in stages:  # warm: connections, plans, caches
        timed(run, texts[:30])
    print(f"  {'':34} wall-clock latency{'':44}  Python CPU per call (this process)")
    for label, run in stages:
        cpu: list[float] = []
        samples = timed(run, texts, cpu)
        print(f"  {label:34} {describe(samples)}  {cpu[0] * 1000:6.2f} ms")

    if args.profile:
        from pyinstrument import Profiler

        run = service("hybrid") if args.profile == "service" else http("hybrid")
        profiler = Profiler(interval=0.0002)
        profiler.start()
        timed(run, texts)
        profiler.stop()
        print(profiler.output_text(unicode=False, color=False, show_all=False), file=sys.stderr)


if __name__ == "__main__":
    main()
