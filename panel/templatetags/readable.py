"""JSON values (a memory's metadata, entities) as people read them: "key: value" lines, lists joined with commas,
never a Python repr."""

from django import template

register = template.Library()


def readable_text(value) -> str:
    """A JSON value as one line of text: objects as "key: value; ...", lists joined with commas."""
    if value is None or value == "" or value == [] or value == {}:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return ", ".join(readable_text(v) for v in value)
    if isinstance(value, dict):
        return "; ".join(f"{k}: {readable_text(v)}" for k, v in value.items())
    return str(value)


@register.filter
def readable_items(value) -> list[tuple[str, str]]:
    """A JSON object's (key, readable value) pairs; anything else as one pair under "value"."""
    if isinstance(value, dict):
        return [(str(k).replace("_", " "), readable_text(v)) for k, v in value.items()]
    return [("value", readable_text(value))]
