"""Reading an export: bytes in (a JSON file, a JSON Lines file or an export zip), the items to import out, with
every bad item named by position and field. Nothing here writes; `imports.services` does."""

from typing import Any

from django.conf import settings

from core.parsers import loads
from imports.formats import archive, chatgpt, claude, jsonl, langgraph, mem0
from imports.formats.common import CONVERSATION, MEMORY, Bad, Parsed, Problem, fingerprint

__all__ = ["CONVERSATION", "FORMATS", "MEMORY", "Parsed", "Problem", "Unreadable", "fingerprint", "read"]

READERS = {"chatgpt": chatgpt.read, "claude": claude.read, "mem0": mem0.read, "langgraph": langgraph.read}
FORMATS = ("auto", *READERS, "jsonl")  # what --format / `format` accept


class Unreadable(ValueError):
    """The file as a whole cannot be read as the format (not JSON, a refused zip, the wrong shape)."""


def detect(data: Any) -> str:
    """Which export a parsed JSON document is, by the shape of its first entry."""
    if isinstance(data, dict):
        for name, reader in (("results", "mem0"), ("memories", "mem0"), ("items", "langgraph"),
                             ("conversations", "claude")):
            if isinstance(data.get(name), list):
                return reader
        entries = [data]
    else:
        entries = data if isinstance(data, list) else []
    first = next((entry for entry in entries if isinstance(entry, dict)), None)
    for name, module in (("chatgpt", chatgpt), ("claude", claude), ("mem0", mem0), ("langgraph", langgraph)):
        if module.looks_like(first):
            return name
    raise Unreadable("The format could not be told from the file; name it (chatgpt, claude, mem0, langgraph, "
                     "jsonl).")


def _text(raw: bytes) -> str:
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Unreadable("The file is not UTF-8 text.") from None


def read(raw: bytes, *, filename: str = "", format: str = "auto") -> Parsed:
    """The items of an export; `Unreadable` when the file as a whole is not one, `format` not in FORMATS."""
    if format not in FORMATS:
        raise Unreadable(f"Unknown format {format!r}; choose one of {', '.join(FORMATS)}.")
    if archive.is_zip(raw):
        try:
            raw = archive.conversations_json(raw)
        except archive.Refused as exc:
            raise Unreadable(str(exc)) from None
    elif format == "jsonl" or (format == "auto" and filename.lower().endswith((".jsonl", ".ndjson"))):
        parsed = jsonl.read(_text(raw))
        return _bounded(parsed)
    text = _text(raw)
    try:
        data = loads(text)
    except ValueError as exc:
        if format == "auto" and _json_lines(text):
            return _bounded(jsonl.read(text))
        raise Unreadable(f"The file is not valid JSON: {getattr(exc, 'msg', exc)}.") from None
    name = detect(data) if format == "auto" else format
    if name == "jsonl":
        raise Unreadable("A JSON Lines file has one JSON object a line; this file is one JSON document.")
    try:
        return _bounded(READERS[name](data))
    except Bad as bad:
        raise Unreadable(f"Not a {name} export: {bad.field}: {bad.message}") from None


def _json_lines(text: str) -> bool:
    """Whether a file that is not one JSON document starts with a line that is a JSON object (JSON Lines)."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    try:
        return isinstance(loads(first), dict)
    except ValueError:
        return False


def _bounded(parsed: Parsed) -> Parsed:
    """IMPORT_MAX_ITEMS items and IMPORT_MAX_MESSAGES messages at most."""
    if len(parsed.items) > settings.IMPORT_MAX_ITEMS:
        raise Unreadable(f"The export holds {len(parsed.items):,} items; the most one import may hold is "
                         f"{settings.IMPORT_MAX_ITEMS:,}. Split it.")
    messages = sum(len(item.get("messages", ())) for _, item in parsed.items)
    if messages > settings.IMPORT_MAX_MESSAGES:
        raise Unreadable(f"The export holds {messages:,} messages; the most one import may hold is "
                         f"{settings.IMPORT_MAX_MESSAGES:,}. Split it.")
    return parsed
