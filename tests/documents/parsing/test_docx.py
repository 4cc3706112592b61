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
