"""The optional LLM used by memory extraction: any OpenAI-compatible chat endpoint (OpenAI, DeepInfra, Ollama,
vLLM), named by MEMORY_LLM_API_BASE / MEMORY_LLM_MODEL (+ MEMORY_LLM_API_KEY, MEMORY_LLM_TIMEOUT).

`chat_json()` makes one chat completion that must answer a JSON object, checks it with the caller's
`schema_check`, and gives the model one second chance when the reply is not JSON or does not fit. Errors:

- `LLMUnavailable` (a kind of `LLMError`): the endpoint could not answer right now (connection refused, timeout,
  429, 5xx). Nothing is retried here; the Celery task that called us retries with backoff.
- `LLMError`: the endpoint answered, but not usefully (still invalid after the retry, or a 4xx such as a wrong
  model or key). Retrying the same request later would not help.
"""

from __future__ import annotations

import functools
import json
import logging
import re
from collections.abc import Callable
from typing import Any

from django.conf import settings

logger = logging.getLogger(__name__)


class LLMError(Exception):
    """The LLM endpoint failed, timed out, or answered something unusable; the message says why."""


class LLMUnavailable(LLMError):
    """The endpoint could not be reached or was overloaded (network error, timeout, 429, 5xx): worth retrying."""


def llm_configured() -> bool:
    """True when MEMORY_LLM_API_BASE and MEMORY_LLM_MODEL name an endpoint to use."""
    return bool(settings.MEMORY_LLM_API_BASE and settings.MEMORY_LLM_MODEL)


@functools.lru_cache(maxsize=8)
def _client(base_url: str, api_key: str, timeout: float):
    import openai

    return openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout, max_retries=0)


def _complete(messages: list[dict[str, str]]) -> str:
    """One chat completion; returns the assistant's text ("" when it sent none)."""
    import openai

    base_url, model = settings.MEMORY_LLM_API_BASE, settings.MEMORY_LLM_MODEL
    if not (base_url and model):
        raise LLMError("no LLM is configured: set MEMORY_LLM_API_BASE and MEMORY_LLM_MODEL")
    timeout = float(settings.MEMORY_LLM_TIMEOUT or 30)
    client = _client(base_url, settings.MEMORY_LLM_API_KEY or "", timeout)
    try:
        response = client.chat.completions.create(
            model=model, messages=messages, response_format={"type": "json_object"}
        )
    except openai.APITimeoutError as exc:
        raise LLMUnavailable(f"LLM endpoint timed out after {timeout:g}s") from exc
    except openai.APIConnectionError as exc:
        raise LLMUnavailable(f"LLM endpoint unreachable: {exc}") from exc
    except openai.APIStatusError as exc:
        kind = LLMUnavailable if exc.status_code == 429 or exc.status_code >= 500 else LLMError
        raise kind(f"LLM endpoint answered HTTP {exc.status_code}: {exc.message}") from exc
    except (openai.OpenAIError, ValueError) as exc:  # ValueError: a response body that is not JSON
        raise LLMError(f"LLM endpoint failed: {exc}") from exc
    choices = getattr(response, "choices", None) or []
    if not choices or choices[0].message is None:
        return ""
    return choices[0].message.content or ""


_FENCE = re.compile(r"^\s*```(?:json)?\s*(.*?)\s*```\s*$", re.DOTALL)


def _parse(text: str) -> Any:
    """The reply as JSON (a ```json fence around it is tolerated). Raises ValueError saying what is wrong."""
    if not text.strip():
        raise ValueError("invalid JSON: the reply was empty")
    fenced = _FENCE.match(text)
    try:
        return json.loads(fenced.group(1) if fenced else text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"invalid JSON: {exc}") from exc


def chat_json(*, system: str, user: str, schema_check: Callable[[Any], Any]) -> Any:
    """Ask the model and return `schema_check(parsed JSON reply)`. `schema_check` raises ValueError (with a
    message naming the offending field) when the reply does not fit; the model then gets one follow-up message
    quoting the problem. A second unusable reply raises LLMError with the reason; endpoint failures raise
    LLMUnavailable / LLMError at once."""
    messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
    problem = ""
    for attempt in (1, 2):
        reply = _complete(messages)
        try:
            data = _parse(reply)
        except ValueError as exc:
            problem = str(exc)
        else:
            try:
                return schema_check(data)
            except ValueError as exc:
                problem = f"schema mismatch: {exc}"
        if attempt == 1:
            logger.warning("LLM reply unusable (%s); asking once more", problem)
            messages += [
                {"role": "assistant", "content": reply},
                {"role": "user", "content": (
                    f"Your reply could not be used: {problem}. Answer again with one JSON object in exactly the "
                    "format described in the instructions, and nothing else."
                )},
            ]
    raise LLMError(f"LLM reply unusable after one retry: {problem}")
