"""Column and index helpers every embedded table shares (memories, messages, chunks, store field vectors): the
vector's size, its model's dimensions, the next model's vector during a switch, the half-precision HNSW index and
the per-owner full-text index."""

from django.contrib.postgres.indexes import GinIndex, OpClass
from django.contrib.postgres.search import SearchVectorField
from django.db import models
from django.db.models import F, Func, Q
from django.db.models.functions import Cast
from pgvector.django import HalfVectorField, HnswIndex, VectorField

EMBEDDING_DIMENSIONS = 384


def dimensions_field() -> models.PositiveSmallIntegerField:
    """How many dimensions a row's `embedding` has, beside `embedding_model`: set by the database from the vector
    (the guard trigger of memories migration 0019), empty while the embedding is pending."""
    return models.PositiveSmallIntegerField(
        null=True, blank=True, editable=False,
        help_text="Dimensions of the embedding (set by the database from it); empty while pending.",
    )


def next_embedding_field() -> VectorField:
    """The vector of the model a running re-embedding switches the table to, written beside `embedding` and moved
    into it when the whole table has one (memento.reembed); the table's search never reads it."""
    return VectorField(
        dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True, editable=False,
        help_text="Embedding by the model being switched to (manage.py reembed); moved into `embedding` when the "
                  "whole table has one. Emptied by the database when the embedding changes.",
    )


def halfvec(field: str = "embedding"):
    """The expression the HNSW indexes are built on (half precision: same recall, 43% smaller)."""
    return Cast(field, HalfVectorField(dimensions=EMBEDDING_DIMENSIONS))


OWNER_LEXEMES = "memento_owner_lexemes"  # made by migration memories 0011 (and LEAKPROOF by the embedded server)


def owner_lexemes_index(name: str) -> GinIndex:
    """Full text per owner: a GIN on the row's words each prefixed with its owner's id ('42:tea'), so a user's
    keyword match reads only that user's index entries; its time cannot tell what words other users have (a
    GIN on (owner, search_vector) intersects the owner's entries with every user's entries for the word).
    Queries match `memento_owner_lexemes(owner_id, search_vector)` (memories.search.sql.keyword_match)."""
    return GinIndex(Func(F("owner_id"), F("search_vector"), function=OWNER_LEXEMES,
                         output_field=SearchVectorField()), name=name)


def hnsw_index(name: str, condition: Q | None = None) -> HnswIndex:
    """HNSW on the half-precision cast; queries must order by the same expression (`nearest()`). With `condition`,
    a partial index of the rows it holds for (a large owner's own index: memories.owner_indexes)."""
    return HnswIndex(OpClass(halfvec(), name="halfvec_cosine_ops"), name=name, m=16, ef_construction=64,
                     condition=condition)
