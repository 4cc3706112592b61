"""A small OpenAI-compatible HTTP server for tests: real HTTP on 127.0.0.1, nothing patched in the client.

    server = FakeOpenAIServer().start()       # or the `openai_server` fixture
    client = openai.OpenAI(base_url=server.base_url, api_key="k")

Endpoints (under /v1):

- POST /embeddings: `{model, input: str | list[str], dimensions?, encoding_format?}`. Vectors are deterministic
  in the text (`fake_embedding`): equal texts give equal unit vectors. `encoding_format="base64"` (what the
  openai client asks for by default) is answered with little-endian float32, like OpenAI does.
- POST /chat/completions: answers from a queue of scripted replies (`reply()`), `default_reply` ("{}") when the
  queue is empty. `stream: true` is answered as server-sent events.
- POST /responses: the Responses API, from the same queue of replies (a string: the output text); `stream: true`
  is answered with its events (response.created, response.output_text.delta, response.completed).
- GET /models: the models seen so far.

Scripting failures (each fault applies to the next `times` matching requests, `times=None` to all of them; a
request consumes at most one fault of each kind, oldest first):

- `fail(500, times=2)`: an error status with OpenAI's error body (`retry-after-ms` keeps client retries fast).
- `delay(3.0)`: wait before answering (to test client timeouts); `release()` ends the waits and answers, `stop()`
  cuts them short with a 503.
- `wrong_dimensions(1536)`: embeddings of another length than asked for.
- `bad_values(float("nan"))`: embeddings whose every float is that value (NaN, inf, 0.0).
- `malformed()`: a 200 whose body is not JSON.
- `require_api_key("k")`: 401 unless `Authorization: Bearer k`.

Every request is recorded in `requests` (method, path, lower-cased headers, raw body, parsed json) before any
fault applies.
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest

DEFAULT_DIMENSIONS = 384

Reply = str | dict[str, Any] | Callable[[dict[str, Any]], "str | dict[str, Any]"]


def fake_embedding(text: str, dimensions: int = DEFAULT_DIMENSIONS) -> list[float]:
    """The fake server's default vector for `text`: a unit normal vector seeded by the text's hash."""
    seed = int.from_bytes(hashlib.sha256(text.encode()).digest()[:8], "little")
    vector = np.random.default_rng(seed).standard_normal(dimensions)
    return (vector / np.linalg.norm(vector)).tolist()


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes
    json: Any  # None when the body is not JSON

    @property
    def endpoint(self) -> str:
        """The path without the /v1 prefix, e.g. "/embeddings"."""
        return self.path.removeprefix("/v1")

    @property
    def bearer(self) -> str | None:
        value = self.headers.get("authorization", "")
        return value[len("Bearer "):] if value.startswith("Bearer ") else None


@dataclass
class _Fault:
    kind: str  # status | delay | dimensions | values | malformed
    times: int | None
    endpoint: str | None
    params: dict[str, Any] = field(default_factory=dict)

    def matches(self, endpoint: str) -> bool:
        return (self.times is None or self.times > 0) and self.endpoint in (None, endpoint)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 30  # idle keep-alive connections end on their own
    server: _HTTPServer

    def log_message(self, format, *args) -> None:  # noqa: A002 - the base class's name
        pass

    def do_GET(self) -> None:
        self.server.fake._handle(self)

    def do_POST(self) -> None:
        self.server.fake._handle(self)


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    fake: FakeOpenAIServer

    def handle_error(self, request, client_address) -> None:
        # a client that gave up (timeout) leaves a broken pipe behind: expected, not worth a traceback
        if not isinstance(sys.exc_info()[1], ConnectionError | TimeoutError):
            super().handle_error(request, client_address)


class FakeOpenAIServer:
    def __init__(self, *, dimensions: int = DEFAULT_DIMENSIONS):
        self.dimensions = dimensions  # when the request does not ask for `dimensions`
        self.embedder: Callable[[str, int], list[float]] = fake_embedding
        self.reverse_order = False  # answer embeddings in reverse order (their `index` stays right)
        self.default_reply = "{}"
        self.requests: list[RecordedRequest] = []
        self._replies: deque[Reply] = deque()
        self._faults: list[_Fault] = []
        self._api_key: str | None = None
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._released = threading.Event()
        self._ids = itertools.count(1)
        self._httpd: _HTTPServer | None = None
        self._thread: threading.Thread | None = None

    # --- lifecycle ------------------------------------------------------------------------------------------

    def start(self) -> FakeOpenAIServer:
        self._stopping.clear()
        self._released.clear()
        self._httpd = _HTTPServer(("127.0.0.1", 0), _Handler)
        self._httpd.fake = self
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        name="fake-openai", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # releases delayed requests
        if self._httpd is not None:
            self._httpd.shutdown()
            self._httpd.server_close()
            self._thread.join(timeout=5)
            self._httpd = self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def port(self) -> int:
        assert self._httpd is not None, "the server is not running"
        return self._httpd.server_address[1]

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    # --- scripting ------------------------------------------------------------------------------------------

    def fail(self, status: int = 500, *, times: int | None = 1, message: str | None = None,
             endpoint: str | None = None, retry_after_ms: int | None = 10,
             headers: dict[str, str] | None = None) -> None:
        """Answer the next `times` requests (to `endpoint`, e.g. "/embeddings", or any) with `status`."""
        extra = dict(headers or {})
        if retry_after_ms is not None:
            extra.setdefault("retry-after-ms", str(retry_after_ms))
        self._add(_Fault("status", times, endpoint, {"status": status, "message": message, "headers": extra}))

    def delay(self, seconds: float, *, times: int | None = 1, endpoint: str | None = None) -> None:
        """Wait `seconds` before answering the next `times` requests."""
        self._add(_Fault("delay", times, endpoint, {"seconds": seconds}))

    def release(self) -> None:
        """Answer the requests that are waiting out a `delay` now (and any later one at once)."""
        self._released.set()

    def wrong_dimensions(self, dimensions: int, *, times: int | None = None) -> None:
        """Embeddings of `dimensions` floats whatever the request asked for."""
        self._add(_Fault("dimensions", times, "/embeddings", {"dimensions": dimensions}))

    def bad_values(self, value: float = float("nan"), *, times: int | None = None) -> None:
        """Embeddings whose every float is `value` (NaN, inf, 0.0), in JSON and in base64 alike."""
        self._add(_Fault("values", times, "/embeddings", {"value": value}))

    def malformed(self, *, times: int | None = 1, endpoint: str | None = None,
                  body: bytes = b'{"object": "list", "data": [') -> None:
        """A 200 with a JSON content type and a body that is not JSON."""
        self._add(_Fault("malformed", times, endpoint, {"body": body}))

    def require_api_key(self, key: str | None) -> None:
        """401 for requests without `Authorization: Bearer <key>` (None: accept anything)."""
        self._api_key = key

    def reply(self, *replies: Reply) -> None:
        """Queue chat completion replies, used once each in order. A string is the assistant's content; a dict
        with "choices" is the whole response body, any other dict is the assistant message itself (tool calls);
        a callable gets the request's json and returns either."""
        with self._lock:
            self._replies.extend(replies)

    def reset(self) -> None:
        """Forget recorded requests, queued replies and faults."""
        with self._lock:
            self.requests.clear()
            self._replies.clear()
            self._faults.clear()
            self._api_key = None

    def _add(self, fault: _Fault) -> None:
        with self._lock:
            self._faults.append(fault)

    # --- assertions helpers ---------------------------------------------------------------------------------

    def requests_to(self, endpoint: str) -> list[RecordedRequest]:
        """Recorded requests to `endpoint`, e.g. "/embeddings"."""
        return [r for r in self.requests if r.endpoint == endpoint]

    def embedding_inputs(self) -> list[str]:
        """Every text that reached /embeddings, in order."""
        texts: list[str] = []
        for request in self.requests_to("/embeddings"):
            value = (request.json or {}).get("input")
            texts.extend([value] if isinstance(value, str) else value or [])
        return texts

    @property
    def pending_replies(self) -> int:
        return len(self._replies)

    # --- serving --------------------------------------------------------------------------------------------

    def _handle(self, handler: _Handler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length) if length else b""
        try:
            payload = json.loads(body) if body else None
        except ValueError:
            payload = None
        path = handler.path.split("?", 1)[0]
        request = RecordedRequest(handler.command, path, {k.lower(): v for k, v in handler.headers.items()},
                                  body, payload)
        with self._lock:
            self.requests.append(request)
            faults = self._take_faults(request.endpoint)

        if "delay" in faults:
            deadline = time.monotonic() + faults["delay"]["seconds"]
            while not self._released.is_set() and time.monotonic() < deadline:
                if self._stopping.wait(min(0.05, max(0.0, deadline - time.monotonic()))):
                    return self._send_error(handler, 503, "server stopping")
        if "status" in faults:
            params = faults["status"]
            return self._send_error(handler, params["status"], params["message"], params["headers"])
        if "malformed" in faults:
            return self._send(handler, 200, faults["malformed"]["body"])
        if self._api_key is not None and request.bearer != self._api_key:
            return self._send_error(handler, 401, "Incorrect API key provided.", code="invalid_api_key")

        route = (handler.command, request.endpoint)
        if route == ("POST", "/embeddings"):
            return self._embeddings(handler, request, faults.get("dimensions", {}).get("dimensions"),
                                    faults.get("values"))
        if route == ("POST", "/chat/completions"):
            return self._chat(handler, request)
        if route == ("POST", "/responses"):
            return self._responses(handler, request)
        if route == ("GET", "/models"):
            return self._models(handler)
        return self._send_error(handler, 404, f"Unknown request URL: {handler.command} {path}.", code="unknown_url")

    def _take_faults(self, endpoint: str) -> dict[str, dict[str, Any]]:
        taken: dict[str, dict[str, Any]] = {}
        for fault in self._faults:
            if fault.kind not in taken and fault.matches(endpoint):
                taken[fault.kind] = fault.params
                if fault.times is not None:
                    fault.times -= 1
        self._faults = [f for f in self._faults if f.times is None or f.times > 0]
        return taken

    def _embeddings(self, handler: _Handler, request: RecordedRequest, forced_dimensions: int | None,
                    bad: dict[str, Any] | None = None) -> None:
        payload = request.json
        if not isinstance(payload, dict) or "model" not in payload or "input" not in payload:
            return self._send_error(handler, 400, "'model' and 'input' are required.", code="invalid_request")
        texts = payload["input"]
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) and t for t in texts):
            return self._send_error(handler, 400, "'input' must be a non-empty string or a list of them.",
                                    code="invalid_request")
        dimensions = forced_dimensions or payload.get("dimensions") or self.dimensions
        data = []
        for index, text in enumerate(texts):
            vector = self.embedder(text, dimensions)
            if bad is not None:
                vector = [bad["value"]] * len(vector)
            if payload.get("encoding_format") == "base64":
                vector = base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode()
            data.append({"object": "embedding", "index": index, "embedding": vector})
        if self.reverse_order:
            data.reverse()
        tokens = sum(len(text.split()) for text in texts)
        self._send_json(handler, 200, {
            "object": "list", "data": data, "model": payload["model"],
            "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
        })

    def _chat(self, handler: _Handler, request: RecordedRequest) -> None:
        payload = request.json
        if not isinstance(payload, dict) or "model" not in payload or not payload.get("messages"):
            return self._send_error(handler, 400, "'model' and 'messages' are required.", code="invalid_request")
        with self._lock:
            reply: Reply = self._replies.popleft() if self._replies else self.default_reply
        if callable(reply):
            reply = reply(payload)
        if isinstance(reply, dict) and "choices" in reply:
            return self._send_json(handler, 200, reply)
        message = reply if isinstance(reply, dict) else {"role": "assistant", "content": reply}
        message = {"role": "assistant", "content": None, **message}
        prompt = sum(len(str(m.get("content") or "").split()) for m in payload["messages"])
        completion = len(str(message.get("content") or "").split())
        completion_id = f"chatcmpl-fake-{next(self._ids)}"
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        if payload.get("stream"):
            return self._stream(handler, completion_id, payload["model"], message, finish)
        self._send_json(handler, 200, {
            "id": completion_id, "object": "chat.completion", "created": int(time.time()),
            "model": payload["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        })

    def _stream(self, handler: _Handler, completion_id: str, model: str, message: dict, finish: str) -> None:
        def chunk(delta: dict, finish_reason: str | None) -> bytes:
            body = {"id": completion_id, "object": "chat.completion.chunk", "created": int(time.time()),
                    "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason}]}
            return b"data: " + json.dumps(body).encode() + b"\n\n"

        delta = {k: v for k, v in message.items() if v is not None}
        if "tool_calls" in delta:
            delta["tool_calls"] = [{"index": i, **call} for i, call in enumerate(delta["tool_calls"])]
        events = chunk(delta, None) + chunk({}, finish) + b"data: [DONE]\n\n"
        self._send(handler, 200, events, content_type="text/event-stream")

    def _responses(self, handler: _Handler, request: RecordedRequest) -> None:
        payload = request.json
        if not isinstance(payload, dict) or "model" not in payload or not payload.get("input"):
            return self._send_error(handler, 400, "'model' and 'input' are required.", code="invalid_request")
        with self._lock:
            reply: Reply = self._replies.popleft() if self._replies else self.default_reply
        if callable(reply):
            reply = reply(payload)
        text = reply if isinstance(reply, str) else json.dumps(reply)
        number = next(self._ids)
        item = {"type": "message", "id": f"msg_fake_{number}", "status": "completed", "role": "assistant",
                "content": [{"type": "output_text", "text": text, "annotations": []}]}

        def response(status: str, output: list) -> dict:
            return {"id": f"resp_fake_{number}", "object": "response", "created_at": int(time.time()),
                    "model": payload["model"], "status": status, "output": output, "parallel_tool_calls": True,
                    "tool_choice": "auto", "tools": [], "usage": {"input_tokens": 1, "output_tokens": 1,
                                                                  "total_tokens": 2}}

        if not payload.get("stream"):
            return self._send_json(handler, 200, response("completed", [item]))
        events = [
            {"type": "response.created", "response": response("in_progress", [])},
            {"type": "response.output_text.delta", "item_id": item["id"], "output_index": 0, "content_index": 0,
             "delta": text},
            {"type": "response.completed", "response": response("completed", [item])},
        ]
        body = b"".join(f"event: {event['type']}\ndata: {json.dumps({**event, 'sequence_number': i})}\n\n".encode()
                        for i, event in enumerate(events))
        self._send(handler, 200, body, content_type="text/event-stream")

    def _models(self, handler: _Handler) -> None:
        seen = sorted({r.json["model"] for r in self.requests if isinstance(r.json, dict) and "model" in r.json})
        self._send_json(handler, 200, {"object": "list", "data": [
            {"id": name, "object": "model", "created": 0, "owned_by": "fake"} for name in seen
        ]})

    # --- writing --------------------------------------------------------------------------------------------

    def _send_error(self, handler: _Handler, status: int, message: str | None,
                    headers: dict[str, str] | None = None, code: str | None = None) -> None:
        kind = {400: "invalid_request_error", 401: "invalid_request_error", 404: "invalid_request_error",
                429: "rate_limit_exceeded"}.get(status, "server_error")
        if message is None:
            try:
                message = HTTPStatus(status).phrase
            except ValueError:
                message = "error"
        self._send_json(handler, status, {"error": {"message": message, "type": kind, "param": None, "code": code}},
                        headers)

    def _send_json(self, handler: _Handler, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        self._send(handler, status, json.dumps(body).encode(), headers=headers)

    def _send(self, handler: _Handler, status: int, body: bytes, *, content_type: str = "application/json",
              headers: dict[str, str] | None = None) -> None:
        try:
            handler.send_response(status)
            handler.send_header("Content-Type", content_type)
            handler.send_header("Content-Length", str(len(body)))
            for name, value in (headers or {}).items():
                handler.send_header(name, value)
            handler.end_headers()
            handler.wfile.write(body)
            handler.wfile.flush()
        except (ConnectionError, TimeoutError):
            handler.close_connection = True  # the client gave up (e.g. its timeout)


# --- pytest fixtures (tests/conftest.py registers this module as a plugin) ------------------------------------------


@pytest.fixture
def openai_server() -> Iterator[FakeOpenAIServer]:
    """A running fake OpenAI server; `.base_url` ends in /v1."""
    server = FakeOpenAIServer().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def openai_embeddings(settings, monkeypatch, openai_server: FakeOpenAIServer) -> Iterator[FakeOpenAIServer]:
    """Embeddings from the fake server through the real OpenAI provider (built on first use from these settings;
    the process's provider is back afterwards)."""
    from integrations import embeddings

    settings.EMBEDDING_PROVIDER = "openai"
    settings.EMBEDDING_API_BASE = openai_server.base_url
    settings.EMBEDDING_API_KEY = "test-key"
    settings.EMBEDDING_MODEL = "fake-embed"
    settings.EMBEDDING_DIMENSIONS = DEFAULT_DIMENSIONS
    settings.EMBEDDING_API_TIMEOUT = 2.0
    monkeypatch.setattr(embeddings, "_provider", None)
    yield openai_server
