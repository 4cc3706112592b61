"""Document pipeline throughput: a generated 200-page PDF and a 1 MB Markdown file, end to end (upload, parse,
chunk, embed, extract and reconcile memories, every write committed as in production), in pages/s and tokens/s,
next to the raw embedding throughput of the same chunks with the same model in the same run (target: end to end
>= 70% of raw tokens/s).

    .venv/bin/python bench/documents.py [--pages 200] [--markdown-mb 1.0]

Runs in this process against a dedicated database (memento_bench_documents) on the app's PostgreSQL server, with
uploads in a temporary MEDIA_ROOT. Tokens are word pieces of the embedding model's tokenizer (what it reads).
"""

import argparse
import os
import random
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.common import setup_django, wipe_users  # noqa: E402

USER = "bench-documents"


def pdf_pages(pages: int, seed: int = 3, lines_per_page: int = 46) -> list[list[str]]:
    """`pages` pages of ~480 words: numbered section headings, paragraphs, facts now and then."""
    from tests.documents import files

    rng = random.Random(seed)
    lines: list[str] = []
    section = 0
    while len(lines) < pages * lines_per_page:
        section += 1
        lines += [f"{section}. {rng.choice(['Planning', 'Architecture', 'Staffing', 'Budget', 'Risks'])} notes", ""]
        for paragraph in range(rng.randint(3, 6)):
            text = [rng.choice(files.FILLER) for _ in range(rng.randint(4, 7))]
            if paragraph % 2 == 0:
                text.insert(rng.randrange(len(text) + 1), rng.choice(files.fact_sentences(rng)))
            lines += textwrap.wrap(" ".join(text), 95) + [""]
    return [lines[i * lines_per_page:(i + 1) * lines_per_page] for i in range(pages)]


def markdown_file(megabytes: float, seed: int = 4) -> bytes:
    from tests.documents import files

    parts, size, n = [], 0, 0
    while size < megabytes * 1024 * 1024:
        n += 1
        chunk = files.as_markdown(files.sample_sections(seed * 1000 + n, sections=4, paragraphs=5),
                                  title=f"Handbook part {n}")
        parts.append(chunk)
        size += len(chunk) + 1
    return b"\n".join(parts)[: int(megabytes * 1024 * 1024)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=200)
    parser.add_argument("--markdown-mb", type=float, default=1.0)
    args = parser.parse_args()

    media = tempfile.mkdtemp(prefix="memento-bench-media-")
    os.environ["MEDIA_ROOT"] = media
    setup_django("memento_bench_documents")
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.core.files.uploadedfile import SimpleUploadedFile

    from documents import chunking, parsing, processing, services, tasks
    from documents.models import Document
    from integrations.embeddings import get_provider
    from memories.models import Memory
    from tests.documents import files

    # the bench runs the task's body itself, in this process: nothing is queued for a worker
    tasks.process_document.delay = lambda *args, **kwargs: None
    wipe_users(USER)
    user = get_user_model().objects.create(username=USER)
    provider = get_provider()
    # warm up as a running worker is warm (model loaded, kernels and queries compiled): one small document each
    for name, data in (("warm.pdf", files.make_pdf(pdf_pages(12, seed=99))), ("warm.md", markdown_file(0.05, 99))):
        warm = services.document_upload(owner=user, file=SimpleUploadedFile(name, data))
        processing.document_process(document_id=warm.pk)
        services.document_delete(document=warm)

    inputs = [
        (f"{args.pages}-page PDF", "bench.pdf", files.make_pdf(pdf_pages(args.pages), title="Bench PDF")),
        (f"{args.markdown_mb:g} MB Markdown", "bench.md", markdown_file(args.markdown_mb)),
    ]
    rows = []
    for label, name, data in inputs:
        kind = parsing.EXTENSIONS[Path(name).suffix]
        chunks = chunking.chunk_blocks(parsing.parse(data, kind).blocks)
        texts = [c.content for c in chunks]
        tokens = sum(c.token_count for c in chunks)

        def raw(texts: list[str] = texts) -> float:
            started = time.perf_counter()
            for i in range(0, len(texts), processing.embed_batch_size()):
                provider.embed(texts[i:i + processing.embed_batch_size()])
            return time.perf_counter() - started

        # the machine is shared: raw embedding is timed before and after the end-to-end run and averaged, so
        # that a burst of other load does not favour one side
        loads = [os.getloadavg()[0]]
        raw_before = raw()
        loads.append(os.getloadavg()[0])
        started = time.perf_counter()
        document = services.document_upload(owner=user, file=SimpleUploadedFile(name, data))
        processing.document_process(document_id=document.pk)
        seconds = time.perf_counter() - started
        loads.append(os.getloadavg()[0])
        raw_after = raw()
        loads.append(os.getloadavg()[0])
        document = Document.objects.get(pk=document.pk)
        assert document.processing_status == Document.Status.COMPLETED, document.error_message
        memories = Memory.objects.filter(source_ref__document_id=str(document.pk), is_active=True).count()
        rows.append((label, len(data), document, tokens, (raw_before, raw_after), seconds, memories, loads))

    print(f"model: {settings.EMBEDDING_MODEL} ({settings.EMBEDDING_PROVIDER}), {processing.embed_batch_size()} chunks "
          f"per embedding call, {processing.batch_size()} per transaction, "
          f"chunks <= {chunking.MAX_TOKENS} word pieces, CPUs: {os.cpu_count()}")
    for label, size, document, tokens, (raw_before, raw_after), seconds, memories, loads in rows:
        raw_seconds = (raw_before + raw_after) / 2
        raw_rate, rate = tokens / raw_seconds, tokens / seconds
        print(f"\n{label}: {size / 1024 / 1024:.2f} MB, {document.word_count} words, {document.chunks_total} chunks, "
              f"{tokens} tokens, {memories} memories derived")
        print(f"  raw embedding (same chunks, same model): {raw_rate:8.0f} tokens/s (mean of {raw_before:.1f} s "
              f"before and {raw_after:.1f} s after)")
        line = f"  end to end (upload -> completed):        {rate:8.0f} tokens/s ({seconds:.1f} s)"
        if document.page_count:
            line += f", {document.page_count / seconds:.1f} pages/s"
        print(line)
        print(f"  ratio: {rate / raw_rate:.0%} of raw embedding throughput (target >= 70%)")
        print("  1-minute load average at raw / end-to-end / raw boundaries: "
              + " / ".join(f"{load:.1f}" for load in loads))
    wipe_users(USER)


if __name__ == "__main__":
    main()
