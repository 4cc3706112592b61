"""Context latency: the context at a 1,000-token budget beside memory search for the same owner, in process and
over HTTP (a served app), query embedding included, and where the context's time goes.

Owners (bench/context_owners.py): one LoCoMo conversation (~600 messages), LongMemEval S haystacks (~500 messages
in ~50 sessions), 10,000 and 100,000 generated messages.

- In process: `context_for` and `memory_search` in turn for each question, the process's query-vector cache cleared
  before each call (every timing embeds its query); the context's parts timed (embedding, memory search, message
  search, excerpts, profile block, packing and the rest).
- Over HTTP: the app under gunicorn (one worker, one thread, as `serve` runs its web processes), one connection;
  `GET /api/conversations/<id>/context/` and `POST /api/memories/search/` interleaved. The server keeps its own
  query-vector cache, so the two are asked different questions (alternate questions of the owner's list) and no
  question twice: every request embeds its query. A few other questions warm the server first.

The ratio context p95 / memory search p95 of the same run is printed per owner: it moves far less with the
machine's load than either figure. A fingerprint of each owner's context texts tells whether a change altered what
the context returns.

    .venv/bin/python bench/context_latency.py [--owners locomo,lme,gen-10k,gen-100k] [--questions 60]
        [--budget 1000] [--rounds 2] [--lme 2] [--no-http] [--reuse] [--quick]
"""

import argparse
import hashlib
import logging
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import gunicorn, percentile, setup_django  # noqa: E402
from bench.context_owners import owners  # noqa: E402

DATABASE = "memento_bench_context"
PARTS = ("embedding", "memory search", "message search", "excerpts", "profile block")
WARM_UP = 8  # questions the served app answers first (imports, plans, the model), not timed


def timed_parts(spent: dict):
    """Wrap the parts `context_for` calls (as conversations.context names them) to add their time to `spent`."""
    from conversations import context

    def wrap(name, part):
        original = getattr(context, name, None)
        if original is None:  # an older version of the module (a before/after run): that part goes untimed
            return

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent[part] += time.perf_counter() - started

        setattr(context, name, timed)

    for name, part in (("embed_query", "embedding"), ("memory_search", "memory search"),
                       ("message_hits", "message search"), ("excerpts", "excerpts"),
                       ("profile_block", "profile block")):
        wrap(name, part)


def figures(values: list[float]) -> str:
    ms = [1000 * v for v in values]
    return f"p50 {statistics.median(ms):6.1f} ms  p95 {percentile(ms, 95):6.1f} ms"


def in_process(user, questions: list[str], *, budget: int, rounds: int) -> tuple[list, list, dict, str]:
    """(context seconds, search seconds, mean seconds per part, fingerprint of the context texts)."""
    from conversations.context import context_for
    from core import rls
    from memories.search import memory_search
    from memories.search.query import _query_vector

    rls.activate(user.pk)
    spent: dict[str, float] = defaultdict(float)
    timed_parts(spent)
    contexts, searches, texts = [], [], []
    for round_ in range(rounds):
        last = round_ == rounds - 1
        spent.clear()
        for question in questions:
            _query_vector.cache_clear()
            started = time.perf_counter()
            context = context_for(owner=user.pk, query=question, budget=budget)
            elapsed = time.perf_counter() - started
            _query_vector.cache_clear()
            started = time.perf_counter()
            memory_search(owner=user.pk, query=question, limit=20)
            if last:
                contexts.append(elapsed)
                searches.append(time.perf_counter() - started)
                texts.append(context.text)
    parts = {part: spent[part] / len(questions) for part in PARTS}
    parts["packing, rest"] = sum(contexts) / len(questions) - sum(parts.values())
    return contexts, searches, parts, hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:12]


def over_http(base: str, user, questions: list[str], *, budget: int) -> tuple[list, list]:
    """(context seconds, search seconds) from the served app at `base`, each question asked once (see the module's
    docstring)."""
    import httpx

    from accounts.services import token_create
    from conversations.models import Conversation
    from core import rls

    rls.activate(user.pk)
    token = token_create(user=user, name="context bench").key
    conversation = Conversation.objects.filter(owner=user).order_by("created_at").values_list("pk", flat=True)[0]
    http = httpx.Client(base_url=base, timeout=120, headers={"Authorization": f"Token {token}"})

    def context(question):
        response = http.get(f"/api/conversations/{conversation}/context/", params={"query": question,
                                                                                   "budget": budget})
        assert response.status_code == 200, response.text[:300]

    def search(question):
        response = http.post("/api/memories/search/", json={"query": question, "limit": 20})
        assert response.status_code == 200, response.text[:300]

    for question in questions[:WARM_UP]:
        context(question)
        search(question)
    contexts, searches = [], []
    for i, question in enumerate(questions[WARM_UP:]):
        call, times = (context, contexts) if i % 2 == 0 else (search, searches)
        started = time.perf_counter()
        call(question)
        times.append(time.perf_counter() - started)
    return contexts, searches


def ratio(contexts: list[float], searches: list[float]) -> str:
    return f"context p95 / memory search p95 = {percentile(contexts, 95) / percentile(searches, 95):.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--owners", default="locomo,lme,gen-10k,gen-100k")
    parser.add_argument("--sample", type=int, default=5, help="which LoCoMo conversation (0-9)")
    parser.add_argument("--lme", type=int, default=2, help="how many LongMemEval S haystacks")
    parser.add_argument("--questions", type=int, default=60, help="per owner in process (HTTP: twice as many)")
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2, help="in-process passes over the questions (the first "
                                                              "warms up)")
    parser.add_argument("--no-http", action="store_true", help="in process only")
    parser.add_argument("--reuse", action="store_true", help="keep owners whose messages are all loaded")
    parser.add_argument("--quick", action="store_true", help="a smoke test: the LoCoMo owner, 10 questions")
    args = parser.parse_args()
    if args.quick:
        args.owners, args.questions, args.rounds = "locomo", 10, 2  # the first round warms the process

    url = setup_django(DATABASE)
    logging.getLogger("httpx").setLevel(logging.WARNING)
    from django.conf import settings
    from kombu import Connection

    from conversations.models import Message
    from core import rls
    from memento.roles import grant_app_role
    from memories.models import Memory

    with Connection(settings.CELERY_BROKER_URL) as broker:  # the broker's tables, made by the owner
        broker.default_channel.session  # noqa: B018
    chosen = owners(args.owners.split(","), reuse=args.reuse, sample=args.sample, lme=args.lme)
    grant_app_role()  # tables made by this process, usable by the served app
    print(f"budget {args.budget}, query embedding included; in process: round {args.rounds} of {args.rounds}")
    results = []
    for name, user, questions in chosen:
        rls.activate(user.pk)
        messages = Message.objects.filter(owner=user).count()
        memories = Memory.objects.filter(owner=user, is_active=True).count()
        asked = questions[:args.questions]
        contexts, searches, parts, digest = in_process(user, asked, budget=args.budget, rounds=args.rounds)
        print(f"\n{name}: {messages} messages, {memories} memories; {len(asked)} questions")
        print(f"  in process  context {figures(contexts)} | memory search {figures(searches)} | "
              f"{ratio(contexts, searches)}")
        print("    parts (mean): " + ", ".join(f"{part} {1000 * spent:.1f}" for part, spent in parts.items())
              + " ms")
        print(f"    contexts' fingerprint {digest}")
        results.append((name, user, questions))
    if args.no_http:
        return
    env = {"OMP_NUM_THREADS": "1", "MEMENTO_DATABASE_ROLE": "app"}
    with gunicorn(url, workers=1, threads=1, env=env) as base:
        print("\nover HTTP (gunicorn 1 worker x 1 thread, one connection):")
        for name, user, questions in results:
            asked = questions[:WARM_UP + 2 * args.questions]
            contexts, searches = over_http(base, user, asked, budget=args.budget)
            print(f"  {name}: context {figures(contexts)} (n={len(contexts)}) | memory search {figures(searches)} "
                  f"(n={len(searches)}) | {ratio(contexts, searches)}")


if __name__ == "__main__":
    main()
