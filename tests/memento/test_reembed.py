"""`manage.py reembed` (memento.reembed): every table switched to another model without downtime.

The second model is the real local model's vectors turned by a fixed random rotation: its cosines between two texts
are the local model's, but a cosine between a rotated and an unrotated vector is noise, so a search that compared
vectors of the two models would not find what it finds with either."""

import io

import numpy as np
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.db import connection

from conversations.models import Message
from conversations.processing import messages_embed
from conversations.selectors import message_search
from conversations.services import messages_append
from documents.models import Chunk, Document
from documents.selectors import chunk_search
from integrations import embeddings
from memento import reembed
from memories import services, spaces
from memories.models import EmbeddingSpace, Memory
from memories.search import memory_search
from tests.factories import ConversationFactory

LOCAL = "all-MiniLM-L6-v2"
ROTATED = "rotated-minilm"
FACTS = ["Ana is allergic to peanuts", "Ana drinks oat milk every morning", "Ana's sister lives in Lisbon",
         "Ana plays the cello on Sundays", "Ana works as a nurse in Porto"]


class RotatedProvider:
    """The local model's vectors times a fixed orthogonal matrix; counts the texts it embedded, and fails once
    `fail_after` texts are done (None: never)."""

    def __init__(self):
        rng = np.random.default_rng(31)
        self.rotation, _ = np.linalg.qr(rng.normal(size=(384, 384)))
        self.model_name = ROTATED
        self.embedded: list[str] = []
        self.fail_after: int | None = None

    def embed(self, texts):
        if self.fail_after is not None and len(self.embedded) + len(texts) > self.fail_after:
            raise embeddings.EmbeddingError("the rotated model is down")
        self.embedded += list(texts)
        vectors = np.asarray(embeddings.embed_texts(texts, LOCAL)) @ self.rotation
        return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).tolist()


@pytest.fixture
def rotated(settings):
    """Yields a function that makes the rotated model the configured one (as an operator changes the setting)."""
    provider = RotatedProvider()
    embeddings.register_provider(ROTATED, provider)
    settings.EMBEDDING_MODEL = LOCAL

    def configure():
        settings.EMBEDDING_MODEL = ROTATED
        return provider

    yield configure
    embeddings.register_provider(ROTATED, None)


@pytest.fixture
def put(api):
    def _put(namespace, key, value, **extra):
        response = api.put("/api/store/items", {"namespace": namespace, "key": key, "value": value, **extra},
                           format="json")
        assert response.status_code == 204, response.content

    return _put


@pytest.fixture
def rows(user, put):
    """Memories, messages, a chunk and store items, all written through the services with the local model."""
    memories = [services.memory_create(owner=user, content=fact).memory for fact in FACTS]
    conversation = ConversationFactory(owner=user)
    appended = messages_append(conversation=conversation, messages=[
        {"role": "user", "content": fact.replace("Ana", "I").replace("'s", " my")} for fact in FACTS])
    messages_embed(message_ids=[message.pk for message, _ in appended])
    document = Document.objects.create(owner=user, file="documents/x.txt", filename="x.txt")
    text = "The harbour of Porto opens at dawn."
    Chunk.objects.create(document=document, owner=user, content=text, chunk_index=0,
                         embedding=embeddings.embed_text(text, spaces.active_model("chunks")), embedding_model=LOCAL)
    put(["recipes"], "bread", {"title": "Sourdough bread", "steps": ["Feed the starter", "Bake at dawn"]},
        index=["title", "steps[*]"])
    spaces.record_models()  # as `migrate` does when the new setting is deployed
    return memories


def models_in(table: str) -> set:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT DISTINCT embedding_model, embedding_dimensions FROM {table} "
                       f"WHERE embedding IS NOT NULL")
        return set(cursor.fetchall())


def top_memory(user, query: str) -> tuple[str, float]:
    result = memory_search(owner=user, query=query, mode="semantic", threshold=0.3)
    assert result.results, query
    return result.results[0].memory.content, result.results[0].parts


def assert_search_answers(user):
    """Semantic search finds the right fact in every table (it would not if it compared two models' vectors)."""
    assert top_memory(user, "what is Ana allergic to?")[0] == "Ana is allergic to peanuts"
    messages = message_search(owner=user, query="which instrument?", mode="semantic", threshold=0.2).results
    assert messages and "cello" in messages[0].passage.content
    chunks = chunk_search(owner=user, query="when does the port open?", mode="semantic", threshold=0.2)
    assert chunks and "harbour" in chunks[0].passage.content


def test_a_switch_keeps_search_answering_and_leaves_one_model_per_table(rows, user, rotated, api):
    provider = rotated()
    seen = []

    def between_batches(table, n):
        # mid-switch: search still answers from the old model's vectors, every table holds one model
        assert_search_answers(user)
        for spec in reembed.TABLES:
            assert len(models_in(spec.table)) <= 1, spec.table
        seen.append(table.space)
        if len(seen) == 1:  # a write during the switch is embedded with the table's model, then re-embedded
            services.memory_create(owner=user, content="Ana moved to Faro in May")

    done = reembed.reembed_all(batch_size=2, advance=between_batches)

    assert seen.count("memories") >= 3  # several batches, searched between each
    # five facts, the store item (a memory too) and the memory written during the switch
    assert done["memories"] == 7 and done["messages"] == 5 and done["chunks"] == 1 and done["store"] == 3
    for spec in reembed.TABLES:
        assert models_in(spec.table) == {(ROTATED, 384)}, spec.table
        space = EmbeddingSpace.objects.get(name=spec.space)
        assert (space.model, space.state, space.target_model) == (ROTATED, "done", "")
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM memories_memory WHERE embedding_next IS NOT NULL OR embedding IS NULL")
        assert cursor.fetchone()[0] == 0
    # the stored vectors are the new model's, and search embeds its query with it
    faro = Memory.objects.get(content="Ana moved to Faro in May")
    assert np.allclose(faro.embedding, provider.embed([faro.content])[0], atol=1e-5)
    assert_search_answers(user)
    assert top_memory(user, "where did Ana move?")[0] == "Ana moved to Faro in May"
    response = api.post("/api/store/items/search", {"namespace_prefix": ["recipes"], "query": "baking bread"},
                        format="json")
    assert response.status_code == 200 and response.json()["items"][0]["key"] == "bread"
    # a second run has nothing to do
    assert reembed.reembed_all() == {"memories": 0, "messages": 0, "chunks": 0, "store": 0}


def test_an_interrupted_run_continues_where_it_stopped(rows, user, rotated):
    provider = rotated()
    provider.fail_after = 2
    out, err = io.StringIO(), io.StringIO()
    with pytest.raises(CommandError, match="Run the command again"):
        call_command("reembed", "--batch-size", "2", stdout=out, stderr=err)
    space = EmbeddingSpace.objects.get(name="memories")
    assert (space.model, space.state, space.target_model, space.rows_done) == (LOCAL, "failed", ROTATED, 2)
    assert models_in("memories_memory") == {(LOCAL, 384)}  # not switched: search still uses the old model
    assert_search_answers(user)
    ready = set(Memory.objects.filter(embedding_next__isnull=False).values_list("content", flat=True))
    assert len(ready) == 2

    provider.fail_after = None
    before = len(provider.embedded)
    call_command("reembed", "--batch-size", "2", stdout=out, stderr=err)
    assert "Re-embedded 4 memories, 5 messages, 1 chunks, 3 store with rotated-minilm" in out.getvalue()
    assert "memories" in err.getvalue() and "100%" in err.getvalue()  # the progress bars
    # the two memories embedded before the failure were not embedded again
    assert not ready & set(provider.embedded[before:])
    assert EmbeddingSpace.objects.get(name="memories").rows_done == 6
    assert models_in("memories_memory") == {(ROTATED, 384)}
    assert_search_answers(user)


def test_the_database_refuses_a_vector_of_another_model_than_the_tables(rows, user):
    """A write that embedded with the old model and lands after the switch is made pending, not stored mixed."""
    memory = rows[0]
    Memory.objects.filter(pk=memory.pk).update(embedding=[1.0] + [0.0] * 383, embedding_model="other-model")
    memory.refresh_from_db()
    assert memory.embedding is None and memory.embedding_model == "" and memory.embedding_dimensions is None
    message = Message.objects.filter(conversation__owner=user).first()
    assert message.embedding_dimensions == 384
    # and the next vector of a row whose text changed is dropped (it was of the old text)
    Memory.objects.filter(pk=rows[1].pk).update(embedding_next=[1.0] + [0.0] * 383)
    services.memory_update(memory=Memory.objects.get(pk=rows[1].pk), data={"content": "Ana drinks soy milk now"})
    assert Memory.objects.get(pk=rows[1].pk).embedding_next is None


def test_dry_run_counts_and_changes_nothing(rows, rotated):
    rotated()
    out = io.StringIO()
    call_command("reembed", "--dry-run", stdout=out)
    assert out.getvalue().strip() == ("Would re-embed 6 memories, 5 messages, 1 chunks, 3 store with rotated-minilm "
                                      "(dry run: nothing changed).")
    assert models_in("memories_memory") == {(LOCAL, 384)}
