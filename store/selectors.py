"""Reads of the store view: items by (namespace, key), search (filters, then meaning), namespaces. Everything
reads the owner's live memories (not deleted, superseded or expired), scoped in code and by row-level security.

A memory is seen as an item whose value is the JSON it was put with, or {"content": ...} when it was written
through the memory API; filters read that value (`DOC`)."""

import json
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db import connection
from pgvector import HalfVector, Vector

from integrations import embeddings
from memories.models import EMBEDDING_DIMENSIONS, Memory
from store import ops
from store.items import item_value

DOC = "COALESCE(m.value, jsonb_build_object('content', m.content))"
HALF = f"halfvec({EMBEDDING_DIMENSIONS})"
FULL = f"vector({EMBEDDING_DIMENSIONS})"
ROW_FIELDS = ("id", "namespace", "key", "value", "content", "created_at", "updated_at", "embedding",
              "embedding_model")
COMPARISONS = {"$gt": ">", "$gte": ">=", "$lt": "<", "$lte": "<="}
EF_SEARCH = 100
MAX_EF_SEARCH = 1000  # pgvector's bound; iterative scans go on past it up to the LIMIT


@dataclass
class Item:
    """A memory as a store item (LangGraph's Item / SearchItem)."""

    id: Any
    namespace: list[str]
    key: str
    value: dict
    created_at: datetime
    updated_at: datetime
    score: float | None = None

    def as_json(self, *, scored: bool) -> dict:
        data = {"namespace": list(self.namespace), "key": self.key, "value": self.value,
                "created_at": self.created_at.isoformat(), "updated_at": self.updated_at.isoformat()}
        if scored:
            data["score"] = self.score
        return data


def _rows(owner_id: int, prefix: tuple[str, ...] = ()) -> tuple[str, list]:
    """The owner's live memories (under `prefix`) as a subquery `m` (PostgreSQL pulls it up into the outer
    query, so the table's indexes still serve it)."""
    base = Memory.objects.owned_by(owner_id).active().in_namespace(list(prefix))
    sql, params = base.order_by().values(*ROW_FIELDS).query.sql_with_params()
    return f"({sql}) AS m", list(params)


def _filter_sql(filter_: dict | None) -> tuple[str, list]:
    """SQL conditions for a store filter on the item's value: plain values and $eq/$ne compare JSON values;
    $gt/$gte/$lt/$lte compare numbers with numbers and strings with strings (other types never match)."""
    clauses, params = [], []
    for name, condition in (filter_ or {}).items():
        if isinstance(condition, dict) and any(k.startswith("$") for k in condition):
            pairs = condition.items()
        else:
            pairs = [("$eq", condition)]
        for operator, operand in pairs:
            if operator == "$eq":
                clauses.append(f"({DOC} -> %s) = %s::jsonb")
                params += [name, json.dumps(operand)]
            elif operator == "$ne":
                clauses.append(f"({DOC} -> %s) IS DISTINCT FROM %s::jsonb")
                params += [name, json.dumps(operand)]
            elif isinstance(operand, str):
                clauses.append(f"(CASE WHEN jsonb_typeof({DOC} -> %s) = 'string' "
                               f"THEN ({DOC} ->> %s) COLLATE \"C\" {COMPARISONS[operator]} %s ELSE false END)")
                params += [name, name, operand]
            else:
                clauses.append(f"(CASE WHEN jsonb_typeof({DOC} -> %s) = 'number' "
                               f"THEN ({DOC} ->> %s)::numeric {COMPARISONS[operator]} %s::numeric ELSE false END)")
                params += [name, name, str(operand)]
    return (" AND ".join(clauses) or "true"), params


def _item(row, score: float | None = None) -> Item:
    pk, namespace, key, value, content, created_at, updated_at = row[:7]
    if isinstance(value, str):  # Django leaves jsonb undecoded in raw queries
        value = json.loads(value)
    return Item(id=pk, namespace=namespace, key=key, value=item_value(value, content), created_at=created_at,
                updated_at=updated_at, score=score)


_COLUMNS = "m.id, m.namespace, m.key, m.value, m.content, m.created_at, m.updated_at"


def items_get(*, owner_id: int, gets: list[ops.Get]) -> list[Item | None]:
    """The live item at each (namespace, key), or None; one query for all of them."""
    wanted = [g for g in gets if g.namespace]
    found: dict[tuple, Item] = {}
    if wanted:
        rows_sql, params = _rows(owner_id)
        pairs = ", ".join(["(%s::varchar[], %s::varchar)"] * len(wanted))
        for g in wanted:
            params += [list(g.namespace), g.key]
        with connection.cursor() as cursor:
            cursor.execute(f"SELECT {_COLUMNS} FROM {rows_sql} WHERE (m.namespace, m.key) IN (VALUES {pairs})",
                           params)
            for row in cursor.fetchall():
                found[(tuple(row[1]), row[2])] = _item(row)
    return [found.get((g.namespace, g.key)) if g.namespace else None for g in gets]


def items_search(*, owner_id: int, search: ops.Search, vector: list[float] | None,
                 memory_vector: list[float] | None = None) -> list[Item]:
    """Items under the prefix that pass the filter. Without a query vector: newest update first, no score.
    With one: by cosine similarity of the item's best indexed field (a memory written through the memory API
    is scored by its content's vector), highest first; items with no vector at all follow, unscored, unless a
    threshold is asked for."""
    rows_sql, rows_params = _rows(owner_id, search.namespace_prefix)
    where, where_params = _filter_sql(search.filter)
    with connection.cursor() as cursor:
        if vector is None:
            cursor.execute(
                f"SELECT {_COLUMNS} FROM {rows_sql} WHERE {where} ORDER BY m.updated_at DESC, m.id LIMIT %s OFFSET %s",
                [*rows_params, *where_params, search.limit, search.offset],
            )
            return [_item(row) for row in cursor.fetchall()]
        return _by_meaning(cursor, owner_id, search, vector, vector if memory_vector is None else memory_vector,
                           rows_sql, rows_params, where, where_params)


def _by_meaning(cursor, owner_id, search, vector, memory_vector, rows_sql, rows_params, where,
                where_params) -> list[Item]:
    wanted = search.offset + search.limit
    # nearest field vectors through the half-precision HNSW index (iterative scans keep going past other
    # owners' rows and filtered-out items), then the exact cosine of each item's best field
    k = min(max(4 * wanted, 100), 4000)
    # field vectors compared with the query as the store's model embeds it, content vectors as memories' model
    # does (the two differ while one table is switched to another model: memories.spaces), each only with vectors
    # of its model
    half, full = HalfVector(vector).to_text(), Vector(vector).to_text()
    memory_half, memory_full = HalfVector(memory_vector).to_text(), Vector(memory_vector).to_text()
    field_model, memory_model = embeddings.model_of(vector), embeddings.model_of(memory_vector)
    cursor.execute("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
                   "set_config('hnsw.ef_search', %s, true)", [str(min(max(EF_SEARCH, k), MAX_EF_SEARCH))])
    threshold = "" if search.threshold is None else "WHERE 1 - s.d >= %s"
    cursor.execute(
        f"WITH near AS MATERIALIZED ("
        f"  (SELECT v.memory_id AS id, v.embedding <=> %s::{FULL} AS d FROM store_itemvector AS v"
        f"   JOIN {rows_sql} ON m.id = v.memory_id"
        f"   WHERE v.owner_id = %s AND v.embedding IS NOT NULL AND v.embedding_model = %s AND {where}"
        f"   ORDER BY v.embedding::{HALF} <=> %s::{HALF} LIMIT %s)"
        f"  UNION ALL"
        f"  (SELECT m.id, m.embedding <=> %s::{FULL} AS d FROM {rows_sql}"
        f"   WHERE m.value IS NULL AND m.embedding IS NOT NULL AND m.embedding_model = %s AND {where}"
        f"   ORDER BY m.embedding::{HALF} <=> %s::{HALF} LIMIT %s)"
        f"), s AS (SELECT id, min(d) AS d, count(*) AS n FROM near GROUP BY id) "
        f"SELECT {_COLUMNS}, 1 - s.d, (SELECT count(*) FROM near) "
        f"FROM s JOIN memories_memory AS m ON m.id = s.id {threshold} "
        f"ORDER BY s.d, m.updated_at DESC, m.id LIMIT %s OFFSET %s",
        [full, *rows_params, owner_id, field_model, *where_params, half, k, memory_full, *rows_params,
         memory_model, *where_params, memory_half, k,
         *([search.threshold] if search.threshold is not None else []), search.limit, search.offset],
    )
    rows = cursor.fetchall()
    found = [_item(row, score=float(row[7])) for row in rows]
    seen_all = not rows or rows[0][8] < k  # fewer vectors than asked for: every vector was looked at
    if len(found) == search.limit or search.threshold is not None or not seen_all:
        return found
    # fill the page with items that have no vector (index=False, nothing to index, embedding pending),
    # newest first, after every scored item
    cursor.execute(
        f"SELECT count(DISTINCT id) FROM ("
        f"  (SELECT v.memory_id AS id FROM store_itemvector AS v JOIN {rows_sql} ON m.id = v.memory_id"
        f"   WHERE v.owner_id = %s AND v.embedding IS NOT NULL AND v.embedding_model = %s AND {where})"
        f"  UNION ALL (SELECT m.id FROM {rows_sql} WHERE m.value IS NULL AND m.embedding IS NOT NULL"
        f"             AND m.embedding_model = %s AND {where})"
        f") AS scored",
        [*rows_params, owner_id, field_model, *where_params, *rows_params, memory_model, *where_params],
    )
    scored = cursor.fetchone()[0]
    skip = max(0, search.offset - scored)
    cursor.execute(
        f"SELECT {_COLUMNS} FROM {rows_sql} WHERE {where} "
        f"AND NOT EXISTS (SELECT 1 FROM store_itemvector AS v WHERE v.memory_id = m.id AND v.owner_id = %s "
        f"            AND v.embedding IS NOT NULL) "
        f"AND (m.value IS NOT NULL OR m.embedding IS NULL) "
        f"ORDER BY m.updated_at DESC, m.id LIMIT %s OFFSET %s",
        [*rows_params, *where_params, owner_id, search.limit - len(found), skip],
    )
    return found + [_item(row) for row in cursor.fetchall()]


def namespaces_list(*, owner_id: int, listing: ops.ListNamespaces) -> list[tuple[str, ...]]:
    """Distinct namespaces of the owner's live items that meet every condition ('*' matches any one label),
    cut to `max_depth` labels, in label order."""
    rows_sql, params = _rows(owner_id)
    clauses = []
    for match_type, path in listing.conditions:
        clauses.append("cardinality(m.namespace) >= %s")
        params.append(len(path))
        for i, label in enumerate(path):
            if label == "*":
                continue
            if match_type == "prefix":
                clauses.append("m.namespace[%s] = %s")
                params += [i + 1, label]
            else:
                clauses.append("m.namespace[cardinality(m.namespace) - %s] = %s")
                params += [len(path) - 1 - i, label]
    where = " AND ".join(clauses) or "true"
    column = "m.namespace[1:%s]" if listing.max_depth else "m.namespace"
    depth = [listing.max_depth] if listing.max_depth else []
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT DISTINCT ns::text[] COLLATE \"C\" AS ns FROM "
            f"(SELECT {column} AS ns FROM {rows_sql} WHERE {where}) AS t ORDER BY ns LIMIT %s OFFSET %s",
            [*depth, *params, listing.limit, listing.offset],
        )
        return [tuple(row[0]) for row in cursor.fetchall()]
