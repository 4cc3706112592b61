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
