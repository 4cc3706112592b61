"""The decorators the apps put on their code, one line each: each times the call for Prometheus and, when tracing
is on, wraps it in a span with figures (never content, unless MEMENTO_TRACE_CONTENT is on).

- `search` on memory search, with `note(path=..., candidates=...)` inside it for what only the search knows;
- `context` on context building; `extraction(extractor)` on the extractors; `embedding` on the providers' embed.
"""

import functools
import inspect
import time
from contextvars import ContextVar

from observability import metrics, tracing

_notes: ContextVar[dict | None] = ContextVar("memento_search_notes", default=None)


def note(**figures) -> None:
    """What the search in progress learnt on its way (its vector path, how many candidates it ranked)."""
    notes = _notes.get()
    if notes is not None:
        notes.update(figures)


def search(function):
    """Memory search: its time by mode and path, and a `search_memory` span."""
    signature = inspect.signature(function)

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        call = signature.bind(*args, **kwargs)
        call.apply_defaults()
        mode = call.arguments["mode"]
        attributes = {"gen_ai.operation.name": "search_memory", "gen_ai.memory.store.id": "memories",
                      "memento.search.mode": mode, "memento.search.limit": call.arguments["limit"]}
        tracing.content(attributes, "gen_ai.memory.query.text", call.arguments["query"])
        notes = {}
        token = _notes.set(notes)
        started = time.perf_counter()
        try:
            with tracing.span("search_memory memories", attributes) as span:
                result = function(*args, **kwargs)
                if span is not None:
                    span.set_attributes({"memento.search.path": notes.get("path", "none"),
                                         "memento.search.candidates": notes.get("candidates", 0),
                                         "memento.search.ranking": result.ranking,
                                         "memento.search.degraded": result.degraded,
                                         "gen_ai.memory.record.count": len(result.results)})
        finally:
            _notes.reset(token)
        metrics.search_observed(mode=mode, path=notes.get("path", "none"), seconds=time.perf_counter() - started)
        return result

    return wrapper


def _operation(name: str, attributes: dict, figures):
    """A decorator timing `name` and spanning it with `attributes`, plus `figures(result)` once it returns."""
    def decorate(function):
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            started = time.perf_counter()
            with tracing.span(f"memento.{name}", attributes) as span:
                result = function(*args, **kwargs)
                if span is not None:
                    span.set_attributes(figures(result))
            metrics.operation_observed(operation=name, seconds=time.perf_counter() - started)
            return result

        return wrapper

    return decorate


context = _operation("context", {"gen_ai.operation.name": "search_memory", "gen_ai.memory.store.id": "context"},
                     lambda built: {"memento.context.items": len(built.items),
                                    "memento.context.tokens": built.used_tokens,
                                    "memento.context.budget": built.budget,
                                    "memento.context.degraded": built.degraded,
                                    "gen_ai.memory.record.count": sum(i.type == "memory" for i in built.items)})


def extraction(extractor: str):
    """An extractor (local dialogue rules, document rules, the LLM): its time and how many candidates."""
    return _operation(f"extraction.{extractor}", {"memento.extraction.extractor": extractor},
                      lambda found: {"memento.extraction.candidates": len(found)})


def embedding(method):
    """A provider's `embed(texts)`: calls, texts and time by provider, and an `embeddings` span."""
    @functools.wraps(method)
    def wrapper(self, texts):
        if not texts:
            return method(self, texts)
        provider = type(self).__name__.removesuffix("Provider").lower()  # local, onnx, openai
        remote = provider == "openai"
        attributes = {"gen_ai.operation.name": "embeddings", "gen_ai.provider.name": "openai" if remote else
                      "memento.local", "gen_ai.request.model": self.model_name,
                      "gen_ai.embeddings.dimension.count": self.dimensions, "memento.embedding.texts": len(texts)}
        started, ok = time.perf_counter(), False
        try:
            with tracing.span(f"embeddings {self.model_name}", attributes, client=remote):
                vectors = method(self, texts)
            ok = True
            return vectors
        finally:
            metrics.embedding_observed(provider=provider, texts=len(texts), seconds=time.perf_counter() - started,
                                       ok=ok)

    return wrapper
