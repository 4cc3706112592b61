"""One line of memory for an agent written against the OpenAI SDK:

    from openai import OpenAI
    from memento_client.openai_memory import with_memory

    client = with_memory(OpenAI(), url="http://127.0.0.1:8000", token=MEMENTO_TOKEN)
    client.chat.completions.create(model="gpt-4o-mini", messages=[{"role": "user", "content": "Plan my dinner"}])

Each `chat.completions.create` and `responses.create` call (of `OpenAI` or `AsyncOpenAI`, streaming or not) first
asks Memento for the user's context on the latest user message (the profile, relevant memories and excerpts of
earlier conversations, within `budget` tokens) and sends it as a system message; once the answer is in (for a
stream: once it has been read to the end), the new user turns and the assistant's answer are appended to a
Memento conversation (made on first use, or `conversation_id`), where the pipeline extracts memories from them.
Everything else on the client is the client's own. Memento being slow, down or refusing never breaks the chat:
the call goes on without context, the failure is logged (logger `memento_client.openai_memory`), the turn is
not stored. Appending happens in a background thread (`flush()` waits for it), so it adds no latency.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import logging
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import httpx

from memento_client.client import api_root, auth_headers, raise_for_status

logger = logging.getLogger(__name__)

DEFAULT_BUDGET = 800  # tokens of context added to each call
DEFAULT_TIMEOUT = 3.0  # seconds a Memento call may take before the chat goes on without it
PREAMBLE = "What you remember about the user from earlier conversations (Memento):\n"


def _text_of(content: Any) -> str:
    """The text of a message's content: a string, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(part.get("text", "") for part in content
                         if isinstance(part, dict) and part.get("type") in ("text", "input_text", "output_text"))
    return ""


def _field(message: Any, name: str) -> Any:
    """A message's field, whether it is a dict or an SDK object (a previous answer's message put back in)."""
    return message.get(name) if isinstance(message, dict) else getattr(message, name, None)


def _new_turns(messages: list) -> list[tuple[int, Any]]:
    """The user messages after the last assistant message (the turn this call adds), with their positions."""
    last_assistant = max((i for i, m in enumerate(messages) if _field(m, "role") == "assistant"), default=-1)
    return [(i, m) for i, m in enumerate(messages) if i > last_assistant and _field(m, "role") == "user"]


def _client_id(*parts: Any) -> str:
    return hashlib.sha256("\x1f".join(map(str, parts)).encode()).hexdigest()[:40]


class MementoMemory:
    """The two calls the wrapper makes to Memento (context before, append after), each failing softly."""

    def __init__(self, *, url: str, token: str, conversation_id: str | None = None, agent_id: str = "",
                 title: str = "OpenAI chat", budget: int = DEFAULT_BUDGET, timeout: float = DEFAULT_TIMEOUT,
                 http: httpx.Client | None = None):
        self._http = http or httpx.Client(base_url=api_root(url), headers=auth_headers(token), timeout=timeout)
        self.conversation_id = conversation_id
        self.agent_id, self.title, self.budget = agent_id, title, budget
        self._appending = ThreadPoolExecutor(max_workers=1, thread_name_prefix="memento-append")
        self._pending: list[Future] = []

    def _conversation(self) -> str:
        if self.conversation_id is None:
            response = self._http.post("/conversations/", json={"title": self.title, "agent_id": self.agent_id})
            raise_for_status(response)
            self.conversation_id = response.json()["id"]
        return self.conversation_id

    def context(self, query: str) -> str:
        """The context text for `query` ("" when there is none, or Memento failed: logged)."""
        if not query.strip():
            return ""
        try:
            response = self._http.get(f"/conversations/{self._conversation()}/context/",
                                      params={"query": query[:4000], "budget": self.budget})
            raise_for_status(response)
            return response.json().get("text") or ""
        except Exception:  # noqa: BLE001 - whatever Memento does, the chat goes on without context
            logger.warning("Memento context unavailable; the call goes on without it", exc_info=True)
            return ""

    def append(self, messages: list[dict]) -> None:
        """Append turns in the background (a failure is logged; the chat never waits for it)."""
        if messages:
            self._pending.append(self._appending.submit(self._append_now, messages))

    def _append_now(self, messages: list[dict]) -> None:
        try:
            response = self._http.post(f"/conversations/{self._conversation()}/messages/",
                                       json={"messages": messages})
            raise_for_status(response)
        except Exception:  # noqa: BLE001
            logger.warning("Memento did not store this turn", exc_info=True)

    def flush(self) -> None:
        """Wait until every turn handed to `append` so far has been sent."""
        pending, self._pending = self._pending, []
        for future in pending:
            future.result()

    def close(self) -> None:
        self.flush()
        self._appending.shutdown(wait=True)
        self._http.close()


# --- what a call sends and stores -----------------------------------------------------------------------------


def _with_context(messages: list[dict], context: str) -> list[dict]:
    """The messages with the context as a system message after the caller's own leading system messages."""
    if not context:
        return messages
    head = 0
    while head < len(messages) and _field(messages[head], "role") in ("system", "developer"):
        head += 1
    return [*messages[:head], {"role": "system", "content": PREAMBLE + context}, *messages[head:]]


def _turns(messages: list[dict], answer: str, answer_id: str) -> list[dict]:
    """The new user turns (ids from their place and text: a history sent again is not stored twice) and the
    assistant's answer."""
    stored = [{"role": "user", "content": text, "client_message_id": _client_id(i, text)}
              for i, m in _new_turns(messages) if (text := _text_of(_field(m, "content"))).strip()]
    if answer.strip():
        stored.append({"role": "assistant", "content": answer, "client_message_id": _client_id("answer", answer_id)})
    return stored


def _chat_answer(response: Any) -> tuple[str, str]:
    try:
        return response.choices[0].message.content or "", response.id
    except (AttributeError, IndexError):
        return "", ""


def _responses_messages(kwargs: dict) -> list[dict]:
    given = kwargs.get("input")
    if isinstance(given, str):
        return [{"role": "user", "content": given}]
    return [m for m in given or [] if isinstance(m, dict) and "role" in m]


def _responses_answer(response: Any) -> tuple[str, str]:
    return getattr(response, "output_text", "") or "", getattr(response, "id", "") or ""


def _chat_delta(chunk: Any) -> str:
    try:
        return chunk.choices[0].delta.content or ""
    except (AttributeError, IndexError):
        return ""


def _responses_delta(event: Any) -> str:
    return (getattr(event, "delta", "") or "") if getattr(event, "type", "") == "response.output_text.delta" else ""


class _Recording:
    """A stream handed back to the caller unchanged, chunk by chunk; what it said is stored once it ends."""

    def __init__(self, stream: Any, delta, done):
        self._stream, self._delta, self._done, self._parts, self._finished = stream, delta, done, [], False

    def _finish(self) -> None:
        if not self._finished:
            self._finished = True
            self._done("".join(self._parts))

    def _take(self, item: Any) -> Any:
        self._parts.append(_delta_text(self._delta, item))
        return item

    def __iter__(self):
        for item in self._stream:
            yield self._take(item)
        self._finish()

    async def __aiter__(self):
        async for item in self._stream:
            yield self._take(item)
        self._finish()

    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return self._stream.__exit__(*exc_info)

    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc_info):
        return await self._stream.__aexit__(*exc_info)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._stream, name)


def _delta_text(delta, item: Any) -> str:
    try:
        return delta(item)
    except Exception:  # noqa: BLE001 - an unexpected chunk shape never breaks the stream
        return ""


class _Endpoint:
    """`create` with memory around it; anything else is the SDK resource's own."""

    def __init__(self, resource: Any, memory: MementoMemory, *, kind: str):
        self._resource, self._memory, self._kind = resource, memory, kind
        # the SDK's async resources (AsyncCompletions, AsyncResponses) wrap `create` in a plain function
        if type(resource).__name__.startswith("Async") or inspect.iscoroutinefunction(resource.create):
            self.create = self._acreate

    def __getattr__(self, name: str) -> Any:
        return getattr(self._resource, name)

    def _prepare(self, kwargs: dict) -> tuple[dict, list[dict], str]:
        """The call's arguments, the conversation as the caller sent it, and the query (the last user turn)."""
        chat = self._kind == "chat"
        messages = list(kwargs.get("messages") or []) if chat else _responses_messages(kwargs)
        turns = _new_turns(messages)
        query = _text_of(_field(turns[-1][1], "content")) if turns else ""
        return kwargs, messages, query

    def _send_kwargs(self, kwargs: dict, messages: list[dict], context: str) -> dict:
        if not context:
            return kwargs
        if self._kind == "chat":
            return {**kwargs, "messages": _with_context(messages, context)}
        given = kwargs.get("input")
        items = [{"role": "user", "content": given}] if isinstance(given, str) else list(given or [])
        return {**kwargs, "input": [{"role": "system", "content": PREAMBLE + context}, *items]}

    def _after(self, messages: list[dict], response: Any, stream: bool) -> Any:
        answer_of = _chat_answer if self._kind == "chat" else _responses_answer
        if not stream:
            try:
                self._memory.append(_turns(messages, *answer_of(response)))
            except Exception:  # noqa: BLE001 - the answer goes back to the caller whatever happens here
                logger.warning("Memento did not store this turn", exc_info=True)
            return response
        delta = _chat_delta if self._kind == "chat" else _responses_delta
        key = _client_id("stream", id(response), len(messages))
        return _Recording(response, delta, lambda text: self._memory.append(_turns(messages, text, key)))

    def create(self, **kwargs: Any) -> Any:
        try:
            kwargs, messages, query = self._prepare(kwargs)
            send = self._send_kwargs(kwargs, messages, self._memory.context(query))
        except Exception:  # noqa: BLE001 - arguments this wrapper does not understand: the call goes on as given
            logger.warning("Memento left this call alone", exc_info=True)
            return self._resource.create(**kwargs)
        return self._after(messages, self._resource.create(**send), bool(kwargs.get("stream")))

    async def _acreate(self, **kwargs: Any) -> Any:
        try:
            kwargs, messages, query = self._prepare(kwargs)
            send = self._send_kwargs(kwargs, messages, await asyncio.to_thread(self._memory.context, query))
        except Exception:  # noqa: BLE001
            logger.warning("Memento left this call alone", exc_info=True)
            return await self._resource.create(**kwargs)
        return self._after(messages, await self._resource.create(**send), bool(kwargs.get("stream")))


class _Namespace:
    """`client.chat`: its `completions` wrapped, the rest passed through."""

    def __init__(self, target: Any, **wrapped: Any):
        self._target, self._wrapped = target, wrapped

    def __getattr__(self, name: str) -> Any:
        return self._wrapped[name] if name in self._wrapped else getattr(self._target, name)


class MemoryClient(_Namespace):
    """An OpenAI or AsyncOpenAI client with Memento memory on `chat.completions.create` and `responses.create`;
    `memento` is its MementoMemory (`memento.conversation_id`, `memento.flush()`)."""

    def __init__(self, client: Any, memory: MementoMemory):
        super().__init__(client, chat=_Namespace(client.chat, completions=_Endpoint(
            client.chat.completions, memory, kind="chat")), responses=_Endpoint(client.responses, memory,
                                                                                kind="responses"))
        self.memento = memory

    def flush(self) -> None:
        self.memento.flush()


def with_memory(client: Any, *, url: str, token: str, **options: Any) -> MemoryClient:
    """Wrap an `openai.OpenAI` or `openai.AsyncOpenAI` client (see the module docstring). `options`: `conversation_id`
    (append to this conversation; default: one made on first use), `agent_id`, `title`, `budget` (context tokens,
    default 800), `timeout` (seconds per Memento call, default 3)."""
    return MemoryClient(client, MementoMemory(url=url, token=token, **options))
