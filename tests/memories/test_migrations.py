"""Migrations that change stored memories: run backwards and forwards over rows written before them."""

from datetime import UTC, datetime

import pytest
from django.core.management import call_command
from django.db import connection

from memories.models import Memory
from tests.factories import MessageFactory


@pytest.mark.django_db(transaction=True)
def test_0017_gives_stored_memories_their_valid_time(user):
    message = MessageFactory(conversation__owner=user, sent_at=datetime(2024, 6, 20, 18, 30, tzinfo=UTC))
    call_command("migrate", "memories", "0016", verbosity=0)
    try:
        with connection.cursor() as cursor:
            insert = ("INSERT INTO memories_memory (id, owner_id, agent_id, namespace, key, content, embedding_model, "
                      "metadata, tags, entities, category, subject, importance, confidence, source, source_ref, "
                      "links, version, is_active, created_at, updated_at, happened_at, message_id, indexed, "
                      "superseded_by_id) VALUES (%s, %s, '', '{memories}', %s, %s, '', '{}', '{}', '{}', '', '', "
                      "0.5, 1, 'explicit', '{}', '{}', 1, true, %s, %s, %s, %s, true, %s)")
            stored = datetime(2025, 1, 2, tzinfo=UTC)
            rows = [
                ("00000000-0000-0000-0000-000000000003", "c", "Lives in Grenoble", stored, None, message.pk, None),
                ("00000000-0000-0000-0000-000000000001", "a", "Lives in Paris", stored,
                 datetime(2021, 3, 1, tzinfo=UTC), None, "00000000-0000-0000-0000-000000000003"),
                ("00000000-0000-0000-0000-000000000002", "b", "Likes jazz", stored, None, None, None),
            ]
            for pk, key, content, created, happened, message_id, successor in rows:
                cursor.execute(insert, [pk, user.pk, key, content, created, created, happened, message_id, successor])
    finally:  # every app to its latest: going back unapplied the migrations of the apps that depend on memories
        call_command("migrate", verbosity=0)
    by_content = {m.content: m for m in Memory.objects.filter(owner=user)}
    assert by_content["Lives in Paris"].valid_from == datetime(2021, 3, 1, tzinfo=UTC)
    assert by_content["Lives in Paris"].valid_to == datetime(2024, 6, 20, 18, 30, tzinfo=UTC)
    assert by_content["Lives in Grenoble"].valid_from == datetime(2024, 6, 20, 18, 30, tzinfo=UTC)
    assert by_content["Lives in Grenoble"].valid_to is None
    assert by_content["Likes jazz"].valid_from == datetime(2025, 1, 2, tzinfo=UTC)
