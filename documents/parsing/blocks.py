"""What every format's parser produces (blocks in reading order, a ParsedDocument), the errors parsing raises,
and the text helpers the parsers share. Pure: no database, no Django models."""

import codecs
import re
import time
from collections.abc import Callable
from dataclasses import dataclass


class UnsupportedFileType(Exception):
    """The file is not one of the supported kinds (or its content does not match its extension)."""


class ParseError(Exception):
    """The file is of a supported kind but cannot be read (damaged, encrypted, no text); the message is for
    people."""


class TooLarge(ParseError):
    """The document is over one of its limits (what it unpacks to, its text, its chunks); the message says which.
    Raised before or while parsing, so that a small file that expands to a huge one costs the worker little."""


class WorkBudgetExceeded(ParseError):
    """Reading or cutting up the document took longer than one task may spend on it; the message says so."""


class Cancelled(Exception):
    """The document was deleted or sent for processing again while this run worked on it: stop quietly."""


class Deadline:
    """The time one task may spend reading and cutting up a document (None: no limit), and whether the work is
    still wanted. `check()` is called between bounded steps: past the deadline it raises WorkBudgetExceeded; at
    most every `poll_seconds` it asks `cancelled()` (a database read) and raises Cancelled when it says so."""

    poll_seconds = 1.0

    def __init__(self, seconds: float | None, cancelled: Callable[[], bool] | None = None):
        self.seconds = seconds
        self.at = None if seconds is None else time.monotonic() + seconds
        self.cancelled = cancelled
        self.polled = time.monotonic()

    def check(self) -> None:
        now = time.monotonic()
        if self.at is not None and now > self.at:
            raise WorkBudgetExceeded(
                f"Reading and indexing this document took longer than the {self.seconds:g} seconds one step may "
                "take; split it into smaller documents.")
        if self.cancelled is not None and now - self.polled >= self.poll_seconds:
            self.polled = now
            if self.cancelled():
                raise Cancelled


MiB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """What reading one document may cost. Parsing reads no settings: documents.processing passes
    DOCUMENT_MAX_UNPACKED_BYTES and DOCUMENT_MAX_TEXT_CHARS; these defaults are theirs."""

    unpacked_bytes: int = 50 * MiB  # a compressed format's content (DOCX members, each PDF stream)
    text_chars: int = 5_000_000  # extracted text (~2,000 pages, ~5,000 chunks)
    deadline: Deadline | None = None  # checked as the text is taken (documents.processing sets it)


DEFAULT_LIMITS = Limits()


def human_size(n: int) -> str:
    """Bytes for people: 512 bytes, 179 KB, 52.5 MB."""
    if n >= MiB:
        return f"{n / MiB:.1f} MB".replace(".0 MB", " MB")
    return f"{n / 1024:.1f} KB".replace(".0 KB", " KB") if n >= 1024 else f"{n} bytes"


class TextBudget:
    """Counts the text a parser extracts and stops it (TooLarge) as soon as it passes the limit, so that a
    document with far too much text is refused after reading just over the limit, not all of it."""

    def __init__(self, limits: Limits):
        self.limit = limits.text_chars
        self.deadline = limits.deadline
        self.used = 0

    def take(self, text: str) -> str:
        if self.deadline is not None:
            self.deadline.check()
        self.used += len(text)
        if self.used > self.limit:
            raise TooLarge(f"The document has more than {self.limit:,} characters of text, the most one document "
                           "may have; split it into smaller documents.")
        return text


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
CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")


def clean(text: str) -> str:
    """One paragraph's text: control characters dropped, runs of spaces (and line breaks) made one space."""
    return _SPACES.sub(" ", CONTROL.sub("", text).replace("\r", " ").replace("\n", " ")).strip()


_WORD = re.compile(r"\w")


def word_count(blocks: list[Block]) -> int:
    """Whitespace-separated words with at least one letter or digit (a table's '|' is not a word). Split first,
    then searched: one pattern for both backtracked over a long run without a letter, quadratic in its length."""
    return sum(1 for block in blocks for word in block.text.split() if _WORD.search(word))


def result(blocks: list[Block], page_count: int | None = None, title: str = "") -> ParsedDocument:
    blocks = [b for b in blocks if b.text]
    return ParsedDocument(blocks=blocks, page_count=page_count, word_count=word_count(blocks), title=title)


def paragraphs(text: str, page: int | None = None) -> list[Block]:
    """Plain text: blank lines separate paragraphs; hard-wrapped lines are joined (hyphenation undone)."""
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    blocks = []
    for part in re.split(r"\n\s*\n", text):
        part = re.sub(r"(\w)-\n(\w)", r"\1\2", part)
        cleaned = clean(part)
        if cleaned:
            blocks.append(Block(cleaned, page=page))
    return blocks
