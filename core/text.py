"""Text rules every write path shares: what PostgreSQL can store, and one spelling per name.

PostgreSQL refuses NUL in text and jsonb, and lone surrogates (\\ud800-\\udfff, valid in a JSON escape but not in
UTF-8) cannot be encoded at all: either would otherwise fail the INSERT, a 500. Checking every string of a value
(keys included) before the write makes both a 400 naming the field."""

import math
import unicodedata
from typing import Any

from django.core.exceptions import ValidationError

NUL = "May not contain NUL characters (\\u0000)."
# A namespace (memories, store items): at most this many labels of at most this many characters each, on every
# path in (10,000 labels were a 500 on four endpoints: the row outgrew its index)
NAMESPACE_MAX_LABELS = 20
LABEL_MAX_CHARS = 200
SURROGATE = "May not contain lone surrogate characters (\\ud800-\\udfff)."
NON_FINITE = "May not contain NaN, Infinity or numbers beyond a float's range."


def unstorable(value: Any) -> str | None:
    """Why `value` (a string, or JSON: every key and string inside it) cannot be stored, or None if it can. Walks
    without recursion, so any nesting is safe."""
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if "\x00" in item:
                return NUL
            if not item.isascii():
                try:
                    item.encode("utf-8")
                except UnicodeEncodeError:
                    return SURROGATE
        elif isinstance(item, float):
            if not math.isfinite(item):  # jsonb has no NaN or Infinity: the INSERT would fail (a 500)
                return NON_FINITE
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return None


def check_storable(value: Any) -> None:
    """A field validator (Django and DRF both take it): ValidationError when `value` cannot be stored."""
    problem = unstorable(value)
    if problem:
        raise ValidationError(problem)


def require_storable(value: Any, field: str) -> None:
    """ValidationError naming `field` when `value` cannot be stored."""
    problem = unstorable(value)
    if problem:
        raise ValidationError({field: [problem]})


def nfc(name: str) -> str:
    """One spelling of a name (a key, a namespace label): Unicode NFC, so "é" typed as one code point or as "e"
    plus a combining accent names the same memory or store item."""
    return unicodedata.normalize("NFC", name) if isinstance(name, str) and not name.isascii() else name


def namespace_problem(labels) -> str | None:
    """Why a namespace (a list of labels) is over its bounds, or None."""
    if isinstance(labels, list | tuple):
        if len(labels) > NAMESPACE_MAX_LABELS:
            return f"At most {NAMESPACE_MAX_LABELS} labels."
        if any(isinstance(label, str) and len(label) > LABEL_MAX_CHARS for label in labels):
            return f"Labels are at most {LABEL_MAX_CHARS} characters."
    return None


def nfc_path(labels):
    """A namespace (a list or tuple of labels) with every label in NFC; anything else is returned unchanged for the
    caller's own checks to refuse."""
    if isinstance(labels, list | tuple):
        return type(labels)(nfc(label) for label in labels)
    return labels
