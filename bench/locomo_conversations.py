"""LoCoMo through the conversations pipeline: what an agent gets back from what was said.

    .venv/bin/python bench/locomo_conversations.py [--set first|last|all] [--budgets 500,1000,2000] [--reuse]

Every LoCoMo conversation goes through the conversations service as two users, one per speaker (their own turns
as `user`, the other's as `assistant`, each with the speaker's name and `sent_at` from the session's date): the
messages are appended in calls of up to 500, embedded (what the worker's task runs) and then every user turn is
extracted into memories by the configured extractor (the local one unless an LLM is configured). Then every
question of categories 1-4 goes through the context selector for both users, each with half the budget; a
question's evidence recall is the share of its evidence turns in front of the agent (a turn shown in an excerpt,
or a memory extracted from it), averaged over questions.

Also printed: append-to-searchable messages/s next to the raw embedding throughput of the same texts in the
same run (before and after), memories made per user turn, LoCoMo's annotated observations kept as memories (an
observation of speaker S is kept when a memory extracted from its evidence turn has cosine >= 0.5 to it), and
memories made from turns that only ask questions.

Tune on the first five conversations (conv-26 .. conv-43, `--set first`); the last five (`--set last`) are the
figures that count. Data: ../shared/bench/locomo10.json (CC BY-NC 4.0; never copied into this repository).
Runs in its own database (memento_bench_conversations).
"""

import argparse
import json
import os
import random
import re
import statistics
import sys
import time
from collections import defaultdict
from datetime import timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import progress, setup_django, wipe_users  # noqa: E402
from bench.locomo_recall import CATEGORIES, DEFAULT_PATH, load_dataset  # noqa: E402

PREFIX = "locomo-conv-"
SETS = {"first": slice(0, 5), "last": slice(5, 10), "all": slice(0, 10), "one": slice(5, 6)}
APPEND_MAX = 500
KEPT_COSINE = 0.5


def username(sample_id: str, speaker: str) -> str:
    return f"{PREFIX}{sample_id}-{speaker.lower()}"


def observations(sample: dict) -> list[tuple[str, str, list[str]]]:
    """(speaker, observation, evidence dia ids) of one LoCoMo sample."""
    out = []
    for session in sample.get("observation", {}).values():
        for speaker, items in session.items():
            for text, evidence in items:
                ids = evidence if isinstance(evidence, list) else re.findall(r"D\d+:\d+", str(evidence))
                out.append((speaker, text, [i for i in ids if isinstance(i, str)]))
    return out


def load(samples, turns, *, reuse: bool):
    """Append every conversation for both speakers; returns per-user stats and the users."""
    from django.contrib.auth import get_user_model

    from conversations import processing, services
    from conversations.models import Conversation, Message
    from core import rls
    from integrations.embeddings import get_provider

    User = get_user_model()
    provider = get_provider()
    queued: list[tuple[list[str], list[str]]] = []
    services._send_embedding = lambda ids, extract: queued.append((ids, extract))  # timed here, not on commit
    users, stats = {}, []
    for sample in progress(samples, desc="conversations"):
        sample_id = sample["sample_id"]
        speakers = (sample["conversation"]["speaker_a"], sample["conversation"]["speaker_b"])
        for speaker in speakers:
            name = username(sample_id, speaker)
            user = User.objects.filter(username=name).first()
            if user is not None and reuse and Message.objects.filter(owner=user).count() == len(turns[sample_id]):
                users[(sample_id, speaker)] = user
                continue
            if user is not None:
                wipe_users(name)
            user = User.objects.create(username=name)
            users[(sample_id, speaker)] = user
            rls.activate(user.pk)
            conversation = Conversation.objects.create(owner=user, title=sample_id)
            messages = []
            for index, turn in enumerate(turns[sample_id]):
                messages.append({
                    "role": "user" if turn.speaker == speaker else "assistant", "name": turn.speaker,
                    "content": turn.text, "client_message_id": turn.dia_id,
                    # turns of a session share its date; a second apart keeps their order visible
                    "sent_at": turn.happened_at + timedelta(seconds=index),
                })
            texts = [f"{m['name']}: {m['content']}" for m in messages]

            def raw(texts=texts) -> float:
                started = time.perf_counter()
                for i in range(0, len(texts), 64):
                    provider.embed(texts[i:i + 64])
                return time.perf_counter() - started

            raw_before = raw()
            queued.clear()
            started = time.perf_counter()
            for i in range(0, len(messages), APPEND_MAX):
                services.messages_append(conversation=conversation, messages=messages[i:i + APPEND_MAX])
            rls.activate(None, bypass=True)  # the worker's view
            for ids, _ in queued:
                processing.messages_embed(message_ids=ids)
            searchable = time.perf_counter() - started
            raw_after = raw()
            started = time.perf_counter()
            # every user turn the appends made due (the owner's task takes them all, 16 at a time; only the first
            # append of a conversation sends it, so the ids queued above are only that append's)
            due = Message.objects.filter(owner=user, extraction_status=Message.Extraction.PENDING,
                                         extraction_queued_at__isnull=False).order_by("created_at", "pk")
            for message_id in due.values_list("pk", flat=True):
                processing.message_extract(message_id=message_id)
            extracted = time.perf_counter() - started
            stats.append({"messages": len(messages), "searchable": searchable, "raw": (raw_before, raw_after),
                          "extracted": extracted, "user_turns": sum(m["role"] == "user" for m in messages),
                          "load": os.getloadavg()[0]})
    return users, stats


def evaluate(samples, questions, users, budgets: list[int]):
    from conversations.context import context_for
    from conversations.models import Message
    from core import rls
    from integrations.embeddings import embed_texts
    from memories.models import Memory

    by_sample = defaultdict(list)
    for q in questions:
        by_sample[q.sample_id].append(q)
    recall = {b: defaultdict(list) for b in budgets}
    used = {b: [] for b in budgets}
    dia = {}  # message id -> dia id, per user
    for sample in samples:
        for (sample_id, _), user in users.items():
            if sample_id == sample["sample_id"]:
                rls.activate(user.pk)
                dia.update({m.pk: m.client_message_id for m in Message.objects.filter(owner=user)
                            .only("id", "client_message_id")})
    for sample in progress(samples, desc="questions"):
        sample_id = sample["sample_id"]
        owners = [u for (s, _), u in users.items() if s == sample_id]
        qs = by_sample[sample_id]
        vectors = embed_texts([q.text for q in qs])
        for q, vector in zip(qs, vectors, strict=True):
            for budget in budgets:
                shown, tokens = set(), 0
                for owner in owners:
                    rls.activate(owner.pk)
                    context = context_for(owner=owner, query=q.text, budget=budget // len(owners),
                                          query_vector=vector)
                    tokens += context.used_tokens
                    for item in context.items:
                        if item.type == "excerpt":
                            shown.update(m.client_message_id for m in item.messages)
                        elif item.type == "profile":
                            shown.update(dia.get(m) for m in Memory.objects.filter(
                                pk__in=item.memory_ids).values_list("message_id", flat=True))
                        elif item.memory.message_id:
                            shown.add(dia.get(item.memory.message_id))
                found = sum(1 for e in q.evidence if e in shown) / len(q.evidence)
                recall[budget][q.category].append(found)
                recall[budget]["all"].append(found)
                used[budget].append(tokens)
    return recall, used


def memory_report(samples, users, turns):
    from core import rls
    from integrations.embeddings import embed_texts
    from memories.models import Memory

    kept = total = 0
    made, user_turns, question_made = 0, 0, 0
    sample_memories = []
    for sample in samples:
        sample_id = sample["sample_id"]
        obs = observations(sample)
        for speaker in (sample["conversation"]["speaker_a"], sample["conversation"]["speaker_b"]):
            user = users[(sample_id, speaker)]
            rls.activate(user.pk)
            memories = list(Memory.objects.filter(owner=user, is_active=True, message__isnull=False)
                            .select_related("message"))
            made += len(memories)
            user_turns += sum(1 for t in turns[sample_id] if t.speaker == speaker)
            sample_memories += [(m.message.content, m.content) for m in memories]
            question_made += sum(1 for m in memories if _only_questions(m.message.content))
            by_turn = defaultdict(list)
            for m in memories:
                by_turn[m.message.client_message_id].append(m)
            mine = [(text, ev) for s, text, ev in obs if s == speaker]
            if not mine:
                continue
            vectors = embed_texts([text for text, _ in mine])
            for (_, evidence), vector in zip(mine, vectors, strict=True):
                total += 1
                candidates = [m for e in evidence for m in by_turn.get(e, []) if m.embedding is not None]
                if any(_cosine(vector, m.embedding) >= KEPT_COSINE for m in candidates):
                    kept += 1
    return {"kept": kept, "observations": total, "memories": made, "user_turns": user_turns,
            "from_questions": question_made, "sample": random.Random(7).sample(sample_memories,
                                                                               min(20, len(sample_memories)))}


def _only_questions(text: str) -> bool:
    sentences = [s for s in re.split(r"(?<=[.!?])\s+", text.strip()) if s]
    return bool(sentences) and all(s.rstrip().endswith("?") for s in sentences)


def _cosine(a, b) -> float:
    return float(sum(x * y for x, y in zip(a, b, strict=True)))  # unit vectors


def arguments(description: str, *, default_set: str) -> argparse.ArgumentParser:
    """The options every LoCoMo conversations bench takes: the data file, the set, --reuse and --every."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("path", nargs="?", type=Path, default=DEFAULT_PATH)
    parser.add_argument("--set", choices=sorted(SETS), default=default_set)
    parser.add_argument("--reuse", action="store_true", help="keep users whose messages are all loaded")
    parser.add_argument("--every", type=int, default=1, help="every Nth question only (quick tuning runs)")
    return parser


def chosen(args) -> tuple[list, dict, list]:
    """The set's conversations (LoCoMo samples), every turn, and the set's questions (every Nth)."""
    samples = json.loads(args.path.read_text())[SETS[args.set]]
    turns, questions, _ = load_dataset(args.path)
    wanted = {s["sample_id"] for s in samples}
    return samples, turns, [q for q in questions if q.sample_id in wanted][::args.every]


def main() -> None:
    parser = arguments(__doc__.splitlines()[0], default_set="last")
    parser.add_argument("--budgets", default="500,1000,2000")
    args = parser.parse_args()
    budgets = [int(b) for b in args.budgets.split(",")]

    setup_django("memento_bench_conversations")
    from django.conf import settings

    from memories.models import Memory  # noqa: F401 - models loaded before the service imports

    samples, turns, questions = chosen(args)
    wanted = {s["sample_id"] for s in samples}

    started = time.perf_counter()
    users, stats = load(samples, turns, reuse=args.reuse)
    loaded = time.perf_counter() - started
    recall, used = evaluate(samples, questions, users, budgets)
    report = memory_report(samples, users, turns)

    from integrations import llm

    print(f"LoCoMo conversations {args.set} ({', '.join(sorted(wanted))}): {len(questions)} questions "
          f"(categories 1-4), {sum(len(turns[s]) for s in wanted)} turns x 2 users")
    print(f"extractor: {'LLM ' + settings.MEMORY_LLM_MODEL if llm.llm_configured() else 'local'}; "
          f"embedding: {settings.EMBEDDING_MODEL}; loaded in {loaded:.0f} s; load average {os.getloadavg()[0]:.2f}")
    if stats:
        messages = sum(s["messages"] for s in stats)
        searchable = messages / sum(s["searchable"] for s in stats)
        raw_before = messages / sum(s["raw"][0] for s in stats)
        raw_after = messages / sum(s["raw"][1] for s in stats)
        raw_mean = (raw_before + raw_after) / 2
        print(f"\nappend -> searchable: {searchable:.1f} messages/s; raw embedding of the same texts "
              f"{raw_before:.1f} before / {raw_after:.1f} after ({100 * searchable / raw_mean:.0f}% of their mean)")
        extraction = sum(s["user_turns"] for s in stats) / sum(s["extracted"] for s in stats)
        print(f"extraction (after searchable): {extraction:.1f} user turns/s")
    print("\nevidence recall (share of a question's evidence turns in the context; both users, half the budget "
          "each):")
    header = f"{'budget':>7} {'all':>6} " + " ".join(f"{CATEGORIES[c]:>12}" for c in sorted(CATEGORIES))
    print(header + f" {'tokens used':>12}")
    for budget in budgets:
        row = recall[budget]
        print(f"{budget:>7} {statistics.mean(row['all']):>6.3f} "
              + " ".join(f"{statistics.mean(row[c]) if row[c] else 0:>12.3f}" for c in sorted(CATEGORIES))
              + f" {statistics.mean(used[budget]):>12.0f}")
    print(f"\nmemories: {report['memories']} from {report['user_turns']} user turns "
          f"({report['memories'] / max(report['user_turns'], 1):.2f} per turn); from question-only turns: "
          f"{report['from_questions']}")
    print(f"observations kept as memories from their evidence turn (cosine >= {KEPT_COSINE}): "
          f"{report['kept']} of {report['observations']} ({report['kept'] / max(report['observations'], 1):.3f})")
    print("\na random sample of memories (turn -> memory):")
    for turn, memory in report["sample"]:
        print(f"  {turn[:90]!r}\n    -> {memory}")


if __name__ == "__main__":
    main()
