"""PDF (pypdf): text per page, paragraphs recovered from line lengths, headings from bookmarks and numbered
lines, page-number lines dropped.

A PDF's streams are compressed: pypdf stops any one of them from unpacking to more than the document limit (its
own limits, tightened to `Limits.unpacked_bytes`), and the text budget stops at the first page past the text
limit."""

import io
import re

from documents.parsing.blocks import (
    DEFAULT_LIMITS,
    Block,
    Limits,
    ParsedDocument,
    ParseError,
    TextBudget,
    TooLarge,
    clean,
    human_size,
    paragraphs,
    result,
)

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
            title = clean(str(getattr(item, "title", "") or ""))
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
            blocks.extend(paragraphs("\n".join(buffer), page))
            buffer.clear()

    # PDFs rarely mark paragraphs: a line that ends a sentence well short of the page's text width ends one
    width = max((len(line.strip()) for line in lines), default=0)
    for line in lines:
        stripped = clean(line)
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


def parse_pdf(data: bytes, limits: Limits = DEFAULT_LIMITS) -> ParsedDocument:
    from pypdf import apply_configuration
    from pypdf.errors import LimitReachedError

    size = limits.unpacked_bytes
    try:
        with apply_configuration(
            maximum_declared_stream_length=size, array_based_stream_maximum_output_length=size,
            zlib_maximum_output_length=size, lzw_maximum_output_length=size, run_length_maximum_output_length=size,
            brotli_maximum_output_length=size, jbig2_maximum_output_length=size,
        ):
            return _parse_pdf(data, TextBudget(limits))
    except LimitReachedError as exc:
        raise TooLarge(f"The PDF is too large to read: a part of it unpacks to more than {human_size(size)}, the "
                       f"most a document may unpack to ({exc}).") from exc


def _parse_pdf(data: bytes, budget: TextBudget) -> ParsedDocument:
    from pypdf import PdfReader
    from pypdf.errors import LimitReachedError, PdfReadError

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
            text = budget.take(page.extract_text() or "")
            blocks += _pdf_page_blocks(text, index + 1, bookmarks.get(index, []))
        title = ""
        try:
            title = clean(str((reader.metadata or {}).get("/Title") or ""))
        except Exception:  # noqa: BLE001
            title = ""
    except (ParseError, LimitReachedError):
        raise
    except (PdfReadError, ValueError, KeyError, TypeError, AttributeError, IndexError, OSError,
            RecursionError, AssertionError, ZeroDivisionError) as exc:
        raise ParseError(f"The PDF is damaged and could not be read ({exc.__class__.__name__}: {exc}).") from exc
    if page_count == 0:
        raise ParseError("The PDF has no pages.")
    return result(blocks, page_count=page_count, title=title)
