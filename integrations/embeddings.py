"""Embedding providers: the local all-MiniLM-L6-v2 model (default, offline) or any OpenAI-compatible endpoint.

`get_provider()` returns the configured provider, created once per process. Every provider returns unit-length
vectors of `settings.EMBEDDING_DIMENSIONS` floats. `count_tokens()` counts with the local model's own WordPiece
tokenizer, which is what limits memory content and sizes document chunks whichever provider embeds
(integrations.tokens; the local model itself is integrations.local_model).

A remote provider is called through a circuit breaker. One request waits at most EMBEDDING_API_TIMEOUT (a quick
retry of a refused connection or a 429/5xx answer included; never a second wait after a timeout). After
EMBEDDING_CIRCUIT_FAILURES failed calls in a row the provider is not called for EMBEDDING_CIRCUIT_COOLOFF seconds:
every call fails at once with EmbeddingError, so writes store their embedding pending and searches answer from
full text without waiting. Then one trial call goes through (the others still fail at once); its success closes
the circuit. Each process has its own breaker. The local model has none (nothing to wait for, no overhead).
"""

import logging
import threading
import time
from collections.abc import Sequence

import circuitbreaker
import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

from integrations.local_model import LOCAL_DIMENSIONS, LOCAL_MODEL, LocalProvider
from integrations.tokens import (  # noqa: F401 (the token helpers, as callers of this module know them)
    WINDOW_TOKENS,
    count_tokens,
    count_tokens_many,
    pool_windows,
    token_ids,
    tokenizer,
    windows,
)
from observability import hooks

logger = logging.getLogger(__name__)

class EmbeddingError(Exception):
    """The provider could not embed right now (network, timeout, bad answer); the caller may degrade."""


# a refused connection or a 429/5xx answer is tried once more after this pause, when the request's time allows
RETRY_PAUSE = 0.25


class OpenAIProvider:
    """Any OpenAI-compatible `/embeddings` endpoint: OpenAI, DeepInfra, Ollama, vLLM."""

    def __init__(self, *, model_name: str, dimensions: int, base_url: str, api_key: str, timeout: float,
                 batch_size: int, send_dimensions: bool, circuit_failures: int = 5, circuit_cooloff: float = 30.0):
        import openai

        self.model_name = model_name
        self.dimensions = dimensions
        self.batch_size = batch_size
        self.send_dimensions = send_dimensions
        self.timeout = timeout
        # The client's own retry waited a second full timeout after a timeout (10.5 s per write at 5 s): the one
        # retry is ours, within the same deadline.
        self._client = openai.OpenAI(base_url=base_url, api_key=api_key or "not-needed", timeout=timeout,
                                     max_retries=0)
        self.breaker = circuitbreaker.CircuitBreaker(
            failure_threshold=circuit_failures, recovery_timeout=circuit_cooloff, expected_exception=EmbeddingError,
            name=f"embeddings {base_url}",
        )
        self._trial = threading.Lock()  # held by the one trial call of a half-open circuit

    def _create(self, batch: list[str], extra: dict):
        """One `/embeddings` request, taking at most `timeout` seconds in all."""
        import openai

        deadline = time.monotonic() + self.timeout
        for attempt in (1, 2):
            try:
                client = self._client.with_options(timeout=max(0.01, deadline - time.monotonic()))
                return client.embeddings.create(model=self.model_name, input=batch, **extra)
            except openai.APITimeoutError as exc:  # the time is used up: no second wait
                raise EmbeddingError(f"embedding endpoint timed out after {self.timeout:g} s") from exc
            except (openai.APIConnectionError, openai.RateLimitError, openai.InternalServerError) as exc:
                if attempt == 2 or deadline - time.monotonic() < 2 * RETRY_PAUSE:
                    raise EmbeddingError(f"embedding endpoint failed: {exc}") from exc
                time.sleep(RETRY_PAUSE)
            except (openai.OpenAIError, ValueError) as exc:  # ValueError: a body that is not JSON, or no data
                raise EmbeddingError(f"embedding endpoint failed: {exc}") from exc
        raise AssertionError("unreachable")

    def _encode(self, pieces: Sequence[str]) -> list[list[float]]:
        vectors: list[list[float]] = []
        extra = {"dimensions": self.dimensions} if self.send_dimensions else {}
        for start in range(0, len(pieces), self.batch_size):
            batch = list(pieces[start : start + self.batch_size])
            data = sorted(self._create(batch, extra).data or [], key=lambda item: item.index)
            if len(data) != len(batch):
                raise EmbeddingError(f"embedding endpoint returned {len(data)} vectors for {len(batch)} inputs")
            if [item.index for item in data] != list(range(len(batch))):
                raise EmbeddingError("embedding endpoint returned vectors with missing or repeated indexes")
            for item in data:
                if not isinstance(item.embedding, list):
                    raise EmbeddingError(f"embedding endpoint returned {type(item.embedding).__name__}, not a vector")
                if len(item.embedding) != self.dimensions:
                    raise EmbeddingError(
                        f"embedding endpoint returned {len(item.embedding)} dimensions, "
                        f"EMBEDDING_DIMENSIONS is {self.dimensions}"
                    )
                vectors.append(item.embedding)
        return vectors

    def _embed(self, texts: Sequence[str]) -> list[list[float]]:
        with np.errstate(all="ignore"):
            try:
                vectors = np.asarray(pool_windows(texts, self._encode), dtype=np.float32)
            except (TypeError, ValueError) as exc:  # numbers that are not numbers
                raise EmbeddingError(f"embedding endpoint returned something that is not a vector: {exc}") from exc
            # NaN (the database refuses it: a 500), infinite or all-zero vectors are the provider's error too
            if not (np.isfinite(vectors).all() and np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)):
                raise EmbeddingError("embedding endpoint returned vectors with NaN, infinite or all-zero values")
        return vectors.tolist()

    @hooks.embedding
    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        if not texts:
            return []
        breaker = self.breaker
        state = breaker.state
        if state == circuitbreaker.STATE_OPEN:
            raise EmbeddingError(f"embedding endpoint not called for {breaker.open_remaining} s more after "
                                 f"{breaker.failure_count} failures in a row (last: {breaker.last_failure})")
        if state == circuitbreaker.STATE_HALF_OPEN:
            if not self._trial.acquire(blocking=False):
                raise EmbeddingError("embedding endpoint being tried again after failures; not called meanwhile")
            try:
                with breaker:
                    return self._embed(texts)
            finally:
                self._trial.release()
        with breaker:
            return self._embed(texts)


_provider = None
_provider_lock = threading.Lock()


def dimension_problem(column: int | None = None) -> str | None:
    """Why the configured embeddings cannot be used, or None when they can. `column` is the size of the vector
    columns they are stored in (memories.checks passes it: integrations knows no model); None skips that part."""
    if settings.EMBEDDING_PROVIDER == "local" and settings.EMBEDDING_DIMENSIONS != LOCAL_DIMENSIONS:
        return (
            f"EMBEDDING_DIMENSIONS is {settings.EMBEDDING_DIMENSIONS} but the local model all-MiniLM-L6-v2 makes "
            f"{LOCAL_DIMENSIONS}-dimensional vectors: unset EMBEDDING_DIMENSIONS or set it to {LOCAL_DIMENSIONS}."
        )
    if column is not None and settings.EMBEDDING_DIMENSIONS != column:
        return (
            f"EMBEDDING_DIMENSIONS is {settings.EMBEDDING_DIMENSIONS} but the database stores vector({column}): "
            f"choose an embedding model with {column} dimensions, or ask the endpoint for {column} by setting "
            f"EMBEDDING_DIMENSIONS={column} and EMBEDDING_SEND_DIMENSIONS=true (OpenAI text-embedding-3 models "
            f"accept it)."
        )
    if settings.EMBEDDING_PROVIDER not in ("local", "openai"):
        return f"EMBEDDING_PROVIDER is {settings.EMBEDDING_PROVIDER!r}: use 'local' or 'openai'."
    return None


def build_provider(model_name: str | None = None):
    """The configured provider, for `model_name` (default EMBEDDING_MODEL): another model of the same endpoint, or
    the local model by its name (a table still on the model used before a switch: memories.spaces)."""
    problem = dimension_problem()
    if problem:
        raise ImproperlyConfigured(problem)
    model_name = model_name or settings.EMBEDDING_MODEL
    if settings.EMBEDDING_PROVIDER == "openai" and model_name != LOCAL_MODEL:
        return OpenAIProvider(
            model_name=model_name,
            dimensions=settings.EMBEDDING_DIMENSIONS,
            base_url=settings.EMBEDDING_API_BASE,
            api_key=settings.EMBEDDING_API_KEY,
            timeout=settings.EMBEDDING_API_TIMEOUT,
            batch_size=settings.EMBEDDING_BATCH_SIZE,
            send_dimensions=settings.EMBEDDING_SEND_DIMENSIONS,
            circuit_failures=settings.EMBEDDING_CIRCUIT_FAILURES,
            circuit_cooloff=settings.EMBEDDING_CIRCUIT_COOLOFF,
        )
    if settings.EMBEDDING_RUNTIME == "onnx":
        from integrations.onnx_model import onnx_provider

        provider = onnx_provider(model_name, settings.EMBEDDING_BATCH_SIZE,
                                 cache_dir=settings.EMBEDDING_ONNX_DIR, threads=settings.EMBEDDING_ONNX_THREADS)
        if provider is not None:
            return provider
    return LocalProvider(model_name, settings.EMBEDDING_BATCH_SIZE)


def get_provider():
    """The configured provider, built on first use and kept for the life of the process."""
    global _provider
    if _provider is None:
        with _provider_lock:
            if _provider is None:
                _provider = build_provider()
    return _provider


# providers of other models than EMBEDDING_MODEL, by name: built on first use, or registered (a test's second model)
_named: dict[str, object] = {}


def register_provider(model_name: str, provider) -> None:
    """Make `provider` the one that embeds for `model_name` in this process (None forgets it)."""
    with _provider_lock:
        if provider is None:
            _named.pop(model_name, None)
        else:
            _named[model_name] = provider


def provider_for(model_name: str | None = None):
    """The provider that embeds with `model_name` (None or EMBEDDING_MODEL: the configured one)."""
    if not model_name or (model_name == settings.EMBEDDING_MODEL and model_name not in _named):
        return get_provider()
    provider = _named.get(model_name)
    if provider is None:
        with _provider_lock:
            provider = _named.get(model_name)
            if provider is None:
                provider = _named[model_name] = build_provider(model_name)
    return provider


class ModelVector(list):
    """A vector with the name of the model that made it: compared only with stored vectors of that model."""

    def __init__(self, values, model: str):
        super().__init__(values)
        self.model = model


def model_of(vector) -> str:
    """The model that made `vector` (a plain list: the configured one)."""
    return getattr(vector, "model", None) or settings.EMBEDDING_MODEL


def embed_texts(texts: Sequence[str], model: str | None = None) -> list[list[float]]:
    return provider_for(model).embed(texts)


def embed_text(text: str, model: str | None = None) -> list[float]:
    return embed_texts([text], model)[0]
