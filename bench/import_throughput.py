"""Import throughput and the OpenAI wrapper's added latency.

    .venv/bin/python bench/import_throughput.py [--conversations 500] [--turns 10] [--calls 200]

1. A generated ChatGPT-format export (`--conversations` x `--turns` user/assistant pairs: 10,000 messages by
   default) imported through the real path: the upload is read and checked, a Celery worker (its own process, on
   the PostgreSQL broker) writes it a share at a time, embeds the messages and extracts memories from the user
   turns. Figures: messages/s until every message is searchable (embedded), then user messages and memories
   extracted per second (over `--extract-seconds`; the rest is set aside). In the same run, the same messages
   through the raw append path (`messages_append`, 500 a call, the worker embedding and extracting them alike) for
   another user: messages/s until searchable.
2. `with_memory`'s added latency per chat call: the same chat calls to a local fake model server with a plain
   `openai.OpenAI` client and with the wrapped one, against Memento under gunicorn (a user with 200 memories);
   p50/p95 of the difference (the context fetch; appending runs in the background).

Works in its own database (memento_bench_imports) on the app's server; prints figures on stdout.
"""

import argparse
import os
import sys
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "clients" / "python"))

from bench.common import gunicorn, percentile, setup_django, wipe_users  # noqa: E402

DATABASE = "memento_bench_imports"
PREFIX = "bench-imports-"


def wait(predicate, *, timeout: float, what: str) -> float:
    """Seconds until `predicate()` holds (polled every 0.5 s)."""
    start = time.monotonic()
    while not predicate():
        if time.monotonic() - start > timeout:
            raise SystemExit(f"timed out waiting for {what}")
        time.sleep(0.5)
    return time.monotonic() - start


def _wipe() -> None:
    """The bench users and everything of theirs (raw deletes: a bench database, no history wanted)."""
    from django.contrib.auth import get_user_model
    from django.db import connection, transaction

    from core import rls

    ids = list(get_user_model().objects.filter(username__startswith=PREFIX).values_list("pk", flat=True))
    if ids:
        rls.activate(None, bypass=True)
        with transaction.atomic(), connection.cursor() as cursor:
            for table in ("store_itemvector", "memories_memoryevent", "memories_memoryhistory", "memories_memory",
                          "imports_importitem", "imports_import", "conversations_message",
                          "conversations_conversation"):
                cursor.execute(f"DELETE FROM {table} WHERE owner_id = ANY(%s)", [ids])
    wipe_users(PREFIX)


def import_throughput(args, database_url: str) -> None:
    from django.contrib.auth import get_user_model

    from bench.extraction import start_worker, use_broker
    from conversations.models import Conversation, Message
    from conversations.services import conversation_create, messages_append
    from imports import formats, services
    from imports.models import Import
    from memories.models import Memory
    from tests.imports.samples import chatgpt_export, dumps

    export = chatgpt_export(args.conversations, args.turns)
    raw = dumps(export)
    total = args.conversations * args.turns * 2
    print(f"export: {args.conversations} conversations, {total:,} messages, {len(raw) / 1e6:.1f} MB")
    # the broker's tables are made by their first user: the maintenance role (the app role may create none)
    broker = "sqla+" + os.environ["MAINTENANCE_DATABASE_URL"].replace("postgresql://", "postgresql+psycopg://", 1)
    use_broker(broker)
    worker = start_worker(database_url, broker)
    User = get_user_model()
    try:
        # warm the worker (model, parser) with a one-conversation import of another user
        warm = User.objects.create(username=f"{PREFIX}warm")
        services.import_upload(owner=warm, raw=dumps(chatgpt_export(1, 2, start=1.6e9)), filename="warm.json")
        wait(lambda: not Message.objects.filter(owner=warm, extraction_status="pending").exists()
             and Message.objects.filter(owner=warm).exists(), timeout=600, what="the warm-up")

        importer = User.objects.create(username=f"{PREFIX}import")
        start = time.monotonic()
        job = services.import_upload(owner=importer, raw=raw, filename="conversations.json")
        checked = time.monotonic() - start
        written = wait(lambda: Import.objects.get(pk=job.pk).status in ("completed", "failed"), timeout=3600,
                       what="the import") + checked
        mine = Message.objects.filter(owner=importer)
        searchable = wait(lambda: mine.count() == total and not mine.filter(embedding__isnull=True).exists(),
                          timeout=3600, what="embeddings") + written
        print(f"import: read+checked {checked:.1f} s, written {written:.1f} s, searchable {searchable:.1f} s "
              f"-> {total / searchable:,.0f} messages/s until searchable", flush=True)
        # extraction goes on at its own pace (16 user turns a task, in turn with other work): measured over a
        # window, then the rest is set aside so that the raw append path below starts on an idle worker too
        window_start, done_before = time.monotonic(), mine.exclude(extraction_status="pending").count()
        memories_before = Memory.objects.filter(owner=importer).count()
        try:
            wait(lambda: not mine.filter(extraction_status="pending").exists(), timeout=args.extract_seconds,
                 what="extraction")
        except SystemExit:
            pass
        window = time.monotonic() - window_start
        extracted = mine.exclude(extraction_status="pending").count() - done_before
        made = Memory.objects.filter(owner=importer).count() - memories_before
        print(f"extraction: {extracted / window:,.1f} user messages/s, {made / window:,.1f} memories/s "
              f"(over {window:.0f} s; {mine.filter(extraction_status='pending').count():,} user messages left)",
              flush=True)
        mine.filter(extraction_status="pending").update(extraction_status="skipped")
        again = time.monotonic()
        second = services.import_upload(owner=importer, raw=raw, filename="conversations.json")
        wait(lambda: Import.objects.get(pk=second.pk).status == "completed", timeout=3600, what="the re-import")
        print(f"same file again: {time.monotonic() - again:.1f} s, "
              f"{Conversation.objects.filter(owner=importer).count()} conversations (nothing added)", flush=True)

        appender = User.objects.create(username=f"{PREFIX}append")
        parsed = formats.read(raw)
        start = time.monotonic()
        for _, item in parsed.items:
            conversation = conversation_create(owner=appender, title=item["title"])
            messages = [{**m, "sent_at": datetime.fromisoformat(m["sent_at"])} for m in item["messages"]]
            for i in range(0, len(messages), 500):
                messages_append(conversation=conversation, messages=messages[i:i + 500])
        appended = time.monotonic() - start
        theirs = Message.objects.filter(owner=appender)
        raw_searchable = wait(lambda: not theirs.filter(embedding__isnull=True).exists(), timeout=3600,
                              what="raw embeddings") + appended
        print(f"raw append: appended {appended:.1f} s, searchable {raw_searchable:.1f} s -> "
              f"{total / raw_searchable:,.0f} messages/s until searchable", flush=True)
    finally:
        worker.terminate()
        worker.wait(timeout=30)


def wrapper_latency(args, database_url: str) -> None:
    import openai
    from django.contrib.auth import get_user_model
    from memento_client.openai_memory import with_memory

    from bench.ingest import make_texts
    from memories.batch import memory_batch_create
    from tests.fakes.openai_server import FakeOpenAIServer

    user = get_user_model().objects.create(username=f"{PREFIX}wrapper")
    memory_batch_create(owner=user, items=[{"content": text} for text in make_texts(200)])
    from accounts.services import token_create

    token = token_create(user=user, name="bench").key
    questions = [f"What do you know about {who}'s plans? ({i})" for i, who in
                 zip(range(args.calls), ["Emma", "Liam", "Olivia", "Noah", "Ava"] * args.calls, strict=False)]
    with FakeOpenAIServer() as model, gunicorn(database_url, workers=1, threads=4) as url:
        model.default_reply = "Noted."
        plain = openai.OpenAI(base_url=model.base_url, api_key="k")
        wrapped = with_memory(openai.OpenAI(base_url=model.base_url, api_key="k"), url=url, token=token,
                              timeout=30)
        for client in (plain, wrapped):  # warm up
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "hello"}])
        added = []
        for question in questions:
            messages = [{"role": "user", "content": question}]
            start = time.perf_counter()
            plain.chat.completions.create(model="m", messages=messages)
            middle = time.perf_counter()
            wrapped.chat.completions.create(model="m", messages=messages)
            added.append((time.perf_counter() - middle) - (middle - start))
        wrapped.flush()
        ms = [a * 1000 for a in added]
        print(f"with_memory added latency per chat call: p50 {percentile(ms, 50):.1f} ms, "
              f"p95 {percentile(ms, 95):.1f} ms (n={len(ms)}; 200 memories; context budget 800)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=500)
    parser.add_argument("--turns", type=int, default=10, help="user/assistant pairs per conversation")
    parser.add_argument("--calls", type=int, default=200, help="chat calls for the wrapper's latency")
    parser.add_argument("--extract-seconds", type=int, default=300, help="how long extraction is measured")
    parser.add_argument("--skip-import", action="store_true")
    parser.add_argument("--skip-wrapper", action="store_true")
    args = parser.parse_args()
    import logging

    logging.getLogger("httpx").setLevel(logging.WARNING)  # one line per request otherwise
    database_url = setup_django(DATABASE)
    os.environ.setdefault("MEMORY_EXTRACTION_TRIGGER", "message")
    _wipe()
    try:
        if not args.skip_import:
            import_throughput(args, database_url)
        if not args.skip_wrapper:
            wrapper_latency(args, database_url)
    finally:
        _wipe()


if __name__ == "__main__":
    main()
