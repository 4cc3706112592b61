"""Word documents: headings from styles, paragraphs, table rows; damaged files."""

import pytest

from documents import parsing
from tests.documents import files


def test_docx_headings_paragraphs_and_tables():
    data = files.make_docx([("h1", "Plan"), ("p", "Alice leads the design team."), ("h2", "Budget"),
                            ("table", "Item|Cost\nServers|100"), ("p", "")], title="The plan")
    parsed = parsing.parse(data, parsing.DOCX)
    assert parsed.title == "The plan"
    assert [(b.text, b.heading_level, b.kind) for b in parsed.blocks] == [
        ("Plan", 1, "heading"), ("Alice leads the design team.", 0, "paragraph"), ("Budget", 2, "heading"),
        ("Item | Cost", 0, "table"), ("Servers | 100", 0, "table"),
    ]
    assert parsed.page_count is None and parsed.word_count == 11


def test_corrupt_docx_is_refused():
    data = files.make_docx([("p", "Hello there, this is fine.")])
    with pytest.raises(parsing.ParseError, match="damaged"):
        parsing.parse(data[:200], parsing.DOCX)


def test_a_zip_bomb_is_refused_from_the_archive_directory():
    bomb = files.zip_bomb_docx()  # ~200 KB that unpacks to 52 MB
    assert len(bomb) < 400 * 1024
    with pytest.raises(parsing.TooLarge, match=r"document.xml unpacks from .* KB to 52 MB \(more than 100 times"):
        parsing.parse(bomb, parsing.DOCX)
    # however high the size limit
    with pytest.raises(parsing.TooLarge, match="more than 100 times"):
        parsing.check_archive(bomb, parsing.Limits(unpacked_bytes=10**10))


def test_an_ordinary_document_passes_the_archive_check():
    data = files.as_docx(files.sample_sections(3))
    parsing.check_archive(data)
    parsing.check_archive(data[:100])  # damaged: left for the parser to say so
    with pytest.raises(parsing.TooLarge, match=r"unpacks to [\d.]+ KB; the most a document may unpack to is 20 KB"):
        parsing.check_archive(data, parsing.Limits(unpacked_bytes=20 * 1024))


def test_reading_stops_at_the_text_limit():
    data = files.as_docx(files.sample_sections(5, sections=20))
    text = sum(len(block.text) for block in parsing.parse(data, parsing.DOCX).blocks)
    assert text > 40_000
    with pytest.raises(parsing.TooLarge, match="more than 10,000 characters of text"):
        parsing.parse(data, parsing.DOCX, parsing.Limits(text_chars=10_000))
    assert parsing.parse(data, parsing.DOCX, parsing.Limits(text_chars=text)).blocks
