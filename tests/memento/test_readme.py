"""README's own examples do what README says: the curl commands of its "Using the API" section (up to its first
subsection) run in order as API calls with the same methods, paths and bodies, against the real database and model;
the Python examples of "Use it from an agent" run as written, each a script, against a served Memento and a stub
model (only the server's address differs), and so do the Claude Code hook commands of its settings snippet."""

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import pytest
from django.conf import settings
from rest_framework.test import APIClient

from tests.factories import UserFactory, token_for
from tests.fakes.openai_server import FakeOpenAIServer
from tests.web import free_port, start_gunicorn, stop

README = Path(__file__).resolve().parents[2] / "README.md"
PASSWORD = "readme-example-password-1"


def section_commands() -> list[list[str]]:
    """The curl commands (as shell words, comments dropped) of README's "Using the API" section before its first
    subsection, in order."""
    text = README.read_text()
    section = text.split("\n## Using the API\n", 1)[1].split("\n### ", 1)[0]
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", section, re.S):
        pending = ""
        for line in block.replace("\\\n", " ").splitlines():
            pending += line + "\n"
            try:
                words = shlex.split(pending, comments=True)
            except ValueError:  # a quote still open: the command goes on on the next line
                continue
            pending = ""
            if words and words[0] == "curl":
                commands.append(words)
    return commands


def request_of(words: list[str], password: str) -> dict:
    """Method, path, body, content type and output file of one curl command (`password` for the placeholder)."""
    method, url, data, headers, output = None, None, [], {}, None
    words = iter(words[1:])
    for word in words:
        if word == "-s":
            continue
        if word == "-X":
            method = next(words)
        elif word == "-H":
            name, _, value = next(words).partition(":")
            headers[name.strip().lower()] = value.strip()
        elif word in ("-d", "--data-binary"):
            data.append(next(words))
        elif word == ">":
            output = next(words)
        elif word.startswith("http"):
            url = word
        else:
            raise AssertionError(f"README's curl uses an option this test does not know: {word}")
    content_type = headers.get("content-type", "application/x-www-form-urlencoded" if data else None)
    if content_type == "application/x-www-form-urlencoded":
        body = urlencode([tuple(pair.replace("<the password serve printed>", password).split("=", 1))
                          for pair in data])
    else:
        body = "".join(data)
    return {"method": method or ("POST" if data else "GET"), "path": urlsplit(url).path, "body": body,
            "content_type": content_type, "output": output}


@pytest.mark.django_db(transaction=False)
def test_the_using_the_api_examples_answer_as_readme_says(db):
    demo = UserFactory(username="demo")
    demo.set_password(PASSWORD)
    demo.save()
    client = APIClient()
    files, last_id, answers = {}, None, []
    paris = None
    for words in section_commands():
        request = request_of(words, PASSWORD)
        body = request["body"]
        if body.startswith("@"):
            body = files[body[1:]]
        if '<id of \\"Lives in Paris\\">' in body:
            # the example replaces a memory stored before it: store it as README's reader would have
            paris = client.post("/api/memories/", {"content": "Lives in Paris"}, format="json").json()["id"]
            body = body.replace('<id of \\"Lives in Paris\\">', paris)
        path = request["path"].replace("<id>", str(last_id))
        response = client.generic(request["method"], path, body, content_type=request["content_type"])
        assert response.status_code < 400, (words, response.status_code, response.getvalue()[:300])
        answers.append((path, request["method"], response))
        if path == "/api/auth/token/":
            client.credentials(HTTP_AUTHORIZATION=f"Token {response.json()['token']}")
        elif request["output"]:
            files[request["output"]] = response.getvalue().decode()
        elif path == "/api/memories/" and request["method"] == "POST":
            assert response.status_code == 201
            last_id = response.json()["id"]
        elif path == "/api/memories/search/":
            # "the query below returns the peanut allergy stored above"
            results = response.json()["results"]
            assert results and results[0]["memory"]["content"] == "Is allergic to peanuts"
            assert results[0]["parts"]["intent"] > 0
    ran = {(path, method) for path, method, _ in answers}
    assert {("/api/auth/token/", "POST"), ("/api/memories/", "POST"), ("/api/memories/search/", "POST"),
            ("/api/memories/import/", "POST")} <= ran
    chain = next(r for path, _, r in answers if path.endswith("/chain/"))
    assert paris in json.dumps(chain.json())  # the new memory replaced the old one, kept in the chain


README_URL = "http://127.0.0.1:8000"


def agent_section() -> str:
    text = README.read_text()
    return text.split("\n## Use it from an agent\n", 1)[1].split("\n## ", 1)[0]


def python_examples() -> list[str]:
    return re.findall(r"```python\n(.*?)```", agent_section(), re.S)


def hooks_snippet() -> dict:
    section = agent_section().split("\n### Claude Code hooks\n", 1)[1]
    return json.loads(re.findall(r"```json\n(.*?)```", section, re.S)[0])


@pytest.fixture
def served(transactional_db):
    port = free_port()
    process = start_gunicorn(port, threads=4)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        stop(process)


@pytest.mark.slow
def test_the_agent_examples_run_as_written(served, tmp_path):
    from accounts.models import EndUser
    from conversations.models import Message
    from memories.models import Memory

    user = UserFactory(username="demo")
    token, service_token = token_for(user), token_for(user, for_end_users=True, name="app")
    examples = python_examples()
    assert len(examples) == 6
    client_package = str(settings.BASE_DIR / "clients" / "python")
    with FakeOpenAIServer() as model:
        env = {**os.environ, "MEMENTO_TOKEN": token, "MEMENTO_SERVICE_TOKEN": service_token,
               "OPENAI_API_KEY": "sk-stub", "OPENAI_BASE_URL": model.base_url,
               "PYTHONPATH": os.pathsep.join(filter(None, [client_package, os.environ.get("PYTHONPATH")]))}
        for number, code in enumerate(examples, start=1):
            assert README_URL in code
            script = tmp_path / f"example_{number}.py"
            script.write_text(code.replace(README_URL, served))
            done = subprocess.run([sys.executable, str(script)], env=env, capture_output=True, text=True,
                                  timeout=600, cwd=tmp_path)
            assert done.returncode == 0, (number, code, done.stderr[-3000:])
        assert model.requests_to("/chat/completions")  # the examples called the (stub) model
    # what they did is in Memento
    assert Message.objects.filter(owner=user, content__contains="allergic to peanuts").exists()  # the wrapper
    alice = EndUser.objects.get(owner=user, external_id="alice").user  # the app's end user, isolated
    assert Memory.objects.filter(owner=alice, namespace=["memories"]).count() >= 2  # LangGraph + its SDK
    alices = ["Vegetarian", "Remember: I am allergic to peanuts"]
    assert not Memory.objects.filter(owner=user, content__in=alices).exists()
    assert Memory.objects.filter(owner=user, content="Prefers tea to coffee").exists()  # MCP over stdio

    # the hook commands of the settings snippet, with its environment (the server's address and token filled in)
    snippet = hooks_snippet()
    hook_env = {**env, **snippet["env"], "MEMENTO_URL": served, "MEMENTO_TOKEN": token,
                "MEMENTO_HOOK_STATE": str(tmp_path / "hooks"), "MEMENTO_HOOK_TIMEOUT": "120"}
    assert set(snippet["hooks"]) == {"SessionStart", "UserPromptSubmit", "Stop", "PreCompact"}
    command = snippet["hooks"]["UserPromptSubmit"][0]["hooks"][0]["command"]
    assert command == "memento-claude-hook"  # the client package's console script: python -m memento_client.hooks
    event = {"hook_event_name": "UserPromptSubmit", "session_id": "readme", "cwd": str(tmp_path),
             "transcript_path": str(tmp_path / "t.jsonl"), "prompt": "What do I drink in the morning?"}
    done = subprocess.run([sys.executable, "-m", "memento_client.hooks"], input=json.dumps(event), env=hook_env,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and "Prefers tea to coffee" in done.stdout, done.stderr
