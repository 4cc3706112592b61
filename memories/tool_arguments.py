"""The arguments of a tool call checked against the tool's JSON Schema (memories.tools declares them): each
problem named by its field, as a model can fix it, before any handler runs."""

import json
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError

from core.parsers import loads
from core.text import unstorable
from memories.tools import MemoryTool

MESSAGES = {"type": "Must be of type {}.", "maxLength": "At most {} characters.", "minLength": "May not be empty.",
            "maximum": "At most {}.", "minimum": "At least {}.", "enum": "One of: {}.", "maxItems": "At most {} items."}


def _problem(error) -> tuple[str, str]:
    """(field, what to fix) for one JSON Schema error, without echoing the (possibly huge) value."""
    field = ".".join(str(part) for part in error.absolute_path) or "arguments"
    value = ", ".join(map(str, error.validator_value)) if error.validator == "enum" else error.validator_value
    template = MESSAGES.get(error.validator)
    return field, template.format(value) if template else error.message[:200]


def parsed(raw: Any) -> dict[str, Any]:
    """Arguments as a model produced them: a JSON object, or its JSON text, at most TOOL_ARGUMENTS_MAX_BYTES as
    JSON (a tool runs on the request's thread: a 2 MB `content` held one for 20 s before it was refused)."""
    text = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)
    size = len(text.encode("utf-8", "surrogatepass"))  # a lone surrogate is refused below, naming its field
    if size > settings.TOOL_ARGUMENTS_MAX_BYTES:
        raise ValidationError({"arguments": [
            f"Are {size:,} bytes as JSON; the limit is {settings.TOOL_ARGUMENTS_MAX_BYTES:,}."]})
    if isinstance(raw, str):
        try:
            raw = loads(raw or "{}")
        except ValueError as exc:  # JSONDecodeError is one
            raise ValidationError({"arguments": [f"Not valid JSON: {getattr(exc, 'msg', exc)}."]}) from None
    raw = {} if raw is None else raw
    if not isinstance(raw, dict):
        raise ValidationError({"arguments": ["Must be a JSON object."]})
    return raw


def validated(definition: MemoryTool, raw: Any) -> dict[str, Any]:
    """The arguments of a call to tool `definition`, checked against its schema; ValidationError names each field."""
    raw = parsed(raw)
    properties = definition.parameters["properties"]
    if any(unstorable(name) for name in raw):
        raise ValidationError({"arguments": [f"Argument names: {unstorable(list(raw))}"]})
    errors: dict[str, list[str]] = {}
    for error in definition.validator.iter_errors(raw):
        if error.validator == "required":
            for missing in (f for f in error.validator_value if f not in raw):
                errors.setdefault(missing, []).append("This field is required.")
        elif error.validator == "additionalProperties":
            for unknown in sorted(set(raw) - set(properties)):
                errors.setdefault(unknown[:100], []).append(f"Unknown field; this tool takes: {', '.join(properties)}.")
        else:
            field, message = _problem(error)
            errors.setdefault(field, []).append(message)
    for name, value in raw.items():  # each argument named, so the model can fix it
        problem = unstorable(value)
        if problem:
            errors.setdefault(name[:100], []).append(problem)
    if errors:
        raise ValidationError(errors)
    # JSON Schema counts 2.0 as an integer; Python slicing does not
    return {k: int(v) if properties[k].get("type") == "integer" else v for k, v in raw.items()}
