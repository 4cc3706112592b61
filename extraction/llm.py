"""The LLM path: extraction and reconciliation through the OpenAI-compatible endpoint configured in
integrations.llm. What the README recommends for quality; the local extractors are the offline default."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Annotated, Any, Literal, Self

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    model_validator,
)
from pydantic_core import PydanticCustomError

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


def _text(limit: int, default: str = ""):
    """A string trimmed and cut to `limit` characters; null (or, with a default, blank) is the default."""
    def read(value: Any) -> Any:
        if value is None:
            return default
        return (value.strip()[:limit] or default) if isinstance(value, str) else value
    return BeforeValidator(read)


def _category(value: str) -> str:
    value = value.lower()
    if value not in CATEGORIES and value.rstrip("s") in CATEGORIES:
        value = value.rstrip("s")  # "preferences"
    if value not in CATEGORIES:
        raise PydanticCustomError("reply", "must be one of {choices}, not '{value}'",
                                  {"choices": ", ".join(CATEGORIES), "value": value})
    return value


class _Reply(BaseModel):
    """An LLM's JSON: strict types (no "0.7" for a number), fields it adds of its own ignored."""

    model_config = ConfigDict(strict=True, extra="ignore")


class MemoryReply(_Reply):
    """One memory of the extraction reply (EXTRACTION_PROMPT's format), with its defaults."""

    content: Annotated[str, Field(min_length=1), _text(10_000)]
    category: Annotated[str, AfterValidator(_category), _text(100, "fact")] = "fact"
    subject: Annotated[str, _text(200, "user")] = "user"
    attribute: Annotated[str, AfterValidator(str.lower), _text(200)] = ""
    scope: Annotated[Literal[SCOPES], BeforeValidator(lambda v: v.lower() if isinstance(v, str) else v),
                     _text(200, "user")] = "user"
    tags: list[str] = []
    entities: Annotated[dict[str, list[str]], BeforeValidator(lambda v: v or {})] = {}
    importance: Annotated[float, Field(ge=0, le=1)] = 0.5
    explicit: bool = False

    def candidate(self) -> Candidate:
        return Candidate(
            content=self.content, category=self.category, subject=self.subject, attribute=self.attribute,
            tags=list(dict.fromkeys(t.strip().lower()[:100] for t in self.tags if t.strip())),
            entities={kind: [v.strip() for v in values if v.strip()] for kind, values in self.entities.items()},
            importance=self.importance, scope=self.scope, explicit=self.explicit,
        )


class MemoriesReply(_Reply):
    memories: list[MemoryReply]


class Decision(_Reply):
    """The reconciliation reply (RECONCILE_PROMPT's format). `target_id` is kept only when it is one of the ids
    given in the validation context; UPDATE and NOOP must name one."""

    action: Annotated[Literal["ADD", "UPDATE", "NOOP", "KEEP"],
                      BeforeValidator(lambda v: v.strip().upper() if isinstance(v, str) else v)]
    target_id: Annotated[str | None, BeforeValidator(
        lambda v: str(v) if isinstance(v, str | int) and not isinstance(v, bool) else None)] = None
    reason: Annotated[str, BeforeValidator(lambda v: v or ""), AfterValidator(str.strip)] = ""

    @model_validator(mode="after")
    def _listed_target(self, info: ValidationInfo) -> Self:
        ids = info.context["ids"]
        if self.action in ("UPDATE", "NOOP") and self.target_id not in ids:
            raise PydanticCustomError("reply", "target_id must be one of the listed ids ({ids}) for {action}, not "
                                      "{target}", {"ids": ", ".join(ids), "action": self.action,
                                                   "target": repr(self.target_id)})
        if self.action == "ADD" or self.target_id not in ids:
            return self.model_copy(update={"target_id": None})
        return self


def _checked(model: type[_Reply], data: Any, context: dict | None = None):
    """`data` read by `model`, or a ValueError naming each bad field (`memories[0].category: ...`), which
    chat_json quotes to the model when it asks once more."""
    try:
        return model.model_validate(data, context=context)
    except ValidationError as exc:
        raise ValueError("; ".join(
            "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"]).lstrip(".")
            + (": " if error["loc"] else "") + error["msg"] for error in exc.errors(include_url=False))) from None


def _check_memories(data: Any) -> list[Candidate]:
    return [memory.candidate() for memory in _checked(MemoriesReply, data).memories]


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
        decision = _checked(Decision, data, {"ids": ids})
        return decision.action, decision.target_id, decision.reason

    payload = {
        "new_memory": {"content": candidate.content, "category": candidate.category, "subject": candidate.subject,
                       "attribute": candidate.attribute},
        "stored_memories": [{"id": memory_id, "content": content} for memory_id, content in zip(
            ids, (content for _, content in similar), strict=True)],
    }
    return chat_json(system=RECONCILE_PROMPT, user=json.dumps(payload, ensure_ascii=False), schema_check=check)
