"""What to remember from a document's chunk: the document rules and the conversation extractor (or the LLM),
as memory candidates of the document's scope (documents.processing embeds and reconciles them)."""

import re

from django.conf import settings

import extraction
from documents.models import Chunk, Document
from extraction import extract_document, slug
from integrations import llm


def memories_per_chunk() -> int:
    return max(0, settings.DOCUMENT_MEMORIES_PER_CHUNK)


class ExtractionFailed(Exception):
    """The extraction model answered something unusable for a passage: the document fails with the reason."""


def chunk_candidates(document: Document, chunk: Chunk, use_llm: bool) -> list:
    """What to remember from one chunk: the document rules (decisions, dates, people, requirements) and the
    conversation extractor (first-person statements), at most DOCUMENT_MEMORIES_PER_CHUNK, without the overlap
    the chunk repeats from the previous one. Project scope when the document belongs to a project; no update
    slots (a document adds or confirms, it never supersedes: deleting it undoes it cleanly)."""
    limit = memories_per_chunk()
    if limit == 0:
        return []
    text = chunk.content[int(chunk.metadata.get("overlap_chars") or 0):]
    section = chunk.metadata.get("section_title") or ""
    found: list = list(extract_document(text, section_title=section, limit=limit))
    if use_llm:
        context = [f"This text is a passage of the document {str(document)!r}"
                   + (f", section {section!r}" if section else "") + "."]
        try:
            found += extraction.extract_llm(text, role="user", context=context)
        except llm.LLMUnavailable:
            raise  # the endpoint is down or busy: the task retries
        except llm.LLMError as exc:
            # an unusable answer (after the one retry chat_json makes) would come back the same on a retry
            raise ExtractionFailed(
                f"Memory extraction failed on passage {chunk.chunk_index + 1}: {str(exc).rstrip('.')}.") from exc
    else:
        found += extraction.extract_local(text, role="user", strict=True)
    scope = "project" if document.project_id else "user"
    section_tag = slug(section)
    out, seen = [], set()
    for candidate in found:
        key = re.sub(r"\W+", " ", candidate.content.lower()).strip()
        if not key or key in seen:
            continue
        seen.add(key)
        tags = list(dict.fromkeys([*candidate.tags, *([section_tag] if section_tag else []), "document"]))
        out.append(extraction.Candidate(
            content=candidate.content, category=candidate.category or "fact", subject=candidate.subject or "",
            attribute="", tags=tags[:10], entities=dict(candidate.entities or {}),
            importance=float(candidate.importance), scope=scope, explicit=False,
        ))
        if len(out) >= limit:
            break
    return out
