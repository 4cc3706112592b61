"""Claude Code hooks: Memento's memory in every Claude Code session.

    memento-claude-hook        (or: python -m memento_client.hooks)

One command for four hook events; Claude Code sends the event as JSON on stdin (`hook_event_name`, `session_id`,
`transcript_path`, `cwd`, and `prompt` for UserPromptSubmit, `source` for SessionStart, `trigger` for PreCompact):

- SessionStart, UserPromptSubmit: prints `{"hookSpecificOutput": {"hookEventName": ..., "additionalContext":
  ...}}`, the user's Memento context (for the prompt, or for the session's project at its start), which Claude
  Code adds to what the model reads;
- Stop, PreCompact: appends the session's new turns from its transcript (`transcript_path`, JSON Lines: the text
  of user prompts and of Claude's answers; tool calls, tool results, thinking and meta lines are left out) to a
  Memento conversation, one per Claude Code session, where the pipeline extracts memories from them.

Configuration from the environment: MEMENTO_URL (default http://127.0.0.1:8000), MEMENTO_TOKEN (required),
MEMENTO_HOOK_BUDGET (context tokens, default 800), MEMENTO_HOOK_TIMEOUT (seconds per call, default 10),
MEMENTO_HOOK_STATE (where each session's conversation id and transcript position are kept; default
~/.cache/memento/claude-code). A hook never stops Claude Code: whatever
goes wrong (Memento down, a bad token, an unreadable transcript) is said on stderr and the hook exits 0.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import httpx

from memento_client.client import api_root, auth_headers, raise_for_status

CONTEXT_EVENTS = ("SessionStart", "UserPromptSubmit")
STORE_EVENTS = ("Stop", "PreCompact", "SessionEnd")
APPEND_MAX = 500  # messages per append call (the API's limit)
PREAMBLE = "What Memento remembers about the user (from earlier sessions and chats):\n"


class Settings:
    def __init__(self, environ: dict[str, str]):
        self.url = environ.get("MEMENTO_URL", "http://127.0.0.1:8000")
        self.token = environ.get("MEMENTO_TOKEN", "")
        self.budget = int(environ.get("MEMENTO_HOOK_BUDGET", "800"))
        self.timeout = float(environ.get("MEMENTO_HOOK_TIMEOUT", "10"))
        self.state = Path(environ.get("MEMENTO_HOOK_STATE") or Path.home() / ".cache" / "memento" / "claude-code")


class Session:
    """What the hook keeps between its runs for one Claude Code session: its Memento conversation and how many
    transcript lines were stored already (a small JSON file per session)."""

    def __init__(self, settings: Settings, session_id: str):
        safe = re.sub(r"[^A-Za-z0-9_.-]", "_", session_id)[:100] or "unknown"
        self.path = settings.state / f"{safe}.json"
        try:
            saved = json.loads(self.path.read_text())
        except (OSError, ValueError):
            saved = {}
        self.conversation_id: str | None = saved.get("conversation_id")
        self.lines_stored: int = int(saved.get("lines_stored") or 0)

    def save(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = self.path.with_suffix(".tmp")
        temporary.write_text(json.dumps({"conversation_id": self.conversation_id, "lines_stored": self.lines_stored}))
        temporary.replace(self.path)


def _conversation(http: httpx.Client, session: Session, event: dict) -> str:
    if session.conversation_id is None:
        project = Path(event.get("cwd") or ".").name
        response = http.post("/conversations/", json={
            "title": f"Claude Code: {project}"[:300], "agent_id": "claude-code",
            "metadata": {"claude_code_session": event.get("session_id", ""), "cwd": event.get("cwd", "")},
        })
        raise_for_status(response)
        session.conversation_id = response.json()["id"]
        session.save()
    return session.conversation_id


def context(http: httpx.Client, session: Session, event: dict, budget: int) -> dict | None:
    """The hook's answer to SessionStart / UserPromptSubmit: the context as additionalContext (None: nothing)."""
    name = event["hook_event_name"]
    query = event.get("prompt") if name == "UserPromptSubmit" else f"Working on {Path(event.get('cwd') or '.').name}"
    params = {"budget": budget}
    if query and query.strip():
        params["query"] = query.strip()[:4000]
    response = http.get(f"/conversations/{_conversation(http, session, event)}/context/", params=params)
    raise_for_status(response)
    text = response.json().get("text") or ""
    if not text.strip():
        return None
    return {"hookSpecificOutput": {"hookEventName": name, "additionalContext": PREAMBLE + text}}


def _text(content: Any) -> str:
    """The text blocks of a transcript message (tool uses, tool results, thinking and images are left out)."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block.get("text", "") for block in content
                         if isinstance(block, dict) and block.get("type") == "text")
    return ""


def transcript_turns(lines: list[str]) -> list[dict]:
    """The user prompts and Claude's answers of transcript lines, as Memento messages (the line's uuid as the
    client id: a turn sent twice is stored once; its timestamp as sent_at)."""
    turns = []
    for line in lines:
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if not isinstance(entry, dict) or entry.get("type") not in ("user", "assistant"):
            continue
        if entry.get("isMeta") or entry.get("isSidechain"):
            continue
        message = entry.get("message") if isinstance(entry.get("message"), dict) else {}
        role = message.get("role") or entry["type"]
        text = _text(message.get("content")).strip()
        if role not in ("user", "assistant") or not text or text.startswith("<command-"):
            continue
        turn = {"role": role, "content": text}
        if entry.get("uuid"):
            turn["client_message_id"] = str(entry["uuid"])[:200]
        if entry.get("timestamp"):
            turn["sent_at"] = entry["timestamp"]
        turns.append(turn)
    return turns


def store(http: httpx.Client, session: Session, event: dict) -> int:
    """The transcript's lines after those stored before, appended; returns how many messages were sent."""
    path = Path(event.get("transcript_path") or "").expanduser()
    lines = path.read_text(encoding="utf-8").splitlines()
    turns = transcript_turns(lines[session.lines_stored:])
    if turns:
        conversation = _conversation(http, session, event)
        for start in range(0, len(turns), APPEND_MAX):
            response = http.post(f"/conversations/{conversation}/messages/",
                                 json={"messages": turns[start:start + APPEND_MAX]})
            raise_for_status(response)
    session.lines_stored = len(lines)
    session.save()
    return len(turns)


def run(event: dict, settings: Settings, http: httpx.Client | None = None) -> dict | None:
    name = event.get("hook_event_name")
    if name not in CONTEXT_EVENTS + STORE_EVENTS:
        return None
    if not settings.token:
        raise RuntimeError("MEMENTO_TOKEN is not set")
    session = Session(settings, str(event.get("session_id") or "unknown"))
    http = http or httpx.Client(base_url=api_root(settings.url), headers=auth_headers(settings.token),
                                timeout=settings.timeout)
    with http:
        if name in CONTEXT_EVENTS:
            return context(http, session, event, settings.budget)
        store(http, session, event)
        return None


def main(argv: list[str] | None = None) -> int:
    try:
        event = json.loads(sys.stdin.read() or "{}")
        answer = run(event if isinstance(event, dict) else {}, Settings(dict(os.environ)))
    except Exception as exc:  # noqa: BLE001 - a hook never stops Claude Code; it says what went wrong
        print(f"memento hook: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 0
    if answer is not None:
        print(json.dumps(answer))
    return 0


if __name__ == "__main__":
    sys.exit(main())
