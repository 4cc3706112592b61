"""`with_memory`: an OpenAI SDK client whose calls get the user's Memento context as a system message and whose
turns are appended to a Memento conversation, against a fake OpenAI-compatible server on 127.0.0.1 and a live
Memento; Memento down or refusing never breaks the chat."""

import asyncio
import logging
import socket

import httpx
import openai
import pytest
from memento_client.client import MementoClient
from memento_client.openai_memory import PREAMBLE, with_memory

from tests.fakes.openai_server import FakeOpenAIServer


@pytest.fixture
def model():
    with FakeOpenAIServer() as server:
        yield server


@pytest.fixture
def wrap(server_url):
    """with_memory for the test, generous with time (a cold server loads its models on the first context call);
    every wrapper's background appends are waited for before the database is cleaned up."""
    made = []

    def make(client, *, token, url=server_url, timeout=120):
        made.append(with_memory(client, url=url, token=token, timeout=timeout))
        return made[-1]

    yield make
    for client in made:
        client.memento.close()


@pytest.fixture
def remembered(server_url, token):
    with MementoClient(url=server_url, token=token) as memento:
        memento.create("Is allergic to peanuts", importance=0.9)
    return token


def stored(server_url, token, conversation_id) -> list[tuple[str, str]]:
    response = httpx.get(f"{server_url}/api/conversations/{conversation_id}/messages/",
                         headers={"Authorization": f"Token {token}"})
    return [(m["role"], m["content"]) for m in response.json()["results"]]


def system_texts(request) -> list[str]:
    items = request.json.get("messages") or request.json.get("input")
    return [m["content"] for m in items if isinstance(m, dict) and m.get("role") == "system"]


def test_chat_gets_the_context_and_the_turns_are_stored(model, wrap, server_url, remembered):
    client = wrap(openai.OpenAI(base_url=model.base_url, api_key="k"), token=remembered)
    model.reply("A peanut-free curry.", "Rice, not noodles.")
    history = [{"role": "system", "content": "You are a chef."},
               {"role": "user", "content": "What should I cook for dinner, given my allergies?"}]
    answer = client.chat.completions.create(model="m", messages=history)
    assert answer.choices[0].message.content == "A peanut-free curry."
    sent = model.requests_to("/chat/completions")[0].json["messages"]
    assert sent[0] == {"role": "system", "content": "You are a chef."}  # the caller's own system message first
    assert sent[1]["role"] == "system" and sent[1]["content"].startswith(PREAMBLE)
    assert "allergic to peanuts" in sent[1]["content"] and sent[2] == history[1]
    client.flush()
    conversation = client.memento.conversation_id
    assert stored(server_url, remembered, conversation) == [
        ("user", "What should I cook for dinner, given my allergies?"), ("assistant", "A peanut-free curry.")]

    # the next call sends the whole history again (the answer as the SDK gave it): only the new turn is stored
    history += [answer.choices[0].message, {"role": "user", "content": "Rice or noodles with it?"}]
    client.chat.completions.create(model="m", messages=history)
    client.flush()
    assert stored(server_url, remembered, conversation)[2:] == [
        ("user", "Rice or noodles with it?"), ("assistant", "Rice, not noodles.")]
    assert client.models.list().data is not None  # everything else is the client's own


def test_a_chat_stream_is_passed_through_and_stored_once_read(model, wrap, server_url, remembered):
    client = wrap(openai.OpenAI(base_url=model.base_url, api_key="k"), token=remembered)
    model.reply("Streamed answer about peanuts.")
    with client.chat.completions.create(model="m", stream=True, messages=[
            {"role": "user", "content": "Any snack ideas without peanuts?"}]) as stream:
        text = "".join(chunk.choices[0].delta.content or "" for chunk in stream if chunk.choices)
    assert text == "Streamed answer about peanuts."
    assert "allergic to peanuts" in system_texts(model.requests_to("/chat/completions")[0])[0]
    client.flush()
    assert stored(server_url, remembered, client.memento.conversation_id) == [
        ("user", "Any snack ideas without peanuts?"), ("assistant", "Streamed answer about peanuts.")]


def test_responses_plain_and_streamed(model, wrap, server_url, remembered):
    client = wrap(openai.OpenAI(base_url=model.base_url, api_key="k"), token=remembered)
    model.reply("Try a lentil salad.", "Oat cookies.")
    response = client.responses.create(model="m", input="Lunch idea for someone with my allergies?")
    assert response.output_text == "Try a lentil salad."
    first = model.requests_to("/responses")[0].json["input"]
    assert first[0]["role"] == "system" and "allergic to peanuts" in first[0]["content"]
    assert first[1] == {"role": "user", "content": "Lunch idea for someone with my allergies?"}
    events = list(client.responses.create(model="m", stream=True,
                                          input=[{"role": "user", "content": "And a dessert allergy-safe?"}]))
    assert events[-1].type == "response.completed"
    client.flush()
    assert stored(server_url, remembered, client.memento.conversation_id) == [
        ("user", "Lunch idea for someone with my allergies?"), ("assistant", "Try a lentil salad."),
        ("user", "And a dessert allergy-safe?"), ("assistant", "Oat cookies.")]


def test_the_async_client(model, wrap, server_url, remembered):
    async def talk():
        client = wrap(openai.AsyncOpenAI(base_url=model.base_url, api_key="k"), token=remembered)
        model.reply("Async answer.", "Async stream.")
        answer = await client.chat.completions.create(model="m", messages=[
            {"role": "user", "content": "What am I allergic to?"}])
        stream = await client.responses.create(model="m", input="Say it again, streaming.", stream=True)
        events = [event async for event in stream]
        client.flush()
        return client, answer, events

    client, answer, events = asyncio.run(talk())
    assert answer.choices[0].message.content == "Async answer."
    assert events[-1].response.output_text == "Async stream."
    assert "allergic to peanuts" in system_texts(model.requests_to("/chat/completions")[0])[0]
    assert [role for role, _ in stored(server_url, remembered, client.memento.conversation_id)] == [
        "user", "assistant", "user", "assistant"]


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_memento_down_or_refusing_never_breaks_the_chat(model, wrap, server_url, caplog):
    caplog.set_level(logging.WARNING, logger="memento_client.openai_memory")
    for url, token in ((f"http://127.0.0.1:{_closed_port()}", "t"), (server_url, "not-a-token")):
        model.reset()
        client = wrap(openai.OpenAI(base_url=model.base_url, api_key="k"), url=url, token=token, timeout=5)
        model.reply("Still here.", "Streaming still.")
        answer = client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Hello there"}])
        assert answer.choices[0].message.content == "Still here."
        assert system_texts(model.requests_to("/chat/completions")[0]) == []
        chunks = list(client.chat.completions.create(model="m", stream=True,
                                                     messages=[{"role": "user", "content": "Again"}]))
        assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "Streaming still."
        client.flush()
    messages = [record.getMessage() for record in caplog.records]
    assert "Memento context unavailable; the call goes on without it" in messages
    assert "Memento did not store this turn" in messages
