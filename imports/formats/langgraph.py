"""A LangGraph store: a JSON dump of its items (`search` results: `{"items": [...]}`, or a bare list, with
`namespaces` from `list_namespaces` allowed beside them), or a PostgresStore database read directly (its `store`
table: `prefix` is the namespace joined by dots). Each item keeps its namespace, key and JSON value, so that it is
the same item in Memento's store API afterwards."""

from typing import Any

from imports.formats.common import Bad, Parsed, memory, obj, storable_json, text, timestamp
from store.items import content_for, indexed_texts

SOURCE = "langgraph"


def looks_like(entry: Any) -> bool:
    return isinstance(entry, dict) and {"namespace", "key", "value"} <= set(entry)


def read(data: Any) -> Parsed:
    if isinstance(data, dict):
        data = data.get("items")
    if not isinstance(data, list):
        raise Bad("items", "A LangGraph store dump is a JSON list of items, or an object whose `items` is one.")
    return Parsed(SOURCE).read(data, _item)


def _item(entry: Any) -> dict[str, Any]:
    entry = obj(entry, "$")
    namespace = entry.get("namespace")
    if not isinstance(namespace, list) or not namespace:
        raise Bad("namespace", "Must be a non-empty list of labels.")
    labels = [text(label, f"namespace[{i}]", required=True, limit=200) for i, label in enumerate(namespace)]
    key = text(entry.get("key"), "key", required=True)
    if len(key) > 255:
        raise Bad("key", "At most 255 characters.")
    value = storable_json(obj(entry.get("value"), "value"), "value")
    return memory(
        source=SOURCE, original_id=f"{'.'.join(labels)}/{key}", content=content_for(value, indexed_texts(value, None)),
        namespace=labels, key=key, value=value, created_at=timestamp(entry.get("created_at"), "created_at"),
        updated_at=timestamp(entry.get("updated_at"), "updated_at"),
    )


def read_database(dsn: str, *, limit: int) -> Parsed:
    """The items of a PostgresStore database (read-only; at most `limit` + 1 rows are read, so that the caller
    sees that there are too many)."""
    import psycopg

    with psycopg.connect(dsn, autocommit=False) as connection, connection.cursor() as cursor:
        cursor.execute("SET TRANSACTION READ ONLY")
        cursor.execute("SELECT prefix, key, value, created_at, updated_at FROM store ORDER BY prefix, key LIMIT %s",
                       [limit + 1])
        rows = cursor.fetchall()
    return read([{"namespace": prefix.split("."), "key": key, "value": value,
                  "created_at": created.isoformat() if created else None,
                  "updated_at": updated.isoformat() if updated else None}
                 for prefix, key, value, created, updated in rows])
