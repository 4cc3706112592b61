"""Recognising the kind of an upload, and file names."""

import io

import pytest

from documents import parsing
from tests.documents import files


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
