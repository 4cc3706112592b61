"""Parsers the APIs share."""

import json

from rest_framework.exceptions import ParseError
from rest_framework.parsers import BaseParser


class JSONLinesParser(BaseParser):
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
                record = json.loads(line)
            except json.JSONDecodeError as exc:
                raise ParseError(f"Line {number} is not valid JSON: {exc.msg}.") from None
            if not isinstance(record, dict):
                raise ParseError(f"Line {number} must be a JSON object.")
            records.append(record)
        return records
