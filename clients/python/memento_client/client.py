"""A small client for Memento's memory API: store, search, read and trace memories over HTTP with a user's API
token (no Django here).

    from memento_client.client import MementoClient

    with MementoClient(url="http://127.0.0.1:8000", token="...") as memento:
        memory = memento.create("Is allergic to peanuts", key="allergy", importance=0.9)
        hits = memento.search("what should I not cook for them?", limit=5)
        memento.history(memory["id"])
"""

from __future__ import annotations

from typing import Any

import httpx

DEFAULT_TIMEOUT = 30.0


class MementoError(Exception):
    """The server refused a request (a 4xx or 5xx); `detail` is its answer, which names the bad field."""

    def __init__(self, status_code: int, detail: Any):
        super().__init__(f"Memento answered {status_code}: {detail}")
        self.status_code = status_code
        self.detail = detail


def api_root(url: str) -> str:
    """The API's base URL from a server URL (`http://host:8000`) or the API's own (`http://host:8000/api`)."""
    url = url.rstrip("/")
    return url if url.endswith("/api") else f"{url}/api"


END_USER_HEADER = "X-Memento-End-User"


def auth_headers(token: str, end_user: str | None = None) -> dict[str, str]:
    """The request headers for `token`; with a service token, `end_user` names the app's end user it acts for."""
    return {"Authorization": f"Token {token}", **({END_USER_HEADER: end_user} if end_user else {})}


def raise_for_status(response: httpx.Response) -> None:
    if response.is_success:
        return
    try:
        detail: Any = response.json()
    except ValueError:
        detail = response.text
    raise MementoError(response.status_code, detail)


class MementoClient:
    """The memory API: `create` (or upsert by namespace + key), `search`, `list`, `get`, `history`, `delete`."""

    def __init__(self, *, url: str, token: str, timeout: float = DEFAULT_TIMEOUT,
                 client: httpx.Client | None = None):
        self._client = client or httpx.Client(base_url=api_root(url), headers=auth_headers(token), timeout=timeout)

    def _call(self, method: str, path: str, **kwargs) -> Any:
        response = self._client.request(method, path, **kwargs)
        raise_for_status(response)
        return response.json() if response.content else None

    def create(self, content: str, **fields: Any) -> dict:
        """Store a memory (201), or update the live one with the same `namespace` + `key`. Other fields:
        namespace, key, category, subject, tags, importance, confidence, metadata, project, happened_at,
        expires_at, supersedes, allow_duplicate. A near-identical memory comes back with `"duplicate": true`."""
        return self._call("POST", "/memories/", json={"content": content, **fields})

    def search(self, query: str, *, limit: int = 20, mode: str = "hybrid", **filters: Any) -> list[dict]:
        """Memories ranked for `query` (`mode`: hybrid, semantic or keyword), each with its `score`."""
        body = {"query": query, "limit": limit, "mode": mode, **filters}
        return self._call("POST", "/memories/search/", json=body)["results"]

    def list(self, **filters: Any) -> list[dict]:
        """Live memories, newest first (the first page; filters such as namespace=[...] (a prefix), tags=[...],
        category, page, page_size)."""
        params = dict(filters)
        if isinstance(params.get("namespace"), list | tuple):
            params["namespace"] = "/".join(params["namespace"])
        if isinstance(params.get("tags"), list | tuple):
            params["tags"] = ",".join(params["tags"])
        return self._call("GET", "/memories/", params=params)["results"]

    def get(self, memory_id: str) -> dict:
        return self._call("GET", f"/memories/{memory_id}/")

    def history(self, memory_id: str) -> list[dict]:
        """Versions, newest first: who, when, why, and which fields changed."""
        return self._call("GET", f"/memories/{memory_id}/history/")

    def delete(self, memory_id: str) -> None:
        """Soft delete (a new version; restorable)."""
        self._call("DELETE", f"/memories/{memory_id}/")

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> MementoClient:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
