"""LongMemEval through the conversations pipeline: is the evidence in the context an agent gets, and for a knowledge
update, is the newest value there without the old one passing for current?

    .venv/bin/python bench/longmemeval_context.py [--set oracle|s|both] [--limit N] [--budget 1000] [--reuse]

Questions: the knowledge-update and temporal-reasoning questions of LongMemEval (Wu et al., ICLR 2025; MIT). `oracle`
takes them from the oracle file (only their evidence sessions) leaving out the 48 questions of the S subset: the
tuning set. `s` takes the subset's own questions of those types with their whole LongMemEval_S haystack (~490 turns
each): held out, report only, never tune on it. Abstention questions (`_abs`, no evidence) are left out.

Each question gets a user of its own; its sessions become conversations through the service layer, in date order,
each turn with its session's date as `sent_at` (a second apart). Messages are embedded and every user turn is
extracted and reconciled inline (what the worker's tasks run). Then the question goes through the context selector
at `--budget` tokens. Reported per question type:
- evidence recall: the share of the question's evidence turns (`has_answer`) in front of the agent (a turn shown in
  an excerpt, or a memory extracted from it), and the share of questions with all of it;
- answer string: the answer (short answers only, <= 4 words) appears in the context text;
- knowledge updates: the newest evidence turn (the latest session's) is in the context, and each older evidence turn
  is absent or marked past: "strict" counts a memory line or an excerpt turn not marked "no longer true" as
  present, "as memory" only a memory line.

Data: ../shared/bench/longmemeval/ (never copied into this repository). Runs in its own database
(memento_bench_longmemeval).
"""

import argparse
import json
import os
import re
import statistics
import sys
import time
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from bench.common import progress, setup_django, wipe_users  # noqa: E402

DATA = ROOT.parent / "shared" / "bench" / "longmemeval"
ORACLE, SUBSET = "longmemeval_oracle.json", "longmemeval_s_subset48.json"
TYPES = ("knowledge-update", "temporal-reasoning")
PREFIX = "lme-ctx-"
APPEND_MAX = 500
SHORT_ANSWER_WORDS = 4


def when(text: str) -> datetime:
    """LongMemEval's "2023/05/20 (Sat) 02:21" as a UTC moment."""
    day, _, clock = text.partition(" (")
    return datetime.strptime(f"{day} {clock.split(') ')[-1]}", "%Y/%m/%d %H:%M").replace(tzinfo=UTC)


def questions(data: Path, which: str, limit: int | None) -> list[dict]:
    held_out = json.loads((data / SUBSET).read_text())
    if which == "s":
        pool = held_out
    else:
        skip = {q["question_id"] for q in held_out}
        pool = [q for q in json.loads((data / ORACLE).read_text()) if q["question_id"] not in skip]
    chosen = []
    for kind in TYPES:
        of_kind = [q for q in pool if q["question_type"] == kind and not q["question_id"].endswith("_abs")]
        chosen += of_kind[:limit] if limit else of_kind
    return chosen


def sessions(question: dict) -> list[tuple[datetime, str, list[dict]]]:
    """(date, session id, turns), oldest first (the oracle file is not in date order)."""
    return sorted(zip(map(when, question["haystack_dates"]), question["haystack_session_ids"],
                      question["haystack_sessions"], strict=True), key=lambda s: s[0])


def load(chosen: list[dict], *, tag: str, reuse: bool):
    """A user per question with its sessions appended, embedded, extracted and reconciled (every user turn); returns
    the users."""
    from django.contrib.auth import get_user_model

    from conversations import processing, services
    from conversations.models import Conversation, Message
    from core import rls

    User = get_user_model()
    queued: list[tuple[list[str], list[str]]] = []
    services._send_embedding = lambda ids, extract: queued.append((ids, extract))  # run here, not on commit
    users = {}
    for question in progress(chosen, desc=f"loading {tag}"):
        name = f"{PREFIX}{tag}-{question['question_id']}"
        turns = sum(len(s) for s in question["haystack_sessions"])
        user = User.objects.filter(username=name).first()
        if user is not None and reuse:
            rls.activate(user.pk)
            if Message.objects.filter(owner=user).count() == turns:
                users[question["question_id"]] = user
                continue
        if user is not None:
            wipe_users(name)
        user = User.objects.create(username=name)
        users[question["question_id"]] = user
        rls.activate(user.pk)
        queued.clear()
        for moment, session_id, session in sessions(question):
            conversation = Conversation.objects.create(owner=user, title=session_id)
            messages = [{"role": turn["role"] if turn["role"] in ("user", "assistant") else "user",
                         "content": turn["content"] or "(empty)", "client_message_id": f"{session_id}:{i}",
                         "sent_at": moment + timedelta(seconds=i)} for i, turn in enumerate(session)]
            for start in range(0, len(messages), APPEND_MAX):
                services.messages_append(conversation=conversation, messages=messages[start:start + APPEND_MAX])
        rls.activate(None, bypass=True)  # the worker's view
        for ids, _ in queued:
            processing.messages_embed(message_ids=ids)
        # every user turn the appends made due, in order (the owner's task takes them all; only an append that
        # finds none queued sends one, so the ids queued above are not all of them)
        due = Message.objects.filter(owner=user, extraction_status=Message.Extraction.PENDING,
                                     extraction_queued_at__isnull=False).order_by("sent_at", "sequence", "pk")
        for message_id in due.values_list("pk", flat=True):
            processing.message_extract(message_id=message_id)
    return users


def evidence(question: dict) -> list[tuple[datetime, str]]:
    """(session date, turn id) of the question's evidence turns, oldest first."""
    return [(moment, f"{session_id}:{i}") for moment, session_id, session in sessions(question)
            for i, turn in enumerate(session) if turn.get("has_answer")]


def normalised(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", str(text).lower())).strip()


def evaluate(chosen: list[dict], users: dict, budget: int, show_updates: bool = False) -> dict:
    from conversations.context import context_for
    from conversations.models import Message
    from core import rls
    from memories.models import Memory

    rows = defaultdict(lambda: defaultdict(list))
    for question in progress(chosen, desc="questions"):
        user = users[question["question_id"]]
        rls.activate(user.pk)
        turn_of = dict(Message.objects.filter(owner=user).values_list("pk", "client_message_id"))
        context = context_for(owner=user, query=question["question"], budget=budget)
        in_excerpts, as_current, as_past = set(), set(), set()
        for item in context.items:
            if item.type == "profile":
                as_current.update(turn_of.get(m) for m in Memory.objects.filter(pk__in=item.memory_ids)
                                  .values_list("message_id", flat=True))
            elif item.type == "excerpt":
                in_excerpts.update(m.client_message_id for m in item.messages if m.pk not in item.outdated)
                as_past.update(m.client_message_id for m in item.messages if m.pk in item.outdated)
            elif item.memory.message_id:
                marked = "[no longer true" in item.text
                (as_past if marked else as_current).add(turn_of.get(item.memory.message_id))
        shown = in_excerpts | as_current | as_past
        wanted = evidence(question)
        row = rows[question["question_type"]]
        row["tokens"].append(context.used_tokens)
        row["past"].append(context.past)
        if wanted:
            found = [t for _, t in wanted if t in shown]
            row["recall"].append(len(found) / len(wanted))
            row["all"].append(len(found) == len(wanted))
        answer = normalised(question["answer"])
        if answer and len(answer.split()) <= SHORT_ANSWER_WORDS:
            row["answer"].append(f" {answer} " in f" {normalised(context.text)} ")
        if question["question_type"] == "knowledge-update" and len({m for m, _ in wanted}) > 1:
            newest_day = wanted[-1][0]
            newest = [t for m, t in wanted if m == newest_day]
            older = [t for m, t in wanted if m != newest_day]
            has_newest = any(t in shown for t in newest)
            row["newest"].append(has_newest)
            row["update strict"].append(has_newest and not any(t in in_excerpts | as_current for t in older))
            row["update as memory"].append(has_newest and not any(t in as_current for t in older))
            if show_updates and not row["update as memory"][-1]:
                stale = [i.text for i in context.items if i.type == "memory" and i.memory.message_id
                         and turn_of.get(i.memory.message_id) in older and "[no longer true" not in i.text]
                print(f"\n{question['question']} -> {question['answer']!r}; shown as current from older turns:",
                      *(f"\n    {text}" for text in stale))
        row["superseded"].append(Memory.objects.filter(owner=user, superseded_by__isnull=False).count())
        row["memories"].append(Memory.objects.filter(owner=user, is_active=True).count())
    return rows


def report(tag: str, chosen: list[dict], rows: dict, budget: int, seconds: float) -> None:
    turns = sum(len(s) for q in chosen for s in q["haystack_sessions"])
    print(f"\nLongMemEval {tag}: {len(chosen)} questions, {turns} turns; budget {budget} tokens; "
          f"loaded and evaluated in {seconds:.0f} s; load average {os.getloadavg()[0]:.2f}")

    def mean(values) -> str:
        return f"{statistics.mean(values):.3f} (n={len(values)})" if values else "-"

    for kind in TYPES:
        row = rows.get(kind)
        if not row:
            continue
        print(f"  {kind}:")
        print(f"    evidence recall {mean(row['recall'])}; all evidence shown {mean(row['all'])}")
        print(f"    answer string in the context (short answers) {mean(row['answer'])}")
        if row["newest"]:
            print(f"    newest value present {mean(row['newest'])}; newest present and old absent or marked past: "
                  f"strict {mean(row['update strict'])}, as memory {mean(row['update as memory'])}")
        print(f"    tokens used {statistics.mean(row['tokens']):.0f}; past asked {mean(row['past'])}; memories "
              f"{statistics.mean(row['memories']):.1f}, superseded {statistics.mean(row['superseded']):.2f} "
              f"per question")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--set", choices=("oracle", "s", "both"), default="oracle")
    parser.add_argument("--limit", type=int, default=None, help="the first N questions of each type")
    parser.add_argument("--budget", type=int, default=1000)
    parser.add_argument("--reuse", action="store_true", help="keep users whose messages are all loaded")
    parser.add_argument("--show-updates", action="store_true",
                        help="print the memory lines of older evidence turns a knowledge update shows as current")
    parser.add_argument("--floor", type=float, default=None, help="override EXCERPT_FLOOR (tuning, oracle only)")
    parser.add_argument("--turn-tokens", type=int, default=None, help="override TURN_TOKENS (tuning, oracle only)")
    args = parser.parse_args()

    setup_django("memento_bench_longmemeval")
    from conversations import context, excerpts
    from memories.models import Memory  # noqa: F401 - models loaded before the service imports

    if args.floor is not None:
        context.EXCERPT_FLOOR = args.floor
    if args.turn_tokens is not None:
        excerpts.TURN_TOKENS = args.turn_tokens
    for tag in (("oracle", "s") if args.set == "both" else (args.set,)):
        chosen = questions(args.data, tag, args.limit)
        started = time.perf_counter()
        users = load(chosen, tag=tag, reuse=args.reuse)
        rows = evaluate(chosen, users, args.budget, args.show_updates)
        report(tag, chosen, rows, args.budget, time.perf_counter() - started)


if __name__ == "__main__":
    main()
