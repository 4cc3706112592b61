"""A dedicated database per benchmark on the same server, so benchmark data never mixes with the app's."""

import os
import sys
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[1]


def bench_database_url(name: str) -> str:
    """URL of database `name` on the server the app uses (created if missing, with the app's role as owner)."""
    sys.path.insert(0, str(ROOT))
    import psycopg

    if "DATABASE_URL" in os.environ:
        base = os.environ["DATABASE_URL"]
    else:
        from memento.embedded_db import database_url

        base = database_url(ROOT / ".memento" / "pgdata")
    parts = urlsplit(base)
    url = urlunsplit(parts._replace(path=f"/{name}"))
    with psycopg.connect(base.replace("postgresql://", "postgresql://", 1), autocommit=True) as conn:
        if not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [name]).fetchone():
            conn.execute(f'CREATE DATABASE "{name}"')
    return url
