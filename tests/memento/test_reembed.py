"""`manage.py reembed` and `memory_reembed_batch`: pending and outdated embeddings are redone, with history."""

import io

import numpy as np
import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection
from django.test.utils import CaptureQueriesContext

from documents.models import Chunk, Document
from integrations import embeddings
from memories import batch, services
from memories.models import Memory
from tests.factories import MemoryFactory

OLD_VECTOR = [1.0] + [0.0] * 383


def reembed(*args):
    out, err = io.StringIO(), io.StringIO()
    call_command("reembed", *args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def embed_rows(memory):
    return list(memory.history.filter(history_action="EMBED"))


@pytest.fixture
def rows(user):
    """Three pending memories, one embedded by an old model, one current; a pending and a current chunk."""
    pending = MemoryFactory.create_batch(3, owner=user)
    old = MemoryFactory(owner=user, content="Drinks oat milk", embedding=OLD_VECTOR, embedding_model="old-model")
    current = MemoryFactory(owner=user, content="Plays the cello", embedding=embeddings.embed_text("Plays the cello"),
                            embedding_model=settings.EMBEDDING_MODEL)
    document = Document.objects.create(owner=user, file="documents/x.txt", filename="x.txt")
    chunk = Chunk.objects.create(document=document, owner=user, content="Chapter one: the harbour.", chunk_index=0)
    current_chunk = Chunk.objects.create(document=document, owner=user, content="Chapter two.", chunk_index=1,
                                         embedding=OLD_VECTOR, embedding_model=settings.EMBEDDING_MODEL)
    return {"pending": pending, "old": old, "current": current, "chunk": chunk, "current_chunk": current_chunk}


def test_reembed_fills_pending_and_outdated_embeddings(rows):
    current_updated_at = rows["current"].updated_at
    with CaptureQueriesContext(connection) as queries:
        out, err = reembed("--batch-size", "2")
    assert out.strip() == f"Re-embedded 4 memories and 1 chunks with {settings.EMBEDDING_MODEL}."
    assert "memories" in err and "100%" in err  # the progress bar
    assert not any("OFFSET" in q["sql"] for q in queries.captured_queries)  # keyset pagination

    for memory in [*rows["pending"], rows["old"]]:
        memory.refresh_from_db()
        assert memory.embedding_model == settings.EMBEDDING_MODEL
        assert np.allclose(memory.embedding, embeddings.embed_text(memory.content), atol=1e-5)
        (record,) = embed_rows(memory)
        assert "re-embedded" in record.history_change_reason
        assert record.content == memory.content and record.embedding_model == settings.EMBEDDING_MODEL
        assert memory.history.count() == 2  # its creation, then the re-embedding
    rows["chunk"].refresh_from_db()
    assert rows["chunk"].embedding_model == settings.EMBEDDING_MODEL
    assert np.allclose(rows["chunk"].embedding, embeddings.embed_text("Chapter one: the harbour."), atol=1e-5)

    # already current rows are left alone
    rows["current"].refresh_from_db()
    assert rows["current"].updated_at == current_updated_at and embed_rows(rows["current"]) == []
    rows["current_chunk"].refresh_from_db()
    assert np.allclose(rows["current_chunk"].embedding, OLD_VECTOR)

    # a second run finds nothing to do
    assert reembed()[0].strip() == f"Re-embedded 0 memories and 0 chunks with {settings.EMBEDDING_MODEL}."


def test_reembed_all_redoes_every_row(rows):
    out, _ = reembed("--all", "--batch-size", "4")
    assert out.strip() == f"Re-embedded 5 memories and 2 chunks with {settings.EMBEDDING_MODEL}."
    assert len(embed_rows(rows["current"])) == 1
    rows["current_chunk"].refresh_from_db()
    assert np.allclose(rows["current_chunk"].embedding, embeddings.embed_text("Chapter two."), atol=1e-5)


def test_reembed_dry_run_changes_nothing(rows):
    out, _ = reembed("--dry-run")
    assert out.strip() == (
        f"Would re-embed 4 memories and 1 chunks with {settings.EMBEDDING_MODEL} (dry run: nothing changed)."
    )
    assert Memory.objects.filter(embedding__isnull=True).count() == 3
    assert Memory.history.filter(history_action="EMBED").count() == 0
    rows["old"].refresh_from_db()
    assert rows["old"].embedding_model == "old-model"
    rows["chunk"].refresh_from_db()
    assert rows["chunk"].embedding is None


def test_reembed_refuses_a_zero_batch_size(db):
    with pytest.raises(CommandError, match="batch-size"):
        reembed("--batch-size", "0")


def test_reembed_stops_cleanly_when_the_provider_is_down(openai_embeddings, user):
    memory = MemoryFactory(owner=user)
    openai_embeddings.fail(500, times=None)
    with pytest.raises(CommandError, match="Run the command again"):
        reembed()
    memory.refresh_from_db()
    assert memory.embedding is None and embed_rows(memory) == []


def test_reembed_uses_the_configured_provider_and_model(openai_embeddings, user):
    memory = MemoryFactory(owner=user, content="Speaks Portuguese")
    out, _ = reembed()
    assert out.strip() == "Re-embedded 1 memories and 0 chunks with fake-embed."
    memory.refresh_from_db()
    assert memory.embedding_model == "fake-embed"
    assert openai_embeddings.embedding_inputs() == ["Speaks Portuguese"]


def test_reembed_batch_skips_memories_edited_or_forgotten_while_embedding(user, monkeypatch):
    edited, forgotten, kept = MemoryFactory.create_batch(3, owner=user)
    real_embed = embeddings.embed_texts

    def embed_while_others_write(texts):
        Memory.objects.filter(pk=edited.pk).update(content="changed meanwhile")
        services.memory_forget(memory=forgotten)
        return real_embed(texts)

    monkeypatch.setattr(embeddings, "embed_texts", embed_while_others_write)
    assert batch.memory_reembed_batch(memories=[edited, forgotten, kept]) == 1
    assert not Memory.history.filter(id=forgotten.pk).exists()  # no history resurrected after erasure
    edited.refresh_from_db()
    assert edited.embedding is None and embed_rows(edited) == []
    (record,) = embed_rows(kept)
    assert record.content == kept.content


def test_reembed_batch_of_nothing(db):
    assert batch.memory_reembed_batch(memories=[]) == 0
