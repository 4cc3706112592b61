"""Markdown and plain text, and a file without text refused."""

import pytest

from documents import parsing


def test_markdown_structure():
    md = b"""---
title: front matter is skipped
---
# Project Atlas

Atlas is our **new** data platform, see [the docs](https://example.com/docs) and `atlas.yml`.
Second line of the same paragraph.

## Team

- Alice Moreau leads the design team.
- We decided to use PostgreSQL.

```python
# a comment, not a heading
print("hi")
```

Setext heading
--------------

| Name | Role |
|------|------|
| Alice | Design |

> A quote.
"""
    parsed = parsing.parse(md, parsing.MARKDOWN)
    assert [(b.text, b.heading_level, b.kind) for b in parsed.blocks] == [
        ("Project Atlas", 1, "heading"),
        ("Atlas is our new data platform, see the docs and atlas.yml. Second line of the same paragraph.", 0,
         "paragraph"),
        ("Team", 2, "heading"),
        ("Alice Moreau leads the design team.", 0, "paragraph"),
        ("We decided to use PostgreSQL.", 0, "paragraph"),
        ('# a comment, not a heading\nprint("hi")', 0, "code"),
        ("Setext heading", 2, "heading"),
        ("Name | Role", 0, "table"),
        ("Alice | Design", 0, "table"),
        ("A quote.", 0, "paragraph"),
    ]


def test_plain_text_paragraphs_and_encodings():
    parsed = parsing.parse(b"First line\nwrapped here.\n\n\nSecond paragraph.\r\n", parsing.TEXT)
    assert [b.text for b in parsed.blocks] == ["First line wrapped here.", "Second paragraph."]
    assert parsing.parse("Caf\u00e9 cr\u00e8me".encode("cp1252"), parsing.TEXT).blocks[0].text == "Caf\u00e9 cr\u00e8me"
    assert parsing.parse("\ufeffH\u00e9llo".encode("utf-8"), parsing.TEXT).blocks[0].text == "H\u00e9llo"
    assert parsing.parse("h\u00e9llo".encode("utf-16"), parsing.TEXT).blocks[0].text == "h\u00e9llo"


def test_a_file_without_text_is_refused():
    with pytest.raises(parsing.ParseError, match="no text"):
        parsing.parse(b"\n\n   \n", parsing.TEXT)
    with pytest.raises(parsing.ParseError, match="no text"):
        parsing.parse(b"# Only a heading\n", parsing.MARKDOWN)
