"""Which embedding model each table's vectors are in (`EmbeddingSpace`, one row a table).

A table's vectors are all of one model: writes embed with `active_model` and searches embed their query with it
and compare only vectors of it; the database nulls a vector of any other model (the guard of migration 0019: such
a row is pending, embedded again by the sweeps or `manage.py reembed`). A table with a row keeps its model when
EMBEDDING_MODEL changes, until `manage.py reembed` has written the new model's vectors beside the old ones and
switched it (memento.reembed); `migrate` records the model of every table that has vectors and no row yet
(`record_models`). A table with no row (no vector yet) follows EMBEDDING_MODEL."""

import time

from django.conf import settings
from django.db import connection, connections

from memories.models import EmbeddingSpace

Name = EmbeddingSpace.Name
# the table of each space (a string: the tables of conversations, documents and store are above this floor)
TABLES = {
    Name.MEMORIES: "memories_memory",
    Name.MESSAGES: "conversations_message",
    Name.CHUNKS: "documents_chunk",
    Name.STORE: "store_itemvector",
}


def lock_name(space: str) -> str:
    """The advisory lock a switch of `space` holds exclusively and its guard trigger shared (migration 0019)."""
    return f"embedding space {space}"


# searches read a table's model from the process's copy for this long: a search costs no statement more (a small
# owner's costs two, memories.search.snapshot). For that long after a switch another process embeds its queries
# with the old model; the model filter of every comparison then finds no vector (words still answer), never two.
SEARCH_CACHE_SECONDS = 1.0
_cache: dict[str, tuple[float, str]] = {}


def active_model(space: str, *, cached: bool = False) -> str:
    """The model `space`'s vectors are in, to embed its writes (exact) and queries (`cached`) with
    (EMBEDDING_MODEL while it has no row)."""
    now = time.monotonic()
    if cached and (held := _cache.get(space)) is not None and held[0] > now:
        return held[1]
    with connection.cursor() as cursor:  # the primary key: one row or none, no LIMIT needed
        cursor.execute("SELECT model FROM memories_embeddingspace WHERE name = %s", [space])
        row = cursor.fetchone()
    model = row[0] if row else settings.EMBEDDING_MODEL
    _cache[space] = (now + SEARCH_CACHE_SECONDS, model)
    return model


def forget() -> None:
    """Drop the process's copies (after this process switched a table, and between tests)."""
    _cache.clear()


def current_model(space: str, using: str = "default") -> str | None:
    """The model most of the table's vectors are in, None when it has none."""
    with connections[using].cursor() as cursor:
        cursor.execute(f"SELECT embedding_model FROM {TABLES[space]} WHERE embedding IS NOT NULL AND "
                       f"embedding_model <> '' GROUP BY embedding_model ORDER BY count(*) DESC LIMIT 1")
        row = cursor.fetchone()
    return row[0] if row else None


def record_models(using: str = "default", **kwargs) -> None:
    """post_migrate: every table that has vectors and no row gets one naming their model, so that changing
    EMBEDDING_MODEL afterwards waits for `manage.py reembed` instead of leaving search without vectors. Tables a
    partial migration (back to an older state) left out are skipped."""
    tables = set(connections[using].introspection.table_names())
    if EmbeddingSpace._meta.db_table not in tables:
        return
    known = set(EmbeddingSpace.objects.using(using).values_list("name", flat=True))
    for space, table in TABLES.items():
        if space not in known and table in tables and (model := current_model(space, using)):
            EmbeddingSpace.objects.using(using).get_or_create(name=space, defaults={"model": model})
