"""The memories app's models, by concern: columns.py (helpers every embedded table shares), expiry.py (when a
memory expires), memory.py (Project, Memory), records.py (events, stamps, embedding spaces, search days)."""

from memories.models.columns import (
    EMBEDDING_DIMENSIONS,
    OWNER_LEXEMES,
    dimensions_field,
    halfvec,
    hnsw_index,
    next_embedding_field,
    owner_lexemes_index,
)
from memories.models.expiry import MAX_TTL_MINUTES, expired_q, ttl_deadline, ttl_deadline_sql
from memories.models.memory import HistoryAction, Memory, MemoryQuerySet, Project, default_namespace
from memories.models.records import EmbeddingSpace, MemoryEvent, MemoryStamp, SearchDay

__all__ = [
    "EMBEDDING_DIMENSIONS", "MAX_TTL_MINUTES", "OWNER_LEXEMES", "EmbeddingSpace", "HistoryAction", "Memory",
    "MemoryEvent", "MemoryQuerySet", "MemoryStamp", "Project", "SearchDay", "default_namespace", "dimensions_field",
    "expired_q", "halfvec", "hnsw_index", "next_embedding_field", "owner_lexemes_index", "ttl_deadline",
    "ttl_deadline_sql",
]
