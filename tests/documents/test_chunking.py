"""Chunks: within the model's window (counted with its tokenizer), ~10% overlap, structure kept, nothing lost."""

import re
import sys

import pytest

from documents import chunking, parsing
from documents.parsing import Block
from integrations import embeddings
from integrations.embeddings import WINDOW_TOKENS, count_tokens
from tests.documents import files


def _words(text: str) -> list[str]:
    return re.findall(r"\w+", text)


def _chunks(data: bytes, kind: str):
    return chunking.chunk_blocks(parsing.parse(data, kind).blocks)


def test_every_chunk_fits_the_window_and_counts_are_real():
    sections = files.sample_sections(3, sections=8, paragraphs=5)
    for kind, data in [(parsing.MARKDOWN, files.as_markdown(sections)), (parsing.PDF, files.as_pdf(sections)),
                       (parsing.TEXT, files.as_text(sections))]:
        chunks = _chunks(data, kind)
        assert len(chunks) > 10
        for chunk in chunks:
            assert chunk.token_count == count_tokens(chunk.content) <= WINDOW_TOKENS
        # packed: chunks are mostly close to the window, not tiny
        assert sum(c.token_count for c in chunks) / len(chunks) > 0.75 * WINDOW_TOKENS


def test_consecutive_chunks_of_a_section_overlap_by_about_ten_percent():
    chunks = _chunks(files.as_text(files.sample_sections(4, sections=1, paragraphs=12)), parsing.TEXT)
    assert len(chunks) > 3
    assert chunks[0].metadata["overlap_chars"] == 0
    for previous, chunk in zip(chunks, chunks[1:], strict=False):
        overlap = chunk.content[: chunk.metadata["overlap_chars"]].strip()
        assert overlap and previous.content.endswith(overlap)
        assert 0 < count_tokens(overlap) <= chunking.OVERLAP_TOKENS == WINDOW_TOKENS // 10


def test_no_text_is_lost_and_order_is_kept():
    sections = files.sample_sections(5, sections=4, paragraphs=6)
    source = _words(" ".join(p for _, body in sections for p in body))
    chunks = _chunks(files.as_text(sections), parsing.TEXT)
    rebuilt = []
    for chunk in chunks:
        rebuilt += _words(chunk.content[chunk.metadata["overlap_chars"]:])
    assert rebuilt == source


def test_overlong_sentences_and_words_are_split_not_truncated():
    run_on = " ".join(f"word{i}" for i in range(3000))  # no sentence end at all
    blob = "x" * 5000  # one "word" of ~1000 word pieces
    chunks = chunking.chunk_blocks([Block(run_on), Block(blob), Block("A short closing sentence.")])
    assert all(count_tokens(c.content) <= WINDOW_TOKENS for c in chunks)
    body = [c.content[c.metadata["overlap_chars"]:] for c in chunks]
    joined = " ".join(body)
    assert "".join(re.findall(r"x+", joined)) == blob
    assert [w for w in _words(joined) if w.startswith("word")] == _words(run_on)
    assert body[-1].endswith("A short closing sentence.")


def test_headings_open_chunks_and_travel_in_metadata():
    md = files.as_markdown(files.sample_sections(6, sections=3, paragraphs=3), title="Handbook")
    chunks = _chunks(md, parsing.MARKDOWN)
    first = chunks[0]
    assert first.content.startswith("Handbook\n\n1. ")  # the title and the first section's heading together
    assert first.metadata["heading_level"] == 2
    assert first.metadata["section_path"][0] == "Handbook"
    titles = [c.metadata["section_title"] for c in chunks]
    assert len(set(titles)) == 3
    for title in set(titles):
        opening = next(c for c in chunks if c.metadata["section_title"] == title)
        assert title in opening.content.split("\n\n")[:2]
        assert opening.metadata["overlap_chars"] == 0  # no overlap across a heading


def test_pdf_chunks_know_their_pages():
    sections = files.sample_sections(7, sections=6, paragraphs=5)
    chunks = _chunks(files.as_pdf(sections, lines_per_page=30), parsing.PDF)
    pages = [(c.page_number, c.metadata["page_end"]) for c in chunks]
    assert pages[0][0] == 1
    assert all(start <= end for start, end in pages)
    assert [start for start, _ in pages] == sorted(start for start, _ in pages)
    assert any(start < end for start, end in pages)  # a chunk may continue onto the next page
    assert pages[-1][1] > 5


def test_chunking_is_deterministic():
    md = files.as_markdown(files.sample_sections(8))
    first, second = _chunks(md, parsing.MARKDOWN), _chunks(md, parsing.MARKDOWN)
    assert [(c.content, c.metadata, c.page_number) for c in first] == [
        (c.content, c.metadata, c.page_number) for c in second]


# --- bounded work (issue 25: one long paragraph held the worker for 27 minutes) ---------------------------------


def _traced_lines(text: str) -> int:
    """Python lines executed in documents/chunking.py while chunking one paragraph: a count of work that does not
    depend on the machine's speed."""
    executed = 0

    def trace(frame, event, arg):
        nonlocal executed
        if frame.f_code.co_filename != chunking.__file__:
            return None
        if event == "line":
            executed += 1
        return trace

    sys.settrace(trace)
    try:
        chunking.chunk_blocks([Block(text)])
    finally:
        sys.settrace(None)
    return executed


def test_one_long_paragraph_costs_linear_work():
    small = _traced_lines(" ".join(["word"] * 6_000))
    large = _traced_lines(" ".join(["word"] * 24_000))  # four times as long
    assert large < 5 * small  # quadratic work would be ~16 times


class _RecordingTokenizer:
    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.longest = 0

    def encode_batch(self, texts, **kwargs):
        self.longest = max([self.longest, *(len(t) for t in texts)])
        return self.tokenizer.encode_batch(texts, **kwargs)


def test_the_tokenizer_reads_bounded_stretches_of_a_paragraph_without_sentences_or_spaces(monkeypatch):
    recording = _RecordingTokenizer(embeddings.tokenizer())
    monkeypatch.setattr(embeddings, "tokenizer", lambda: recording)
    run_on = " ".join(f"word{i}" for i in range(20_000))  # ~130,000 characters, no sentence end
    blob = "-." * 20_000  # no space at all
    chunks = chunking.chunk_blocks([Block(run_on), Block(blob)])
    assert recording.longest <= chunking.SPAN_CHARS
    assert all(c.token_count <= WINDOW_TOKENS for c in chunks)
    body = " ".join(c.content[c.metadata["overlap_chars"]:] for c in chunks)
    assert [w for w in _words(body) if w.startswith("word")] == _words(run_on)


def test_too_many_chunks_stop_the_work_as_soon_as_they_are_made(monkeypatch):
    recording = _RecordingTokenizer(embeddings.tokenizer())
    calls = []
    real = recording.encode_batch
    monkeypatch.setattr(recording, "encode_batch", lambda texts, **kw: calls.append(len(texts)) or real(texts, **kw))
    monkeypatch.setattr(embeddings, "tokenizer", lambda: recording)
    monkeypatch.setattr(chunking, "ENCODE_BATCH", 16)
    text = " ".join(f"word{i}" for i in range(60_000))  # ~140 spans, ~1,000 chunks
    with pytest.raises(parsing.TooLarge, match="more than 10 passages"):
        chunking.chunk_blocks([Block(text)], max_chunks=10)
    assert sum(calls) <= 32  # the spans of the first chunks read, not the whole paragraph


def test_a_deadline_stops_chunking_with_a_reason_and_cancellation_stops_it_quietly(monkeypatch):
    text = " ".join(["word"] * 2_000)
    with pytest.raises(parsing.WorkBudgetExceeded, match="took longer than"):
        chunking.chunk_blocks([Block(text)], deadline=parsing.Deadline(-1))
    monkeypatch.setattr(parsing.Deadline, "poll_seconds", 0)
    asked = []
    with pytest.raises(parsing.Cancelled):
        chunking.chunk_blocks([Block(text)], deadline=parsing.Deadline(None, cancelled=lambda: asked.append(1) or 1))
    assert asked == [1]
