"""JSON values (a memory's metadata, entities) as readable fields in the panel's templates (core.readable)."""

from django import template

from core.readable import readable_text

register = template.Library()


@register.filter
def readable_items(value) -> list[tuple[str, str]]:
    """A JSON object's (key, readable value) pairs; anything else as one pair under "value"."""
    if isinstance(value, dict):
        return [(str(k).replace("_", " "), readable_text(v)) for k, v in value.items()]
    return [("value", readable_text(value))]
