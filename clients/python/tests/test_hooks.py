"""The Claude Code hook command, run as Claude Code runs it (a process, the event's JSON on stdin), against a live
Memento: context at SessionStart and UserPromptSubmit as `hookSpecificOutput.additionalContext`, the transcript's
new turns appended at Stop and PreCompact (once each), and never a failure that stops Claude Code."""

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from memento_client.client import MementoClient
from memento_client.hooks import transcript_turns

PACKAGE_ROOT = Path(__file__).resolve().parents[1]


def hook(event: dict, *, url: str, token: str, state: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(PACKAGE_ROOT), "MEMENTO_URL": url, "MEMENTO_TOKEN": token,
           "MEMENTO_HOOK_STATE": str(state), "MEMENTO_HOOK_TIMEOUT": "120"}  # a cold server loads its models
    return subprocess.run([sys.executable, "-m", "memento_client.hooks"], input=json.dumps(event), env=env,
                          capture_output=True, text=True, timeout=300)


def line(kind: str, uuid: str, content, *, timestamp: str, **extra) -> str:
    return json.dumps({"type": kind, "uuid": uuid, "parentUuid": None, "sessionId": "s-1", "timestamp": timestamp,
                       "isSidechain": False, "message": {"role": kind, "content": content}, **extra})


TRANSCRIPT = [
    json.dumps({"type": "summary", "summary": "Earlier work", "leafUuid": "x"}),
    line("user", "u-1", "I prefer pytest over unittest for every project.", timestamp="2025-06-01T10:00:00.000Z"),
    line("assistant", "a-1", [{"type": "thinking", "thinking": "hmm"},
                              {"type": "text", "text": "Noted, I'll write pytest tests."},
                              {"type": "tool_use", "id": "t-1", "name": "Bash", "input": {"command": "ls"}}],
         timestamp="2025-06-01T10:00:05.000Z"),
    line("user", "u-2", [{"type": "tool_result", "tool_use_id": "t-1", "content": "README.md"}],
         timestamp="2025-06-01T10:00:06.000Z"),
    line("user", "u-3", "<command-name>/clear</command-name>", timestamp="2025-06-01T10:00:07.000Z", isMeta=True),
]


@pytest.fixture
def base(tmp_path):
    return {"session_id": "s-1", "transcript_path": str(tmp_path / "s-1.jsonl"), "cwd": "/home/ana/shop-api",
            "permission_mode": "default"}


def messages(server_url, token, conversation_id) -> list[tuple[str, str, str]]:
    response = httpx.get(f"{server_url}/api/conversations/{conversation_id}/messages/",
                         headers={"Authorization": f"Token {token}"})
    return [(m["role"], m["content"], m["sent_at"]) for m in response.json()["results"]]


def test_the_transcript_gives_prompts_and_answers_only():
    assert [(t["role"], t["content"]) for t in transcript_turns(TRANSCRIPT)] == [
        ("user", "I prefer pytest over unittest for every project."), ("assistant", "Noted, I'll write pytest tests.")]


def test_context_at_start_and_on_each_prompt_then_the_transcript_is_stored(server_url, token, base, tmp_path):
    with MementoClient(url=server_url, token=token) as memento:
        memento.create("Deploys shop-api with Ansible on Fridays", importance=0.9)
    state = tmp_path / "state"
    started = hook({**base, "hook_event_name": "SessionStart", "source": "startup"},
                   url=server_url, token=token, state=state)
    assert started.returncode == 0, started.stderr
    assert started.stdout, started.stderr
    answer = json.loads(started.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "SessionStart" and "Ansible" in answer["additionalContext"]

    prompted = hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": "How do we deploy this service?"},
                    url=server_url, token=token, state=state)
    answer = json.loads(prompted.stdout)["hookSpecificOutput"]
    assert answer["hookEventName"] == "UserPromptSubmit" and "Ansible on Fridays" in answer["additionalContext"]

    Path(base["transcript_path"]).write_text("\n".join(TRANSCRIPT) + "\n")
    stopped = hook({**base, "hook_event_name": "Stop", "stop_hook_active": False}, url=server_url, token=token,
                   state=state)
    assert stopped.returncode == 0 and stopped.stdout == "", stopped.stderr
    conversation = json.loads((state / "s-1.json").read_text())["conversation_id"]
    assert messages(server_url, token, conversation) == [
        ("user", "I prefer pytest over unittest for every project.", "2025-06-01T10:00:00Z"),
        ("assistant", "Noted, I'll write pytest tests.", "2025-06-01T10:00:05Z")]

    # the session goes on; compaction stores the new turns only, and a repeated Stop adds nothing
    with open(base["transcript_path"], "a") as transcript:
        transcript.write(line("user", "u-4", "Our CI runs on Woodpecker.", timestamp="2025-06-01T10:05:00Z") + "\n")
    for name in ("PreCompact", "Stop"):
        done = hook({**base, "hook_event_name": name, "trigger": "auto", "custom_instructions": ""},
                    url=server_url, token=token, state=state)
        assert done.returncode == 0, done.stderr
    assert [m[1] for m in messages(server_url, token, conversation)][2:] == ["Our CI runs on Woodpecker."]


def test_a_hook_never_stops_claude_code(server_url, base, tmp_path):
    for url, token in (("http://127.0.0.1:9", "t"), (server_url, "not-a-token"), (server_url, "")):
        done = hook({**base, "hook_event_name": "UserPromptSubmit", "prompt": "hi"}, url=url, token=token,
                    state=tmp_path / "state")
        assert done.returncode == 0 and done.stdout == "" and done.stderr.startswith("memento hook: ")
    missing = hook({**base, "hook_event_name": "Stop", "transcript_path": str(tmp_path / "none.jsonl")},
                   url=server_url, token="t", state=tmp_path / "state")
    assert missing.returncode == 0 and "memento hook:" in missing.stderr
    other = hook({**base, "hook_event_name": "Notification", "message": "x"}, url=server_url, token="t",
                 state=tmp_path / "state")
    assert other.returncode == 0 and other.stdout == "" and other.stderr == ""
