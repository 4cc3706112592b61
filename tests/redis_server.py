"""A throw-away redis-server for the pipeline tests (a real Redis broker) and the benches (broker, shared cache)."""

import shutil
import socket
import subprocess
import tempfile
import time
from contextlib import contextmanager

from tests.web import free_port

READY_SECONDS = 300  # a bound for a loaded machine: readiness is waited for, never a fixed time


@contextmanager
def redis_server(database: int = 0):
    """A redis-server on a free loopback port, without persistence, for the block: its URL (database `database`),
    or None when redis-server is not installed."""
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    port, workdir = free_port(), tempfile.mkdtemp(prefix="memento-redis-")
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly",
                                "no", "--dir", workdir], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + READY_SECONDS
        while True:  # ready when it accepts a connection
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError(f"redis-server did not start on port {port}") from None
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/{database}"
    finally:
        process.terminate()
        process.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)
