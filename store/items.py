"""How a store item and a memory map onto each other: the memory's content and the indexed texts taken from an
item's value (LangGraph's own path syntax and text extraction), and the value a memory shows as an item."""

import json
from typing import Any

from django.conf import settings
from langgraph.store.base.embed import get_text_at_path, tokenize_path

from integrations import embeddings

DEFAULT_FIELDS = ["$"]  # LangGraph's default: the whole value, as JSON


def indexed_texts(value: dict, index: Any) -> list[tuple[str, str, str]]:
    """(field, path, text) for every text `index` selects from `value`: `field` as asked for, `path` as
    LangGraph's stores name the text: a field that yields several texts (`"arr[*].x"`) gives `"arr[*].x.0"`,
    `"arr[*].x.1"`, ...; blank texts are skipped. `index=False`: none; None: the store's default fields."""
    if index is False:
        return []
    found: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for field in dict.fromkeys(index or DEFAULT_FIELDS):
        texts = get_text_at_path(value, "$" if field == "$" else tokenize_path(field))
        for i, text in enumerate(texts):
            path = f"{field}.{i}" if len(texts) > 1 else field
            if text.strip() and path not in seen:  # ["a.0", "a"] could name one text twice
                seen.add(path)
                found.append((field, path, text))
    return found


def content_for(value: dict, texts: list[tuple[str, str, str]]) -> str:
    """The memory's content: `value["content"]` when it is text, else the indexed texts, else the value as
    JSON; cut to MEMORY_MAX_CHARS characters and MEMORY_MAX_TOKENS word pieces (the value itself is kept whole)."""
    content = value.get("content")
    if not isinstance(content, str) or not content.strip():
        content = "\n".join(text for _, _, text in texts) or json.dumps(value, ensure_ascii=False, sort_keys=True)
    return _cut(content[:settings.MEMORY_MAX_CHARS], settings.MEMORY_MAX_TOKENS)


def _cut(text: str, max_tokens: int) -> str:
    """`text` cut after `max_tokens` word pieces (a word cut in two may split into more pieces: cut again)."""
    keep = max_tokens
    while True:
        encoding = embeddings.tokenizer().encode(text, add_special_tokens=False)
        if len(encoding.ids) <= max_tokens:
            return text
        text = text[: encoding.offsets[keep - 1][1]]
        keep = max(1, keep - 8)


def item_value(value: dict | None, content: str) -> dict:
    """What a memory shows as a store item's value: the value it was put with, or {"content": ...} for a
    memory written through the memory API (or the panel, or extraction)."""
    return value if value is not None else {"content": content}
