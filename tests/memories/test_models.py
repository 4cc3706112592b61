"""Database-level rules of the memory tables: constraints hold even for writes that skip the services."""

import pytest
from django.db import IntegrityError, connection, transaction
from django.db.models import Q

from conversations.models import Conversation, Message
from documents.models import Chunk, Document
from memories.models import Memory
from tests.factories import MemoryFactory


@pytest.mark.parametrize(
    ("field", "value"),
    [("importance", 1.01), ("importance", -0.1), ("confidence", 2.0), ("content", "")],
)
def test_check_constraints_reject_out_of_range_values(user, field, value):
    with pytest.raises(IntegrityError), transaction.atomic():
        MemoryFactory(owner=user, **{field: value})


def test_defaults(user):
    memory = MemoryFactory(owner=user)
    assert memory.namespace == ["memories"]
    assert (memory.importance, memory.confidence, memory.version, memory.source) == (0.5, 1.0, 1, "explicit")
    assert memory.is_active and memory.embedding is None


def test_key_is_unique_per_owner_and_namespace_among_active_memories(user, other_user):
    MemoryFactory(owner=user, key="home")
    MemoryFactory(owner=other_user, key="home")
    MemoryFactory(owner=user, key="home", namespace=["memories", "other"])
    MemoryFactory(owner=user, key="home", is_active=False)
    with pytest.raises(IntegrityError), transaction.atomic():
        MemoryFactory(owner=user, key="home")


def test_a_memory_cannot_supersede_itself_in_the_database(user):
    memory = MemoryFactory(owner=user)
    memory.supersedes_id = memory.pk
    with pytest.raises(IntegrityError), transaction.atomic():
        memory.save()


def test_full_text_vector_is_kept_in_sync_by_the_database(user):
    memory = MemoryFactory(owner=user, content="Adopted a greyhound named Comet", subject="Liam")
    match = Q(search_vector="greyhound")
    assert Memory.objects.filter(match, pk=memory.pk).exists()
    memory.content = "Adopted a tabby cat"
    memory.save()
    assert not Memory.objects.filter(match, pk=memory.pk).exists()
    assert Memory.objects.filter(Q(search_vector="liam"), pk=memory.pk).exists()


def test_conversation_document_and_chunk_models(user):
    conversation = Conversation.objects.create(owner=user, title="Trip planning", agent_id="travel")
    message = Message.objects.create(conversation=conversation, owner=user, role="user", content="hi", sequence=1)
    assert conversation.status == "active" and message.extraction_status == "pending"
    with pytest.raises(IntegrityError), transaction.atomic():
        Message.objects.create(conversation=conversation, owner=user, role="user", content="again", sequence=1)
    document = Document.objects.create(owner=user, filename="notes.md", file="documents/x.md")
    assert document.processing_status == "pending"
    Chunk.objects.create(document=document, owner=user, content="Section one", chunk_index=0, token_count=2)
    with pytest.raises(IntegrityError), transaction.atomic():
        Chunk.objects.create(document=document, owner=user, content="dup", chunk_index=0)
    assert Chunk.objects.filter(search_vector="section").count() == 1


def test_memory_pages_keep_room_for_reads_to_update_in_place(db):
    # reads set accessed_at: with room on the page the update touches no index (HOT), the HNSW graph included
    with connection.cursor() as cursor:
        cursor.execute("SELECT reloptions FROM pg_class WHERE relname = 'memories_memory'")
        assert "fillfactor=80" in cursor.fetchone()[0]


def test_the_ttl_rule_is_the_same_in_the_orm_and_in_hand_written_sql(user):
    """memories.models.expiry: one TTL template serves the ORM's filters and the raw statements (near-duplicates,
    the search snapshot); both give the same deadline, the later of the last write and read plus the TTL."""
    from datetime import timedelta

    from django.utils import timezone

    from memories.models import ttl_deadline, ttl_deadline_sql

    written = timezone.now() - timedelta(hours=3)
    read = written + timedelta(hours=1)
    memory = MemoryFactory(owner=user, ttl_minutes=90, updated_at=written, accessed_at=read)
    orm = Memory.objects.filter(pk=memory.pk).annotate(deadline=ttl_deadline()).values_list("deadline", flat=True)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {ttl_deadline_sql('m')} FROM memories_memory m WHERE m.id = %s", [memory.pk])
        [(raw,)] = cursor.fetchall()
    assert orm.get() == raw == read + timedelta(minutes=90)
    assert Memory.objects.filter(pk=memory.pk).expired().exists()
    Memory.objects.filter(pk=memory.pk).update(ttl_minutes=150)
    assert not Memory.objects.filter(pk=memory.pk).expired().exists()
