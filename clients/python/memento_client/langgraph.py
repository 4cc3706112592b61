"""LangGraph stores backed by a Memento server: compile a graph with `store=MementoStore(...)` and every
`store.put / get / search / delete / list_namespaces` is a memory of the token's user (visible in the panel,
history, export and memory search). `batch` / `abatch` send a whole batch in one round trip (`/api/store/batch`).

    from memento_client.langgraph import MementoStore

    store = MementoStore(url="http://127.0.0.1:8000", token="...")
    graph = builder.compile(store=store)

Memento embeds on the server with its own model: `index={"fields": [...]}` chooses the default fields to index
(LangGraph's default is the whole value, `["$"]`); `dims` and `embed` are accepted for drop-in compatibility and
not used. Search with a query scores by cosine similarity (the same as an inner product: the vectors are unit
length; `"distance_type": "l2"` gives PostgresStore's negated euclidean distance instead), with no threshold
unless `threshold=` (a cosine similarity) is given.
TTLs (minutes) are kept by the server; expired items are never returned, and reads refresh TTLs by default.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import math
from collections.abc import Iterable
from datetime import datetime
from typing import Any

import httpx
from langgraph.store.base import (
    BaseStore,
    GetOp,
    IndexConfig,
    Item,
    ListNamespacesOp,
    Op,
    PutOp,
    Result,
    SearchItem,
    SearchOp,
    TTLConfig,
    validate_op_namespace,
)
from langgraph.store.base.batch import AsyncBatchedBaseStore

from memento_client.client import DEFAULT_TIMEOUT, api_root, auth_headers, raise_for_status

__all__ = ["MementoStore", "AsyncMementoStore"]

BATCH_PATH = "/store/batch"
MAX_OPS_PER_REQUEST = 500  # the server takes up to 1000
MAX_BYTES_PER_REQUEST = 2_000_000  # under Django's default 2.5 MB request body


class _Batching:
    """What both stores share: the batch endpoint's JSON for LangGraph's ops, and back."""

    index_config: IndexConfig | None
    threshold: float | None

    def _configure(self, index: IndexConfig | None, ttl: TTLConfig | None, threshold: float | None) -> None:
        self.index_config = dict(index) if index else None
        self.ttl_config = dict(ttl) if ttl else None
        self.threshold = threshold

    def _op_json(self, op: Op) -> dict:
        if isinstance(op, GetOp):
            return {"op": "get", "namespace": list(op.namespace), "key": op.key, "refresh_ttl": op.refresh_ttl}
        if isinstance(op, PutOp):
            if op.value is None:
                return {"op": "delete", "namespace": list(op.namespace), "key": op.key}
            index = op.index
            if index is None and self.index_config:
                index = self.index_config.get("fields")
            return {"op": "put", "namespace": list(op.namespace), "key": op.key, "value": dict(op.value),
                    "index": index, "ttl": op.ttl}
        if isinstance(op, SearchOp):
            body = {"op": "search", "namespace_prefix": list(op.namespace_prefix), "filter": op.filter,
                    "limit": op.limit, "offset": op.offset, "query": op.query, "refresh_ttl": op.refresh_ttl}
            if self.threshold is not None:
                body["threshold"] = self.threshold
            return body
        if isinstance(op, ListNamespacesOp):
            return {"op": "list_namespaces", "max_depth": op.max_depth, "limit": op.limit, "offset": op.offset,
                    "match_conditions": [{"match_type": c.match_type, "path": list(c.path)}
                                         for c in op.match_conditions or ()]}
        raise ValueError(f"Unknown operation type: {type(op).__name__}")

    def _requests(self, ops: list[Op]) -> list[list[dict]]:
        """The ops as request bodies' op lists, each under the server's limits. Every op's namespace is checked
        first: a bad label fails the whole batch before anything is sent."""
        for op in ops:
            validate_op_namespace(op)
        chunks: list[list[dict]] = [[]]
        size = 0
        for op in ops:
            encoded = self._op_json(op)
            length = len(json.dumps(encoded, ensure_ascii=False).encode())
            if chunks[-1] and (len(chunks[-1]) >= MAX_OPS_PER_REQUEST or size + length > MAX_BYTES_PER_REQUEST):
                chunks.append([])
                size = 0
            chunks[-1].append(encoded)
            size += length
        return chunks if chunks[0] else []

    def _result(self, op: Op, data: Any) -> Result:
        if isinstance(op, GetOp):
            return None if data is None else _item(Item, data)
        if isinstance(op, SearchOp):
            found = [_item(SearchItem, entry) for entry in data]
            if (self.index_config or {}).get("distance_type") == "l2":
                for item in found:  # unit vectors: |a - b| = sqrt(2 - 2 cos); PostgresStore scores -|a - b|
                    if item.score is not None:
                        item.score = -math.sqrt(max(0.0, 2.0 - 2.0 * item.score))
            return found
        if isinstance(op, ListNamespacesOp):
            return [tuple(namespace) for namespace in data]
        return None


def _item(cls, data: dict):
    fields = {"namespace": tuple(data["namespace"]), "key": data["key"], "value": data["value"],
              "created_at": datetime.fromisoformat(data["created_at"]),
              "updated_at": datetime.fromisoformat(data["updated_at"])}
    if cls is SearchItem:
        fields["score"] = data.get("score")
    return cls(**fields)


def _done() -> concurrent.futures.Future[None]:
    future: concurrent.futures.Future[None] = concurrent.futures.Future()
    future.set_result(None)
    return future


class MementoStore(_Batching, BaseStore):
    """A LangGraph `BaseStore` on a Memento server, for the user whose API `token` it is (with a service token,
    for the app's end user `end_user`: created on first use, isolated from the others). Thread-safe;
    `abatch` runs `batch` in a worker thread (for a natively async store, see `AsyncMementoStore`)."""

    supports_ttl = True

    def __init__(self, *, url: str, token: str, index: IndexConfig | None = None, ttl: TTLConfig | None = None,
                 threshold: float | None = None, timeout: float = DEFAULT_TIMEOUT,
                 client: httpx.Client | None = None, end_user: str | None = None):
        super().__init__()
        self._configure(index, ttl, threshold)
        self._client = client or httpx.Client(base_url=api_root(url), headers=auth_headers(token, end_user),
                                              timeout=timeout)

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        answers: list[Any] = []
        for chunk in self._requests(ops):
            response = self._client.post(BATCH_PATH, json={"ops": chunk})
            raise_for_status(response)
            answers += response.json()["results"]
        return [self._result(op, answer) for op, answer in zip(ops, answers, strict=True)]

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        return await asyncio.get_running_loop().run_in_executor(None, self.batch, list(ops))

    def start_ttl_sweeper(self, sweep_interval_minutes: int | None = None) -> concurrent.futures.Future[None]:
        """Nothing to start: the server sweeps expired items, and never returns them meanwhile (kept so code
        written for `PostgresStore` runs unchanged)."""
        return _done()

    def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        return True

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> MementoStore:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


class AsyncMementoStore(_Batching, AsyncBatchedBaseStore):
    """The async store: concurrent `aget/aput/asearch/...` calls made in the same event-loop tick are gathered
    into one batch request, as in LangGraph's `AsyncPostgresStore`. Create it inside a running event loop; the
    sync methods work from other threads."""

    supports_ttl = True

    def __init__(self, *, url: str, token: str, index: IndexConfig | None = None, ttl: TTLConfig | None = None,
                 threshold: float | None = None, timeout: float = DEFAULT_TIMEOUT,
                 client: httpx.AsyncClient | None = None, end_user: str | None = None):
        super().__init__()
        self._configure(index, ttl, threshold)
        self._client = client or httpx.AsyncClient(base_url=api_root(url), headers=auth_headers(token, end_user),
                                                    timeout=timeout)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        answers: list[Any] = []
        for chunk in self._requests(ops):
            response = await self._client.post(BATCH_PATH, json={"ops": chunk})
            raise_for_status(response)
            answers += response.json()["results"]
        return [self._result(op, answer) for op, answer in zip(ops, answers, strict=True)]

    async def start_ttl_sweeper(self, sweep_interval_minutes: int | None = None) -> asyncio.Task[None]:
        """Nothing to start: the server sweeps (see `MementoStore.start_ttl_sweeper`)."""
        return asyncio.create_task(asyncio.sleep(0))

    async def stop_ttl_sweeper(self, timeout: float | None = None) -> bool:
        return True

    async def aclose(self) -> None:
        await self._client.aclose()

    async def __aenter__(self) -> AsyncMementoStore:
        return self

    async def __aexit__(self, *exc_info) -> None:
        await self.aclose()
