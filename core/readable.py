"""JSON values (a memory's metadata, entities, a store item's value) as people read them: "key: value" pairs,
lists joined with commas, never a Python repr. The panel's pages and the admin's history show them so."""


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
