"""A real HTTP receiver on 127.0.0.1 for webhook tests: records every POST and answers from a script of statuses
(then 200), in its own thread."""

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest


@dataclass
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    status: int
    at: float = field(default_factory=time.monotonic)  # when it arrived


@dataclass
class Receiver:
    server: ThreadingHTTPServer
    answers: list[int] = field(default_factory=list)  # statuses answered first, in order; then `default`
    default: int = 200
    decide: Callable[[int], int] | None = None  # or: the status of the n-th request (0-based)
    received: list[Received] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hook"

    def answer(self) -> int:
        with self.lock:
            if self.decide is not None:
                return self.decide(len(self.received))
            return self.answers.pop(0) if self.answers else self.default


def start_receiver() -> Receiver:
    holder: list[Receiver] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802 -- http.server's name
            body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            receiver = holder[0]
            status = receiver.answer()
            with receiver.lock:
                receiver.received.append(Received(self.path, dict(self.headers), body, status))
            self.send_response(status)
            if 300 <= status < 400:
                self.send_header("Location", "http://127.0.0.1:1/elsewhere")
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder.append(Receiver(server))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return holder[0]


@pytest.fixture
def receiver(settings):
    """A receiver on loopback, which the tests allow (WEBHOOKS_ALLOW_PRIVATE)."""
    settings.WEBHOOKS_ALLOW_PRIVATE = True
    found = start_receiver()
    yield found
    found.server.shutdown()
    found.server.server_close()
