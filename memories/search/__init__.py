"""Search over memories, and the pieces document chunk and conversation message search share with it:
`sql` (the one candidate builder), `formula` (the rankings' weights and formulas, declared once; `algebra`
computes them on floats, arrays or in SQL), `ranking` (scoring candidates), `dates` (dates named in a query),
`query` (memory search itself), `intent` (the kind of memory a need asks for), `selfwords` (the words that name
whom an owner's memories are about)."""

from memories.search.dates import query_periods, within_periods
from memories.search.formula import DATE_BONUS, DEFAULT_RANKING, MODE_RANKINGS, RANKINGS
from memories.search.query import (
    CANDIDATES,
    DEFAULT_THRESHOLD,
    HNSW_EF_SEARCH,
    MAX_LIMIT,
    SEARCH_MODES,
    ScoredMemory,
    SearchResult,
    embed_query,
    memory_search,
)
from memories.search.ranking import calibrated_similarity, score_passages
from memories.search.sql import passage_candidates, search_start

__all__ = [
    "CANDIDATES", "DATE_BONUS", "DEFAULT_RANKING", "DEFAULT_THRESHOLD", "HNSW_EF_SEARCH", "MAX_LIMIT",
    "MODE_RANKINGS", "RANKINGS", "SEARCH_MODES", "ScoredMemory", "SearchResult", "calibrated_similarity",
    "embed_query", "memory_search", "passage_candidates", "query_periods", "score_passages", "search_start",
    "within_periods",
]
