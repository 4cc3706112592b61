"""Which kind of file an upload is (by extension checked against content), and safe file names."""

import codecs
import re
import unicodedata
import zipfile
from pathlib import PurePosixPath

from documents.parsing.blocks import UnsupportedFileType

PDF, DOCX, HTML, MARKDOWN, TEXT = "pdf", "docx", "html", "markdown", "text"
MIME_TYPES = {
    PDF: "application/pdf",
    DOCX: "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    HTML: "text/html",
    MARKDOWN: "text/markdown",
    TEXT: "text/plain",
}
EXTENSIONS = {
    ".pdf": PDF, ".docx": DOCX, ".html": HTML, ".htm": HTML, ".xhtml": HTML, ".md": MARKDOWN,
    ".markdown": MARKDOWN, ".txt": TEXT, ".text": TEXT,
}
STORED_SUFFIX = {PDF: "pdf", DOCX: "docx", HTML: "html", MARKDOWN: "md", TEXT: "txt"}
SUPPORTED = "PDF, DOCX, HTML, Markdown or plain text (.pdf, .docx, .html, .htm, .md, .markdown, .txt)"
SNIFF_BYTES = 64 * 1024
MAX_FILENAME = 255



def sanitize_filename(name: str, *, fallback: str = "document") -> str:
    """The last path component only, without control characters or leading dots, at most 255 characters with
    the extension kept. Never empty."""
    name = unicodedata.normalize("NFC", str(name or "")).replace("\\", "/")
    name = PurePosixPath(name).name if "/" in name else name
    name = re.sub(r"[\t\n\r\f\v]", " ", name)
    name = "".join(ch for ch in name if not unicodedata.category(ch).startswith("C"))
    name = re.sub(r"\s+", " ", name).strip().lstrip(".").strip()
    if name in ("", ".", ".."):
        name = fallback
    if len(name) > MAX_FILENAME:
        stem, dot, suffix = name.rpartition(".")
        if dot and 0 < len(suffix) <= 16:
            name = stem[: MAX_FILENAME - len(suffix) - 1] + "." + suffix
        else:
            name = name[:MAX_FILENAME]
    return name


def _extension(name: str) -> str:
    suffix = PurePosixPath(name).suffix.lower()
    return suffix if len(suffix) > 1 else ""


def _is_docx(file) -> bool:
    try:
        file.seek(0)
        with zipfile.ZipFile(file) as archive:
            return "word/document.xml" in archive.namelist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return False
    finally:
        file.seek(0)


def _looks_like_text(head: bytes) -> bool:
    if head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return True
    if b"\x00" in head:
        return False
    text = codecs.getincrementaldecoder("utf-8")(errors="replace").decode(head, final=False)
    if not text:
        return True
    controls = sum(1 for ch in text if ch < " " and ch not in "\t\n\r\f\x0b")
    undecodable = text.count("\ufffd")
    if undecodable and undecodable / len(text) > 0.01:
        # not UTF-8: a legacy 8-bit encoding is still text when it has no control bytes
        text = head.decode("cp1252", errors="replace")
        controls = sum(1 for ch in text if ch < " " and ch not in "\t\n\r\f\x0b")
    return controls / len(text) < 0.01


def _looks_like_html(head: bytes) -> bool:
    start = head[:2048].lstrip(codecs.BOM_UTF8).lstrip().lower()
    return start.startswith((b"<!doctype html", b"<html")) or (start.startswith(b"<") and b"<body" in head.lower())


def detect_kind(filename: str, file) -> str:
    """The kind of an uploaded file (PDF, DOCX, HTML, MARKDOWN, TEXT), from its extension checked against its
    content; without an extension, from its content alone. Raises UnsupportedFileType with a clear message."""
    file.seek(0)
    head = file.read(SNIFF_BYTES)
    file.seek(0)
    extension = _extension(filename)
    claimed = EXTENSIONS.get(extension)
    if extension and claimed is None:
        raise UnsupportedFileType(f"Files of type '{extension}' are not supported. Upload {SUPPORTED}.")
    is_pdf = b"%PDF-" in head[:1024]
    if claimed == PDF:
        if not is_pdf:
            raise UnsupportedFileType("The file is named .pdf but its content is not a PDF.")
        return PDF
    if claimed == DOCX:
        if not _is_docx(file):
            raise UnsupportedFileType("The file is named .docx but its content is not a Word (DOCX) document.")
        return DOCX
    if claimed is not None:
        if not _looks_like_text(head):
            raise UnsupportedFileType(f"The file is named {extension} but its content is not text.")
        return claimed
    # no extension: the content decides
    if is_pdf:
        return PDF
    if head.startswith(b"PK\x03\x04") and _is_docx(file):
        return DOCX
    if _looks_like_text(head):
        return HTML if _looks_like_html(head) else TEXT
    raise UnsupportedFileType(f"The file's content is not a supported type. Upload {SUPPORTED}.")
