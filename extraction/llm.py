"""The LLM path: extraction and reconciliation through the OpenAI-compatible endpoint configured in
integrations.llm. What the README recommends for quality; the local extractors are the offline default."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from extraction.candidates import CATEGORIES, SCOPES, Candidate
from integrations.llm import chat_json
from observability import hooks

EXTRACTION_PROMPT = """Analyze this content and extract distinct memories.

The content is one message the user wrote in a conversation with an AI assistant. Extract only what the user
states about themselves or about people and things in their life that is worth remembering in future
conversations. Earlier messages, when given, are context only: do not extract from them. Questions, greetings,
small talk, thanks and requests for help hold no memories. Do not guess: when in doubt, leave it out, and return
{"memories": []} when there is nothing to remember.

For each memory:
1. content: The specific fact, insight, preference, or information, short and self-contained. Leave out the
   user as subject ("Is allergic to peanuts", "Works at Acme Corp") and name anyone else ("Daughter Emma starts
   school in May").
2. category: one of preference (likes, dislikes, choices), restriction (limitations, allergies, constraints),
   fact (objective information), skill (abilities, knowledge level), relationship (connections between
   people), goal (objectives, plans), history (past events, experiences), context (situational information)
3. subject: who the memory is about: "user" for the user, otherwise the person's name ("Emma")
4. attribute: a short, stable slot name for what the memory describes, so that a later memory with the same
   subject and attribute replaces it: "location", "employer", "occupation", "diet", "allergy:peanuts",
   "favourite:colour", "language:python", "relationship:daughter:emma"; "" when no slot fits
5. scope: "user" (true across all projects) or "project" (specific to this work)
6. tags: 2-5 descriptive tags (lowercase, no spaces)
7. entities: People, places, organizations and things mentioned
8. importance: 0.0-1.0 (how critical is this information?): health and safety restrictions about 0.9, small
   preferences about 0.5
9. explicit: true when the user asked for it to be remembered ("remember that ..."), else false

Examples of SCOPE classification:
- "Prefers bullet points" → user (style preference, applies everywhere)
- "Report due Tuesday" → project (specific deadline for this work)
- "Works at Acme Corp" → user (fact about the person)
- "Client wants 3 sections" → project (requirement for this deliverable)

Return JSON:
{
  "memories": [
    {
      "content": "...",
      "category": "preference" | "restriction" | "fact" | "skill" | "relationship" | "goal" | "history" | "context",
      "subject": "user",
      "attribute": "location",
      "scope": "user" | "project",
      "tags": ["tag1", "tag2"],
      "entities": {"people": [], "places": [], "organizations": [], "things": []},
      "importance": 0.7,
      "explicit": false
    }
  ]
}
"""

RECONCILE_PROMPT = """You maintain a user's long-term memory. A new memory was just extracted from a conversation.
Decide how it relates to the most similar memories already stored (each with its id):

- ADD: it is new information, unrelated to every stored memory. target_id: null.
- UPDATE: it replaces, corrects or changes one stored memory about the same person and the same thing that
  holds one value at a time (home, employer, job title, manager, partner, phone, e-mail, car, diet, age, a
  favourite, name): the user moved, changed jobs, changed their mind. The stored memory will be superseded.
  target_id: its id.
- NOOP: a stored memory already says the same thing. target_id: its id.
- KEEP: it is about the same kind of thing as a stored memory but both stay true: things that accumulate
  (allergies, languages, pets, children, places visited, purchases, hobbies, skills), another person ("my
  brother works at X" beside "I work at Y"), or an event ("went to Kyoto" beside "went to Osaka").
  target_id: that memory's id, or null.

Return JSON: {"action": "ADD" | "UPDATE" | "NOOP" | "KEEP", "target_id": "<an id from the list>" | null,
"reason": "<one short sentence>"}
"""


def _check_memory(item: Any, where: str) -> Candidate:
    if not isinstance(item, dict):
        raise ValueError(f"{where} must be an object")

    def text(name: str, default: str | None = None, limit: int = 200) -> str:
        value = item.get(name, default)
        if value is None:
            value = default
        if not isinstance(value, str):
            raise ValueError(f"{where}.{name} must be a string")
        return value.strip()[:limit]

    content = text("content", limit=10_000)
    if not content:
        raise ValueError(f"{where}.content must be a non-empty string")
    category = text("category", "fact", 100).lower() or "fact"
    if category not in CATEGORIES and category.rstrip("s") in CATEGORIES:
        category = category.rstrip("s")
    if category not in CATEGORIES:
        raise ValueError(f"{where}.category must be one of {', '.join(CATEGORIES)}, not {category!r}")
    scope = text("scope", "user").lower() or "user"
    if scope not in SCOPES:
        raise ValueError(f"{where}.scope must be \"user\" or \"project\", not {scope!r}")
    tags = item.get("tags", [])
    if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
        raise ValueError(f"{where}.tags must be a list of strings")
    entities = item.get("entities", {}) or {}
    if not isinstance(entities, dict) or not all(
        isinstance(key, str) and isinstance(values, list) and all(isinstance(v, str) for v in values)
        for key, values in entities.items()
    ):
        raise ValueError(f"{where}.entities must be an object whose values are lists of strings")
    importance = item.get("importance", 0.5)
    if isinstance(importance, bool) or not isinstance(importance, int | float) or not 0 <= importance <= 1:
        raise ValueError(f"{where}.importance must be a number between 0 and 1, not {importance!r}")
    explicit = item.get("explicit", False)
    if not isinstance(explicit, bool):
        raise ValueError(f"{where}.explicit must be true or false")
    return Candidate(
        content=content, category=category, subject=text("subject", "user") or "user",
        attribute=text("attribute", "").lower(),
        tags=list(dict.fromkeys(t.strip().lower()[:100] for t in tags if t.strip())),
        entities={key: [v.strip() for v in values if v.strip()] for key, values in entities.items()},
        importance=float(importance), scope=scope, explicit=explicit,
    )


def _check_memories(data: Any) -> list[Candidate]:
    if not isinstance(data, dict) or not isinstance(data.get("memories"), list):
        raise ValueError('the reply must be an object with a "memories" list')
    return [_check_memory(item, f"memories[{i}]") for i, item in enumerate(data["memories"])]


@hooks.extraction("llm")
def extract_llm(text: str, *, role: str = "user", context: Sequence[str] = ()) -> list[Candidate]:
    """Memories in one message, by the configured LLM (integrations.llm.chat_json: one retry on an unusable
    reply, then LLMError; LLMUnavailable when the endpoint is down)."""
    if (role or "").lower() != "user" or not text or not text.strip():
        return []
    parts = []
    if context:
        parts.append("Earlier messages (context only, extract nothing from them):\n"
                     + "\n".join(f"- {line}" for line in context if line))
    parts.append(f"The user's message:\n{text.strip()}")
    return chat_json(system=EXTRACTION_PROMPT, user="\n\n".join(parts), schema_check=_check_memories)


def reconcile_llm(candidate: Candidate, similar: list[tuple[str, str]]) -> tuple[str, str | None, str]:
    """Let the LLM decide ADD / UPDATE / NOOP / KEEP for `candidate` against the stored `similar` (id, content)
    pairs, the same decisions as the local reconciler. Returns (action, target_id, reason); target_id is one of
    the given ids for UPDATE and NOOP (and KEEP when it names one), None for ADD. The valid-time rule (an older
    statement never supersedes) is applied by memories_reconcile afterwards."""
    if not similar:
        return "ADD", None, "no similar memory stored"
    ids = [str(memory_id) for memory_id, _ in similar]

    def check(data: Any) -> tuple[str, str | None, str]:
        if not isinstance(data, dict):
            raise ValueError("the reply must be a JSON object")
        action = data.get("action")
        if not isinstance(action, str) or action.strip().upper() not in ("ADD", "UPDATE", "NOOP", "KEEP"):
            raise ValueError(f'action must be "ADD", "UPDATE", "NOOP" or "KEEP", not {action!r}')
        action = action.strip().upper()
        reason = data.get("reason") or ""
        if not isinstance(reason, str):
            raise ValueError("reason must be a string")
        if action == "ADD":
            return action, None, reason.strip()
        target = data.get("target_id")
        target = str(target) if isinstance(target, str | int) and not isinstance(target, bool) else None
        if action == "KEEP":
            return action, target if target in ids else None, reason.strip()
        if target not in ids:
            raise ValueError(f"target_id must be one of the listed ids ({', '.join(ids)}) for {action}, "
                             f"not {data.get('target_id')!r}")
        return action, target, reason.strip()

    payload = {
        "new_memory": {"content": candidate.content, "category": candidate.category, "subject": candidate.subject,
                       "attribute": candidate.attribute},
        "stored_memories": [{"id": memory_id, "content": content} for memory_id, content in zip(
            ids, (content for _, content in similar), strict=True)],
    }
    return chat_json(system=RECONCILE_PROMPT, user=json.dumps(payload, ensure_ascii=False), schema_check=check)
