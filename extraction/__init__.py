"""Memory extraction, shared by conversations and documents: text in, `Candidate` memories out.

- `extract_local()` (extraction.dialogue): the offline default for a conversation turn.
- `extract_document()` (extraction.documents): decisions, dates, roles and requirements in document text.
- `extract_llm()` / `reconcile_llm()` (extraction.llm): the configured OpenAI-compatible LLM, for quality.

Imports only integrations (and core): never memories, conversations or documents.
"""

from extraction.candidates import CATEGORIES, ENTITY_KINDS, SCOPES, Candidate, slug
from extraction.dialogue import extract_local
from extraction.documents import classify, extract_document
from extraction.llm import EXTRACTION_PROMPT, RECONCILE_PROMPT, extract_llm, reconcile_llm
from extraction.sentences import SENTENCE_END, split_sentences

__all__ = [
    "CATEGORIES", "ENTITY_KINDS", "EXTRACTION_PROMPT", "RECONCILE_PROMPT", "SCOPES", "SENTENCE_END", "Candidate",
    "classify", "extract_document", "extract_llm", "extract_local", "reconcile_llm", "slug", "split_sentences",
]
