"""The one shape every extractor answers in: a `Candidate` memory, before `memories_reconcile` decides whether it
is new (ADD), an update of a stored memory (same subject and `attribute`: UPDATE) or already known (NOOP)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime

CATEGORIES = ("preference", "restriction", "fact", "skill", "relationship", "goal", "history", "context")
ENTITY_KINDS = ("people", "places", "organizations", "things")
SCOPES = ("user", "project")


@dataclass(frozen=True)
class Candidate:
    """A memory proposed by an extractor (conversation, document or LLM), before reconciliation."""

    content: str  # self-contained: "Caroline went to an LGBTQ support group on 7 May 2023."
    category: str  # one of CATEGORIES
    subject: str = ""  # "user" for the speaker, the person it is about ("Emma"), or "" for a document's topic
    attribute: str = ""  # stable slot for updates: "location", "allergy:peanuts"; "" when none
    tags: Sequence[str] = ()
    entities: dict[str, list[str]] = field(default_factory=dict)  # {"people": [...], "places": [...], ...}
    importance: float = 0.5  # 0..1
    scope: str = "user"  # user | project
    explicit: bool = False  # the user asked for it to be remembered
    kind: str = ""  # what a document rule recognised: decision, deadline, date, role, requirement
    valid_from: datetime | None = None  # when it became true, when the text says ("since May"); else the send time


def slug(text: str, limit: int = 40) -> str:
    """A tag or slot piece: "2. Staffing & Roles" -> "2-staffing-roles"."""
    return "-".join(re.findall(r"[a-z0-9]+", text.lower()))[:limit].strip("-")


def clean_tags(tags: Iterable[str], limit: int = 5) -> list[str]:
    """Lower case, hyphens for anything else, no repeats, at most `limit`."""
    out: list[str] = []
    for tag in tags:
        tag = re.sub(r"[^a-z0-9+#:]+", "-", tag.lower()).strip("-")
        if tag and tag not in out:
            out.append(tag)
    return out[:limit]


def merge_entities(*parts: dict[str, list[str]]) -> dict[str, list[str]]:
    """All ENTITY_KINDS present, values in first-seen order, no case-insensitive repeats."""
    merged: dict[str, list[str]] = {kind: [] for kind in ENTITY_KINDS}
    for part in parts:
        for kind, values in part.items():
            bucket = merged.setdefault(kind, [])
            for value in values:
                if value and value.lower() not in {v.lower() for v in bucket}:
                    bucket.append(value)
    return merged
