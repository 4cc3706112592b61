"""The sample exports written for these tests (samples/), and helpers that make variants of them."""

import io
import json
import zipfile
from pathlib import Path

SAMPLES = Path(__file__).resolve().parent / "samples"
FILES = {
    "chatgpt": "chatgpt_conversations.json",
    "claude": "claude_conversations.json",
    "mem0": "mem0_memories.json",
    "langgraph": "langgraph_store.json",
    "jsonl": "messages.jsonl",
}


def raw(name: str) -> bytes:
    return (SAMPLES / FILES[name]).read_bytes()


def data(name: str):
    return json.loads(raw(name))


def dumps(value) -> bytes:
    return json.dumps(value).encode()


def export_zip(members: dict[str, bytes], *, compression=zipfile.ZIP_DEFLATED) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=compression) as archive:
        for name, content in members.items():
            archive.writestr(name, content)
    return buffer.getvalue()


FACTS = ["I live in {city}.", "My favourite dish is {dish}.", "I'm training for a {race} next spring.",
         "My manager is called {name}.", "I work on the {team} team."]
FILL = {"city": ["Lyon", "Ghent", "Porto", "Turku"], "dish": ["ramen", "paella", "pierogi", "dal"],
        "race": ["10k", "half marathon", "triathlon"], "name": ["Ines", "Bram", "Oskar", "Yuki"],
        "team": ["billing", "search", "mobile", "platform"]}


def chatgpt_export(conversations: int, turns: int, *, start: float = 1_700_000_000.0) -> list[dict]:
    """A generated ChatGPT-format export: `conversations` linear trees of `turns` user/assistant pairs each."""
    export = []
    for c in range(conversations):
        mapping = {f"c{c}-root": {"id": f"c{c}-root", "message": None, "parent": None, "children": []}}
        parent, created = f"c{c}-root", start + c * 3600
        for t in range(2 * turns):
            node = f"c{c}-m{t}"
            role = "user" if t % 2 == 0 else "assistant"
            fact = FACTS[(c + t // 2) % len(FACTS)]
            words = {k: v[(c * 7 + t) % len(v)] for k, v in FILL.items()}
            body = fact.format(**words) if role == "user" else f"Thanks for telling me; noted ({c}.{t})."
            mapping[node] = {"id": node, "parent": parent, "children": [], "message": {
                "id": node, "author": {"role": role, "name": None, "metadata": {}}, "create_time": created + t,
                "content": {"content_type": "text", "parts": [body]}, "status": "finished_successfully",
                "weight": 1.0, "metadata": {}, "recipient": "all"}}
            mapping[parent]["children"].append(node)
            parent = node
        export.append({"title": f"Chat {c}", "create_time": created, "update_time": created + 2 * turns,
                       "id": f"gen-{c}", "conversation_id": f"gen-{c}", "current_node": parent, "mapping": mapping})
    return export
