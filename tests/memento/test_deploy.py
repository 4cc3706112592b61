"""Production configuration: `check --deploy` is clean with the production env vars; migrations are complete."""

import os
import subprocess
import sys

from django.conf import settings
from django.core.management import call_command

PRODUCTION_ENV = {
    "DJANGO_DEBUG": "false",
    "DJANGO_SECRET_KEY": "a-long-random-production-secret-key-with-enough-entropy-0123456789abcdef",
    "DJANGO_ALLOWED_HOSTS": "memento.example.com",
    "DJANGO_SECURE_SSL_REDIRECT": "true",
    "DJANGO_SECURE_COOKIES": "true",
    "DJANGO_SECURE_HSTS_SECONDS": "31536000",
    "DJANGO_BEHIND_PROXY": "true",
}


def test_check_deploy_is_clean_with_production_env_vars():
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=settings.BASE_DIR, env={**os.environ, **PRODUCTION_ENV}, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "no issues" in result.stdout


def test_check_deploy_fails_with_the_public_secret_key_and_every_other_production_variable():
    env = {**os.environ, **PRODUCTION_ENV, "DJANGO_SECRET_KEY": settings.INSECURE_SECRET_KEY}
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy"],
        cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode != 0
    assert "memento.E002" in result.stderr


def test_check_deploy_warns_with_development_defaults():
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO_")}
    result = subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=settings.BASE_DIR, env=env, capture_output=True, text=True, timeout=120,
    )
    assert result.returncode != 0


def test_models_and_migrations_agree(db):
    call_command("makemigrations", "--check", "--dry-run", verbosity=0)


def test_vector_extension_and_indexes_exist(db):
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        assert cursor.fetchone()[0].startswith("0.8")
        cursor.execute("SELECT indexname, indexdef FROM pg_indexes WHERE indexname LIKE '%%hnsw%%'")
        indexes = dict(cursor.fetchall())
    assert set(indexes) == {"memory_embedding_hnsw", "chunk_embedding_hnsw", "message_embedding_hnsw",
                            "itemvector_embedding_hnsw"}
    assert all("halfvec_cosine_ops" in definition for definition in indexes.values())
