"""PDFs: pages, headings from bookmarks and numbered lines, hyphenation, encrypted and damaged files."""

import pytest

from documents import parsing
from tests.documents import files


def test_pdf_pages_headings_and_counts():
    data = files.make_pdf(
        [["1. Introduction", "", "Alice Moreau leads the design team. The audit is due on Friday, May 9.", "1"],
         ["2. Decisions", "We decided to use PostgreSQL.", "Page 2 of 2"]],
        title="Plan", bookmarks=[("Introduction", 0), ("Decisions", 1)],
    )
    parsed = parsing.parse(data, parsing.PDF)
    assert parsed.page_count == 2
    assert parsed.title == "Plan"
    assert [(b.text, b.heading_level, b.page) for b in parsed.blocks] == [
        ("1. Introduction", 1, 1),
        ("Alice Moreau leads the design team. The audit is due on Friday, May 9.", 0, 1),
        ("2. Decisions", 1, 2),
        ("We decided to use PostgreSQL.", 0, 2),
    ]  # page-number lines are dropped; bookmarks and numbered lines are one heading
    assert parsed.word_count == 2 + 14 + 2 + 5


def test_pdf_hyphenated_line_breaks_are_joined():
    data = files.make_pdf([["The migration plan is long and compli-", "cated, so it was split into phases."]])
    assert parsing.parse(data, parsing.PDF).blocks[0].text == (
        "The migration plan is long and complicated, so it was split into phases.")


def test_encrypted_pdf_is_refused_with_a_reason():
    data = files.encrypt_pdf(files.make_pdf([["Secret plans for the merger."]]))
    with pytest.raises(parsing.ParseError, match="encrypted"):
        parsing.parse(data, parsing.PDF)


@pytest.mark.parametrize("damage", ["truncated", "garbage", "no text"])
def test_damaged_pdf_is_refused_with_a_reason(damage):
    good = files.make_pdf([["Some text on a page."]] * 3)
    data = {
        "truncated": good[: len(good) // 2],
        "garbage": b"%PDF-1.7\n" + bytes(range(256)) * 20,
        "no text": files.make_pdf([[], []]),
    }[damage]
    with pytest.raises(parsing.ParseError, match="damaged|no text|no pages"):
        parsing.parse(data, parsing.PDF)


def test_a_pdf_stream_that_unpacks_past_the_limit_is_refused():
    lines = ["The same sentence again, as a compressed stream repeats it well."] * 3000  # ~200 KB of content
    data = files.make_pdf([lines], compress=True)
    assert len(data) < 20_000
    assert parsing.parse(data, parsing.PDF).page_count == 1  # the default limit (50 MB) reads it
    with pytest.raises(parsing.TooLarge, match="unpacks to more than 100 KB"):
        parsing.parse(data, parsing.PDF, parsing.Limits(unpacked_bytes=100 * 1024))


def test_pdf_reading_stops_at_the_first_page_past_the_text_limit():
    pages = [[f"Page {n} says that the budget review is due on Friday and Alice leads it."] for n in range(50)]
    data = files.make_pdf(pages)
    assert len(parsing.parse(data, parsing.PDF, parsing.Limits(text_chars=5000)).blocks) == 50
    with pytest.raises(parsing.TooLarge, match="more than 1,000 characters of text"):
        parsing.parse(data, parsing.PDF, parsing.Limits(text_chars=1000))
