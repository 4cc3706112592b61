"""Reading each supported format into blocks, recognising kinds, and file names."""

import io

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


def test_html_drops_navigation_scripts_and_page_chrome():
    html = b"""<!doctype html><html><head><title>Team page</title><script>var secret = 'xyz';</script>
    <style>.nav { color: red }</style></head><body>
    <header><a href="/">Home</a><nav><a href="/about">About us</a></nav></header>
    <div role="navigation">Breadcrumbs here</div>
    <main><h1>Team</h1><p>Alice Moreau leads the <b>design</b> team.</p><div>Loose text.<p>Nested.</p></div>
    <ul><li>First item</li><li>Second item</li></ul><pre>code  block</pre>
    <table><tr><th>Name</th><th>Role</th></tr><tr><td>Bruno</td><td>Backend</td></tr></table>
    <p hidden>Invisible</p><aside>Related links</aside><noscript>Enable JS</noscript></main>
    <footer>Copyright 2025</footer></body></html>"""
    parsed = parsing.parse(html, parsing.HTML)
    assert parsed.title == "Team page"
    assert [(b.text, b.heading_level) for b in parsed.blocks] == [
        ("Team", 1), ("Alice Moreau leads the design team.", 0), ("Loose text.", 0), ("Nested.", 0),
        ("First item", 0), ("Second item", 0), ("code  block", 0), ("Name | Role", 0), ("Bruno | Backend", 0),
    ]
    text = " ".join(b.text for b in parsed.blocks)
    for dropped in ("secret", "Home", "About us", "Breadcrumbs", "Invisible", "Related", "Enable JS", "Copyright"):
        assert dropped not in text


def test_html_without_main_keeps_the_body_but_drops_site_header_and_footer():
    html = b"<html><body><header>Site name</header><h2>News</h2><p>The launch is on Monday.</p>" \
           b"<footer>Imprint</footer></body></html>"
    parsed = parsing.parse(html, parsing.HTML)
    assert [b.text for b in parsed.blocks] == ["News", "The launch is on Monday."]


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


@pytest.mark.parametrize(("name", "data", "kind"), [
    ("a.pdf", files.make_pdf([["x"]]), parsing.PDF),
    ("report", files.make_pdf([["x"]]), parsing.PDF),
    ("a.DOCX", files.make_docx([("p", "x")]), parsing.DOCX),
    ("noext", files.make_docx([("p", "x")]), parsing.DOCX),
    ("page.htm", b"<p>hi</p>", parsing.HTML),
    ("page", b"<!DOCTYPE html><html><body>hi</body></html>", parsing.HTML),
    ("notes.md", b"# hi", parsing.MARKDOWN),
    ("notes.markdown", b"# hi", parsing.MARKDOWN),
    ("notes.txt", b"hi", parsing.TEXT),
    ("README", b"plain words", parsing.TEXT),
])
def test_kinds_are_recognised(name, data, kind):
    assert parsing.detect_kind(name, io.BytesIO(data)) == kind


@pytest.mark.parametrize(("name", "data", "message"), [
    ("virus.exe", b"MZ\x90\x00", "'.exe' are not supported"),
    ("photo.png", b"\x89PNG\r\n\x1a\n", "'.png' are not supported"),
    ("old.doc", b"\xd0\xcf\x11\xe0", "'.doc' are not supported"),
    ("fake.pdf", b"just text", "not a PDF"),
    ("fake.docx", b"PK\x03\x04 not really a zip", "not a Word"),
    ("binary.txt", b"\x00\x01\x02\x03binary", "not text"),
    ("image", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not a supported type"),
])
def test_unsupported_kinds_are_refused(name, data, message):
    with pytest.raises(parsing.UnsupportedFileType, match=message):
        parsing.detect_kind(name, io.BytesIO(data))


@pytest.mark.parametrize(("raw", "clean"), [
    ("../../etc/passwd", "passwd"),
    ("..\\..\\windows\\win.ini", "win.ini"),
    ("/abs/path/report.pdf", "report.pdf"),
    ("bad\x00na\x1bme\u202e.txt", "badname.txt"),
    ("  .hidden.md ", "hidden.md"),
    ("..", "document"),
    ("", "document"),
    ("a   b\tc.md", "a b c.md"),
])
def test_file_names_are_sanitised(raw, clean):
    assert parsing.sanitize_filename(raw) == clean


def test_long_file_names_keep_their_extension():
    name = parsing.sanitize_filename("x" * 400 + ".pdf")
    assert len(name) == 255 and name.endswith(".pdf")
