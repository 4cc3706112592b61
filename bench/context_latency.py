"""Context latency in-process: `context_for` at a 1,000-token budget beside memory search for the same questions,
query embedding included, and where the context's time goes (embedding, memory search, message search, excerpts,
profile block, packing).

One LoCoMo conversation (../shared/bench/locomo10.json, ~600 turns) is loaded for one of its speakers through
conversations.services (messages appended and embedded as the worker would), the speaker's LoCoMo observations as
memories (memory_batch_create); nothing is copied into the repository. Its questions are asked in turn, each with
the process's query-vector cache cleared first, so that every timing includes embedding the query.

    .venv/bin/python bench/context_latency.py [--sample 5] [--questions 40] [--budget 1000] [--reuse]
"""

import argparse
import hashlib
import json
import statistics
import sys
import time
from collections import defaultdict
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.common import setup_django, wipe_users  # noqa: E402
from bench.locomo_recall import DEFAULT_PATH, load_dataset  # noqa: E402

PREFIX = "ctx-latency-"
APPEND_MAX = 500
PARTS = ("embedding", "memory search", "message search", "excerpts", "profile block")


def load(sample: dict, turns, *, reuse: bool):
    """The bench user for `sample`'s first speaker, with every turn as a message and their observations as
    memories."""
    from django.conf import settings
    from django.contrib.auth import get_user_model

    from bench.locomo_conversations import observations
    from conversations import services
    from conversations.models import Conversation, Message
    from core import rls
    from memories.batch import memory_batch_create

    speaker = sample["conversation"]["speaker_a"]
    name = f"{PREFIX}{sample['sample_id']}"
    User = get_user_model()
    user = User.objects.filter(username=name).first()
    if user is not None and reuse and Message.objects.filter(owner=user).count() == len(turns):
        return user
    if user is not None:
        wipe_users(name)
    user = User.objects.create(username=name)
    rls.activate(user.pk)
    queued: list[list[str]] = []
    services._send_embedding = lambda ids, extract: queued.append(ids)  # embedded below, not by a worker
    conversation = Conversation.objects.create(owner=user, title=sample["sample_id"])
    messages = [{"role": "user" if t.speaker == speaker else "assistant", "name": t.speaker, "content": t.text,
                 "client_message_id": t.dia_id, "sent_at": t.happened_at + timedelta(seconds=i)}
                for i, t in enumerate(turns)]
    for i in range(0, len(messages), APPEND_MAX):
        services.messages_append(conversation=conversation, messages=messages[i:i + APPEND_MAX])
    rls.activate(None, bypass=True)  # the worker's view
    for ids in queued:
        services.messages_embed(message_ids=ids)
    rls.activate(user.pk)
    facts = [{"content": text} for who, text, _ in observations(sample) if who == speaker]
    for i in range(0, len(facts), settings.MEMORY_BATCH_MAX):
        memory_batch_create(owner=user, items=facts[i:i + settings.MEMORY_BATCH_MAX])
    return user


def timed_parts(spent: dict):
    """Wrap the parts `context_for` calls (as conversations.context names them) to add their time to `spent`."""
    from conversations import context

    def wrap(name, part):
        original = getattr(context, name)

        def timed(*args, **kwargs):
            started = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent[part] += time.perf_counter() - started

        setattr(context, name, timed)

    for name, part in (("embed_query", "embedding"), ("memory_search", "memory search"),
                       ("message_search", "message search"), ("_excerpts", "excerpts"),
                       ("profile_block", "profile block")):
        wrap(name, part)


def percentiles(values: list[float]) -> str:
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return f"p50 {1000 * statistics.median(ordered):6.1f} ms  p95 {1000 * p95:6.1f} ms"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--sample", type=int, default=5, help="which LoCoMo conversation (0-9)")
    parser.add_argument("--questions", type=int, default=40)
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=2, help="passes over the questions (the first warms up)")
    parser.add_argument("--dump", type=Path, help="write each question's context text here (JSON)")
    parser.add_argument("--reuse", action="store_true", help="keep the user when all its messages are loaded")
    args = parser.parse_args()

    setup_django("memento_bench_context")
    from conversations.context import context_for
    from conversations.models import Message
    from core import rls
    from memories.models import Memory
    from memories.search import memory_search
    from memories.search.query import _query_vector

    sample = json.loads(args.path.read_text())[args.sample]
    turns, questions, _ = load_dataset(args.path)
    sample_turns = turns[sample["sample_id"]]
    questions = [q.text for q in questions if q.sample_id == sample["sample_id"]][:args.questions]
    user = load(sample, sample_turns, reuse=args.reuse)
    rls.activate(user.pk)
    messages = Message.objects.filter(owner=user).count()
    memories = Memory.objects.filter(owner=user, is_active=True).count()

    spent: dict[str, float] = defaultdict(float)
    timed_parts(spent)
    context_times, search_times, texts = [], [], []
    for round_ in range(args.rounds):
        last = round_ == args.rounds - 1
        if last:
            spent.clear()
        for question in questions:
            _query_vector.cache_clear()
            started = time.perf_counter()
            context = context_for(owner=user.pk, query=question, budget=args.budget)
            elapsed = time.perf_counter() - started
            _query_vector.cache_clear()
            started = time.perf_counter()
            memory_search(owner=user.pk, query=question, limit=20)
            searched = time.perf_counter() - started
            if last:
                context_times.append(elapsed)
                search_times.append(searched)
                texts.append(context.text)
    total = sum(context_times)
    print(f"LoCoMo {sample['sample_id']}: {messages} messages, {memories} memories; {len(questions)} questions, "
          f"budget {args.budget}, round {args.rounds} of {args.rounds}, query embedding included")
    print(f"  context       {percentiles(context_times)}")
    print(f"  memory search {percentiles(search_times)}")
    print("where the context's time goes (mean per question; the searches include their own embedding call):")
    for part in PARTS:
        print(f"  {part:<15} {1000 * spent[part] / len(questions):6.1f} ms")
    print(f"  {'packing, rest':<15} {1000 * (total - sum(spent.values())) / len(questions):6.1f} ms")
    digest = hashlib.sha256("\x00".join(texts).encode()).hexdigest()[:12]
    print(f"contexts' fingerprint (the same texts before and after a change): {digest}")
    if args.dump:
        args.dump.write_text(json.dumps(dict(zip(questions, texts, strict=True)), indent=1))


if __name__ == "__main__":
    main()
