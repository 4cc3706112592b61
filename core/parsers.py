"""Parsers the APIs share, and the one JSON reader they (and tool arguments, MCP bodies and imports) go through:
JSON nested deeper than API_JSON_MAX_DEPTH is refused before it is parsed, so no body can drive the parser into a
RecursionError (a 500); and every number must be finite: NaN and Infinity, and numbers beyond a float's range
(`1e400`, which Python reads as Infinity), are refused (PostgreSQL's jsonb refuses them, and a float field turned
them into a 500)."""

import codecs
import json
import math
import re
from typing import Any

from django.conf import settings
from rest_framework import parsers
from rest_framework.exceptions import ParseError
from rest_framework.settings import api_settings

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")


class TooDeep(ValueError):
    """JSON nested deeper than the limit."""


def nesting(text: str) -> int:
    """How deep the arrays and objects of JSON `text` nest (brackets inside strings do not count). Malformed text
    gets some number; the parser then reports what is wrong with it."""
    depth = deepest = 0
    for bracket in _NOT_BRACKET.sub("", _STRING.sub("", text)):
        depth += 1 if bracket in "[{" else -1
        deepest = max(deepest, depth)
    return deepest


def _not_a_number(constant: str):
    raise ValueError(f"{constant} is not a JSON number")


# the longest integer a float can hold (1.8e308): a longer one overflows wherever it is taken as a number
_MAX_INT_DIGITS = 309


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is out of range")
    return value


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > _MAX_INT_DIGITS:
        raise ValueError(f"the number {text[:40]}... is out of range")
    return int(text)


def check_depth(text: str) -> None:
    """TooDeep (a ValueError) when JSON `text` nests deeper than API_JSON_MAX_DEPTH."""
    limit = settings.API_JSON_MAX_DEPTH
    # most bodies have fewer brackets than the limit in all: two scans in C, no walk
    if text.count("[") + text.count("{") > limit and nesting(text) > limit:
        raise TooDeep(f"JSON nested more than {limit} levels deep")


def loads(text: str, *, strict: bool = True) -> Any:
    """json.loads with the depth limit; `strict` refuses NaN, Infinity and numbers beyond a float's range."""
    check_depth(text)
    if not strict:
        return json.loads(text)
    return json.loads(text, parse_constant=_not_a_number, parse_float=_finite_float, parse_int=_bounded_int)


class FiniteJSONDecoder(json.JSONDecoder):
    """The strict reading of `loads` as a decoder class, for what takes one (Django's form JSONField)."""

    def __init__(self, **kwargs):
        super().__init__(**{**kwargs, "parse_constant": _not_a_number, "parse_float": _finite_float,
                            "parse_int": _bounded_int})


class JSONParser(parsers.JSONParser):
    """DRF's JSON parser (the API's default) with the depth limit: a body nested too deep is a 400."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = parsers.get_encoding(parser_context or {})
        try:
            text = codecs.getreader(encoding)(stream).read()
            return loads(text, strict=api_settings.STRICT_JSON)
        except ValueError as exc:  # UnicodeDecodeError and JSONDecodeError are ValueErrors too
            raise ParseError(f"JSON parse error - {exc}") from None


class JSONLinesParser(parsers.BaseParser):
    """JSON Lines (one JSON object per line) into a list; a bad line is a 400 naming its number."""

    media_type = "application/jsonl"

    def parse(self, stream, media_type=None, parser_context=None):
        records = []
        try:
            text = stream.read().decode("utf-8")
        except UnicodeDecodeError:
            raise ParseError("The body is not UTF-8 text.") from None
        for number, line in enumerate(text.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                record = loads(line)
            except ValueError as exc:
                raise ParseError(f"Line {number} is not valid JSON: {getattr(exc, 'msg', exc)}.") from None
            if not isinstance(record, dict):
                raise ParseError(f"Line {number} must be a JSON object.")
            records.append(record)
        return records
