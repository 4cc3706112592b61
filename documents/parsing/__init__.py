"""From an uploaded file to structured text: which kind of file it is (by extension and content), and its blocks
(headings with their level, paragraphs, table rows, code) in reading order, with the page each one is on.

Supported: PDF (pypdf), DOCX (python-docx), HTML (BeautifulSoup; navigation, scripts and page chrome dropped),
Markdown and plain text. Everything here is pure: no database, no Django models, no settings (the limits come in
as `Limits`).
"""

from documents.parsing.blocks import (
    DEFAULT_LIMITS,
    Block,
    Cancelled,
    Deadline,
    Limits,
    ParsedDocument,
    ParseError,
    TextBudget,
    TooLarge,
    UnsupportedFileType,
    WorkBudgetExceeded,
    decode_text,
    human_size,
)
from documents.parsing.docx import check_archive, parse_docx
from documents.parsing.html import parse_html
from documents.parsing.kinds import (
    DOCX,
    EXTENSIONS,
    HTML,
    MARKDOWN,
    MIME_TYPES,
    PDF,
    STORED_SUFFIX,
    SUPPORTED,
    TEXT,
    detect_kind,
    sanitize_filename,
)
from documents.parsing.pdf import parse_pdf
from documents.parsing.text import parse_markdown, parse_text

__all__ = [
    "Block", "Cancelled", "DEFAULT_LIMITS", "Deadline", "WorkBudgetExceeded",
    "DOCX", "EXTENSIONS", "HTML", "Limits", "MARKDOWN", "MIME_TYPES", "PDF", "PARSERS",
    "ParseError", "ParsedDocument", "STORED_SUFFIX", "SUPPORTED", "TEXT", "TooLarge", "UnsupportedFileType",
    "check_archive", "decode_text", "detect_kind", "human_size", "parse", "parse_docx", "parse_html",
    "parse_markdown", "parse_pdf", "parse_text", "sanitize_filename",
]

PARSERS = {PDF: parse_pdf, DOCX: parse_docx, HTML: parse_html, MARKDOWN: parse_markdown, TEXT: parse_text}


def parse(data: bytes, kind: str, limits: Limits = DEFAULT_LIMITS) -> ParsedDocument:
    """The document's blocks; raises ParseError (a reason for people) when it cannot be read or has no text, and
    TooLarge (one) when it is over `limits`. The compressed formats (DOCX, PDF) are checked before and while they
    are read; the others are at most an upload's size and are checked after."""
    if kind in (DOCX, PDF):
        parsed = PARSERS[kind](data, limits)
    else:
        parsed = PARSERS[kind](data)
        budget = TextBudget(limits)
        for block in parsed.blocks:
            budget.take(block.text)
    if not any(block.heading_level == 0 for block in parsed.blocks):
        hint = " (a scanned PDF needs text recognition first)" if kind == PDF else ""
        raise ParseError(f"The file contains no text to index{hint}.")
    return parsed
