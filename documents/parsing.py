"""From an uploaded file to structured text: which kind of file it is (by extension and content), and its blocks
(headings with their level, paragraphs, table rows, code) in reading order, with the page each one is on.

Supported: PDF (pypdf), DOCX (python-docx), HTML (BeautifulSoup; navigation, scripts and page chrome dropped),
Markdown and plain text. Everything here is pure: no database, no Django models.
"""

import codecs
import io
import re
import unicodedata
import zipfile
from dataclasses import dataclass
from pathlib import PurePosixPath

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


class UnsupportedFileType(Exception):
    """The file is not one of the supported kinds (or its content does not match its extension)."""


class ParseError(Exception):
    """The file is of a supported kind but cannot be read (damaged, encrypted, no text); the message is for
    people."""


@dataclass
class Block:
    """A unit of the document's structure: a heading (`heading_level` 1-6) or body text (`heading_level` 0)."""

    text: str
    heading_level: int = 0
    page: int | None = None
    kind: str = "paragraph"  # heading | paragraph | table | code


@dataclass
class ParsedDocument:
    blocks: list[Block]
    page_count: int | None
    word_count: int
    title: str = ""


# --- file names and kinds -------------------------------------------------------------------------------------


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


# --- text helpers ---------------------------------------------------------------------------------------------


def decode_text(data: bytes) -> str:
    """Bytes of a text file as str: BOMs honoured, UTF-8 preferred, Windows-1252 as the fallback."""
    if data.startswith(codecs.BOM_UTF8):
        return data[len(codecs.BOM_UTF8):].decode("utf-8", errors="replace")
    if data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)):
        return data.decode("utf-16", errors="replace")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


_SPACES = re.compile(r"[ \t\f\v\u00a0\u2000-\u200b\u3000]+")
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def _clean(text: str) -> str:
    """One paragraph's text: control characters dropped, runs of spaces (and line breaks) made one space."""
    return _SPACES.sub(" ", _CONTROL.sub("", text).replace("\r", " ").replace("\n", " ")).strip()


_WORD = re.compile(r"\S*\w\S*")


def _word_count(blocks: list[Block]) -> int:
    """Whitespace-separated words with at least one letter or digit (a table's '|' is not a word)."""
    return sum(len(_WORD.findall(block.text)) for block in blocks)


def _result(blocks: list[Block], page_count: int | None = None, title: str = "") -> ParsedDocument:
    blocks = [b for b in blocks if b.text]
    return ParsedDocument(blocks=blocks, page_count=page_count, word_count=_word_count(blocks), title=title)


def _paragraphs(text: str, page: int | None = None) -> list[Block]:
    """Plain text: blank lines separate paragraphs; hard-wrapped lines are joined (hyphenation undone)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    blocks = []
    for part in re.split(r"\n\s*\n", text):
        part = re.sub(r"(\w)-\n(\w)", r"\1\2", part)
        cleaned = _clean(part)
        if cleaned:
            blocks.append(Block(cleaned, page=page))
    return blocks


# --- PDF ------------------------------------------------------------------------------------------------------

_PARAGRAPH_END = (".", "!", "?", ":", '"', "\u201d", ")")
_PAGE_NUMBER_LINE = re.compile(r"^\s*(?:page\s*)?\d{1,5}(?:\s*(?:of|/)\s*\d{1,5})?\s*$", re.IGNORECASE)
_NUMBERED_HEADING = re.compile(r"^(\d{1,2}(?:\.\d{1,2}){0,3})\.?\s+([A-Z][^.!?:;,]{1,70})$")
_CHAPTER_HEADING = re.compile(r"^(?:chapter|part|section|appendix)\s+[\dIVXLC]+[A-Z]?\b.{0,70}$", re.IGNORECASE)


def _pdf_heading(line: str) -> int:
    """Heading level of a line that stands alone as a numbered or chapter heading, or 0 (precision over
    recall: body text never becomes a heading by accident)."""
    if len(line) > 80 or len(line.split()) > 10:
        return 0
    match = _NUMBERED_HEADING.match(line)
    if match:
        return min(match.group(1).count(".") + 1, 6)
    if _CHAPTER_HEADING.match(line) and not line.rstrip().endswith((".", ",", ";")):
        return 1
    return 0


def _heading_key(title: str) -> str:
    """A heading compared without its section number and case: "2.1 Scope" and "Scope" match."""
    return re.sub(r"^\d{1,2}(?:\.\d{1,2}){0,3}\.?\s+", "", title.strip()).lower()


def _outline_titles(reader) -> dict[int, list[tuple[str, int]]]:
    """Bookmarks by 0-based page: [(title, level)], from the PDF's outline when it has one."""
    found: dict[int, list[tuple[str, int]]] = {}

    def walk(items, level):
        for item in items:
            if isinstance(item, list):
                walk(item, level + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)
            except Exception:  # noqa: BLE001 - a broken bookmark must not fail the document
                continue
            title = _clean(str(getattr(item, "title", "") or ""))
            if title and page is not None and page >= 0:
                found.setdefault(page, []).append((title, min(level, 6)))

    try:
        walk(reader.outline, 1)
    except Exception:  # noqa: BLE001
        return {}
    return found


def _pdf_page_blocks(text: str, page: int, bookmarks: list[tuple[str, int]]) -> list[Block]:
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").replace("\r", "\n").split("\n")]
    lines = [line for line in lines if not _PAGE_NUMBER_LINE.match(line)]
    marks = {_heading_key(title): level for title, level in bookmarks}
    blocks: list[Block] = []
    buffer: list[str] = []

    def flush():
        if buffer:
            blocks.extend(_paragraphs("\n".join(buffer), page))
            buffer.clear()

    # PDFs rarely mark paragraphs: a line that ends a sentence well short of the page's text width ends one
    width = max((len(line.strip()) for line in lines), default=0)
    for line in lines:
        stripped = _clean(line)
        level = (marks.pop(_heading_key(stripped), 0) if stripped else 0) or (_pdf_heading(stripped) if stripped else 0)
        if level:
            flush()
            blocks.append(Block(stripped, heading_level=level, page=page, kind="heading"))
            continue
        buffer.append(line)
        if width >= 40 and stripped.endswith(_PARAGRAPH_END) and len(stripped) < 0.7 * width:
            flush()
    flush()
    # bookmarks whose title is not on the page as a line still open their section at the top of the page
    missing = [Block(title, heading_level=level, page=page, kind="heading") for title, level in bookmarks
               if _heading_key(title) in marks]
    return missing + blocks


def parse_pdf(data: bytes) -> ParsedDocument:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError

    try:
        reader = PdfReader(io.BytesIO(data), strict=False)
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")
            except Exception:  # noqa: BLE001 - unsupported encryption (e.g. AES without a crypto library)
                opened = 0
            if not opened:
                raise ParseError("The PDF is encrypted (password-protected); upload a copy without a password.")
        pages = reader.pages
        page_count = len(pages)
        bookmarks = _outline_titles(reader)
        blocks: list[Block] = []
        for index, page in enumerate(pages):
            text = page.extract_text() or ""
            blocks += _pdf_page_blocks(text, index + 1, bookmarks.get(index, []))
        title = ""
        try:
            title = _clean(str((reader.metadata or {}).get("/Title") or ""))
        except Exception:  # noqa: BLE001
            title = ""
    except ParseError:
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError,
            RecursionError, AssertionError, ZeroDivisionError) as exc:
        raise ParseError(f"The PDF is damaged and could not be read ({exc.__class__.__name__}: {exc}).") from exc
    if page_count == 0:
        raise ParseError("The PDF has no pages.")
    return _result(blocks, page_count=page_count, title=title)


# --- DOCX -----------------------------------------------------------------------------------------------------

_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)


def parse_docx(data: bytes) -> ParsedDocument:
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table

    try:
        document = docx.Document(io.BytesIO(data))
        blocks: list[Block] = []
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                for row in item.rows:
                    cells: list[str] = []
                    for cell in row.cells:
                        text = _clean(cell.text)
                        if text and (not cells or cells[-1] != text):  # merged cells repeat their text
                            cells.append(text)
                    if cells:
                        blocks.append(Block(" | ".join(cells), kind="table"))
                continue
            text = _clean(item.text)
            if not text:
                continue
            style = (item.style.name if item.style is not None else "") or ""
            match = _HEADING_STYLE.match(style.strip())
            if style.strip().lower() == "title":
                blocks.append(Block(text, heading_level=1, kind="heading"))
            elif match:
                blocks.append(Block(text, heading_level=min(max(int(match.group(1)), 1), 6), kind="heading"))
            else:
                blocks.append(Block(text))
        title = _clean(document.core_properties.title or "")
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, AttributeError) as exc:
        raise ParseError(f"The Word document is damaged and could not be read ({exc}).") from exc
    except Exception as exc:  # lxml syntax errors and the like
        if exc.__class__.__module__.startswith(("lxml", "docx")):
            raise ParseError(f"The Word document is damaged and could not be read ({exc}).") from exc
        raise
    return _result(blocks, title=title)


# --- HTML -----------------------------------------------------------------------------------------------------

_DROP_TAGS = ("script", "style", "noscript", "template", "nav", "iframe", "svg", "canvas", "form", "button",
              "select", "input", "textarea", "object", "embed", "aside", "dialog", "menu")
_DROP_ROLES = ("navigation", "banner", "contentinfo", "search", "menu", "menubar", "complementary")
_BLOCK_TAGS = {
    "address", "article", "blockquote", "details", "dd", "div", "dl", "dt", "fieldset", "figcaption", "figure",
    "footer", "header", "hr", "li", "main", "ol", "p", "pre", "section", "table", "thead", "tbody", "tfoot", "tr",
    "ul", "summary", "caption", "body", "html", "center",
}
_HEADINGS = {f"h{n}": n for n in range(1, 7)}


def parse_html(data: bytes) -> ParsedDocument:
    from bs4 import BeautifulSoup, Comment, NavigableString, Tag

    soup = BeautifulSoup(decode_text(data), "lxml")
    title = _clean(soup.title.get_text(" ")) if soup.title else ""
    for tag in soup.find_all(_DROP_TAGS):
        tag.decompose()
    for tag in soup.find_all(attrs={"role": True}):
        if not tag.decomposed and str(tag.get("role", "")).lower() in _DROP_ROLES:
            tag.decompose()
    for tag in soup.find_all(lambda t: t.has_attr("hidden") or str(t.get("aria-hidden", "")).lower() == "true"):
        if not tag.decomposed:
            tag.decompose()
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    root = soup.find("main") or soup.find("article") or soup.body or soup
    if root is not soup.find("main") and root is not soup.find("article"):
        # page chrome: the site's header and footer (not those inside an article)
        for tag in root.find_all(("header", "footer")):
            if not tag.decomposed and tag.find_parent("article") is None:
                tag.decompose()

    blocks: list[Block] = []
    buffer: list[str] = []

    def flush(kind="paragraph"):
        text = _clean(" ".join(buffer))
        buffer.clear()
        if text:
            blocks.append(Block(text, kind=kind))

    def walk(node):
        for child in node.children:
            if isinstance(child, NavigableString):
                buffer.append(str(child))
                continue
            if not isinstance(child, Tag):
                continue
            name = child.name.lower() if child.name else ""
            if name in _HEADINGS:
                flush()
                text = _clean(child.get_text(" "))
                if text:
                    blocks.append(Block(text, heading_level=_HEADINGS[name], kind="heading"))
            elif name == "tr":
                flush()
                cells = [_clean(cell.get_text(" ")) for cell in child.find_all(("td", "th"))]
                cells = [c for c in cells if c]
                if cells:
                    blocks.append(Block(" | ".join(cells), kind="table"))
            elif name == "pre":
                flush()
                text = child.get_text().strip("\n")
                if text.strip():
                    blocks.append(Block(_CONTROL.sub("", text).strip(), kind="code"))
            elif name == "br":
                buffer.append(" ")
            elif name in _BLOCK_TAGS:
                flush()
                walk(child)
                flush()
            else:
                walk(child)

    walk(root)
    flush()
    return _result(blocks, title=title)


# --- Markdown -------------------------------------------------------------------------------------------------

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?")
_RULE = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_TABLE_DIVIDER = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def _inline_markdown(text: str) -> str:
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", text)  # images: their alt text
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)  # links: their text
    text = re.sub(r"\[([^\]]+)\]\[[^\]]*\]", r"\1", text)  # reference links
    text = re.sub(r"<(https?://[^>\s]+)>", r"\1", text)  # autolinks
    text = re.sub(r"`+([^`]+)`+", r"\1", text)  # inline code
    text = re.sub(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", r"\2", text)  # strong
    text = re.sub(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])", r"\1", text)  # emphasis
    text = re.sub(r"(?<![\w_])_(?=\S)(.+?)(?<=\S)_(?![\w_])", r"\1", text)
    text = re.sub(r"~~(?=\S)(.+?)(?<=\S)~~", r"\1", text)
    text = re.sub(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>", "", text)  # inline HTML tags
    return _clean(text)


def parse_markdown(data: bytes) -> ParsedDocument:
    lines = decode_text(data).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks: list[Block] = []
    paragraph: list[str] = []
    start = 0
    if lines and lines[0].strip() == "---":  # YAML front matter
        for end in range(1, min(len(lines), 200)):
            if lines[end].strip() in ("---", "..."):
                start = end + 1
                break

    def flush():
        text = _inline_markdown(" ".join(paragraph))
        paragraph.clear()
        if text:
            blocks.append(Block(text))

    i = start
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            flush()
            marker = fence.group(1)
            code: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(marker[0] * len(marker)):
                code.append(lines[i])
                i += 1
            text = _CONTROL.sub("", "\n".join(code)).strip()
            if text:
                blocks.append(Block(text, kind="code"))
            i += 1
            continue
        atx = _ATX.match(line)
        if atx:
            flush()
            text = _inline_markdown(atx.group(2) or "")
            if text:
                blocks.append(Block(text, heading_level=len(atx.group(1)), kind="heading"))
            i += 1
            continue
        if not line.strip():
            flush()
            i += 1
            continue
        setext = _SETEXT.match(line)
        if setext and len(paragraph) == 1:
            text = _inline_markdown(paragraph.pop())
            if text:
                blocks.append(Block(text, heading_level=1 if setext.group(1)[0] == "=" else 2, kind="heading"))
            i += 1
            continue
        if _RULE.match(line):
            flush()
            i += 1
            continue
        if line.lstrip().startswith("|"):
            flush()
            if not _TABLE_DIVIDER.match(line):
                cells = [_inline_markdown(c) for c in line.strip().strip("|").split("|")]
                text = " | ".join(c for c in cells if c)
                if text:
                    blocks.append(Block(text, kind="table"))
            i += 1
            continue
        item = _LIST_ITEM.match(line)
        if item:
            flush()
            paragraph.append(line[item.end():])
        else:
            paragraph.append(re.sub(r"^ {0,3}>\s?", "", line))
        i += 1
    flush()
    return _result(blocks)


# --- plain text -----------------------------------------------------------------------------------------------


def parse_text(data: bytes) -> ParsedDocument:
    return _result(_paragraphs(_CONTROL.sub("", decode_text(data))))


PARSERS = {PDF: parse_pdf, DOCX: parse_docx, HTML: parse_html, MARKDOWN: parse_markdown, TEXT: parse_text}


def parse(data: bytes, kind: str) -> ParsedDocument:
    """The document's blocks; raises ParseError (a reason for people) when it cannot be read or has no text."""
    parsed = PARSERS[kind](data)
    if not any(block.heading_level == 0 for block in parsed.blocks):
        hint = " (a scanned PDF needs text recognition first)" if kind == PDF else ""
        raise ParseError(f"The file contains no text to index{hint}.")
    return parsed
