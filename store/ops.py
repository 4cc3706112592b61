"""The store API's operations, checked for shape: LangGraph's GetOp, PutOp, SearchOp and ListNamespacesOp as
JSON (the bodies the LangGraph server and `langgraph_sdk` use), parsed into typed values. A bad field is a
ValidationError naming it (a 400), before anything is read or written."""

import json
import math
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.core.exceptions import ValidationError
from langgraph.store.base.embed import tokenize_path

from core.text import LABEL_MAX_CHARS, NAMESPACE_MAX_LABELS, nfc, require_storable
from memories.models import MAX_TTL_MINUTES

MAX_LABELS = NAMESPACE_MAX_LABELS  # namespace depth
MAX_LABEL_LENGTH = LABEL_MAX_CHARS  # Memory.namespace's labels
MAX_KEY_LENGTH = 255  # Memory.key
MAX_PATHS = 20
MAX_PATH_LENGTH = 200
MAX_QUERY_CHARS = 4000
MAX_FILTER_KEYS = 20
MAX_OFFSET = 100_000
OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


@dataclass(frozen=True)
class Get:
    namespace: tuple[str, ...]
    key: str
    refresh_ttl: bool = True


@dataclass(frozen=True)
class Put:
    """A put, or a delete when `value` is None. `index`: None (the store's default fields), False (no vector),
    or field paths."""

    namespace: tuple[str, ...]
    key: str
    value: dict | None
    index: Any = None
    ttl: float | None = None


@dataclass(frozen=True)
class Search:
    namespace_prefix: tuple[str, ...]
    filter: dict | None = None
    limit: int = 10
    offset: int = 0
    query: str | None = None
    refresh_ttl: bool = True
    threshold: float | None = None


@dataclass(frozen=True)
class ListNamespaces:
    """`conditions`: (match_type, path) pairs, "prefix" or "suffix", a "*" label matching any one label."""

    conditions: tuple[tuple[str, tuple[str, ...]], ...] = ()
    max_depth: int | None = None
    limit: int = 100
    offset: int = 0


Op = Get | Put | Search | ListNamespaces


def _error(field: str, message: str) -> ValidationError:
    return ValidationError({field: [message]})


def namespace(raw: Any, field: str = "namespace", *, allow_empty: bool = False) -> tuple[str, ...]:
    """A namespace as a tuple of labels: strings, non-empty (not only spaces), without '.' or NUL (labels are
    dot-joined on GET), at most MAX_LABELS of them, each in NFC (one spelling names one item)."""
    if not isinstance(raw, list | tuple):
        raise _error(field, "Must be a list of strings.")
    if not raw and not allow_empty:
        raise _error(field, "Must have at least one label.")
    if len(raw) > MAX_LABELS:
        raise _error(field, f"At most {MAX_LABELS} labels.")
    for label in raw:
        if not isinstance(label, str):
            raise _error(field, f"Labels must be strings, got {type(label).__name__}.")
    raw = [nfc(label) for label in raw]
    for label in raw:
        if not label.strip():
            raise _error(field, "Labels may not be empty.")
        if "." in label or "\x00" in label:
            raise _error(field, f"Label {label!r} may not contain '.' or NUL.")
        if len(label) > MAX_LABEL_LENGTH:
            raise _error(field, f"Labels are at most {MAX_LABEL_LENGTH} characters.")
        require_storable(label, field)
    return tuple(raw)


def key(raw: Any, field: str = "key") -> str:
    if not isinstance(raw, str) or not raw:
        raise _error(field, "Must be a non-empty string.")
    raw = nfc(raw)
    if len(raw) > MAX_KEY_LENGTH:
        raise _error(field, f"At most {MAX_KEY_LENGTH} characters.")
    require_storable(raw, field)
    return raw


def _boolean(raw: Any, field: str, default: bool) -> bool:
    if raw is None:
        return default
    if isinstance(raw, bool):
        return raw
    if isinstance(raw, str) and raw.lower() in ("true", "false", "1", "0"):
        return raw.lower() in ("true", "1")
    raise _error(field, "Must be true or false.")


def _integer(raw: Any, field: str, default: int, low: int, high: int) -> int:
    if raw is None:
        return default
    if isinstance(raw, bool) or not isinstance(raw, int | str):
        raise _error(field, "Must be an integer.")
    try:
        number = int(raw)
    except ValueError:
        raise _error(field, "Must be an integer.") from None
    if not low <= number <= high:
        raise _error(field, f"Must be between {low} and {high}.")
    return number


def _value(raw: Any, field: str = "value") -> dict:
    if not isinstance(raw, dict):
        raise _error(field, "Must be a JSON object.")
    require_storable(raw, field)
    size = len(json.dumps(raw, ensure_ascii=False).encode())
    if size > settings.STORE_VALUE_MAX_BYTES:
        raise _error(field, f"Is {size} bytes as JSON; the limit is {settings.STORE_VALUE_MAX_BYTES}.")
    return raw


def _index(raw: Any, field: str = "index"):
    if raw is None or raw is False:
        return raw
    if not isinstance(raw, list) or not raw:
        raise _error(field, "Must be false, null or a non-empty list of field paths.")
    if len(raw) > MAX_PATHS:
        raise _error(field, f"At most {MAX_PATHS} paths.")
    for path in raw:
        if not isinstance(path, str) or not path or len(path) > MAX_PATH_LENGTH:
            raise _error(field, f"Paths are non-empty strings of at most {MAX_PATH_LENGTH} characters.")
        require_storable(path, field)
        if path != "$" and not tokenize_path(path):
            raise _error(field, f"Cannot read path {path!r}.")
    return list(raw)


def _ttl(raw: Any, field: str = "ttl") -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not math.isfinite(raw):
        raise _error(field, "Must be a number of minutes or null.")
    if not 0 < raw <= MAX_TTL_MINUTES:
        raise _error(field, f"Must be more than 0 and at most {MAX_TTL_MINUTES} minutes.")
    return float(raw)


def _filter(raw: Any, field: str = "filter") -> dict | None:
    """Top-level value keys to exact JSON values, or to {operator: operand} with LangGraph's operators;
    $gt/$gte/$lt/$lte compare numbers as numbers and strings as strings."""
    if raw is None:
        return None
    if not isinstance(raw, dict):
        raise _error(field, "Must be an object of value keys to match.")
    if len(raw) > MAX_FILTER_KEYS:
        raise _error(field, f"At most {MAX_FILTER_KEYS} keys.")
    require_storable(raw, field)
    for name, condition in raw.items():
        if isinstance(condition, dict) and any(k.startswith("$") for k in condition):
            for operator, operand in condition.items():
                if operator not in OPERATORS:
                    raise _error(field, f"{name}: unknown operator {operator!r} (use one of {', '.join(OPERATORS)}).")
                if operator in ("$eq", "$ne"):
                    continue
                if isinstance(operand, bool) or not isinstance(operand, int | float | str):
                    raise _error(field, f"{name}: {operator} compares numbers or strings.")
                if isinstance(operand, float) and not math.isfinite(operand):
                    raise _error(field, f"{name}: {operator} needs a finite number.")
    return raw


def _threshold(raw: Any, field: str = "threshold") -> float | None:
    if raw is None:
        return None
    if isinstance(raw, bool) or not isinstance(raw, int | float) or not -1 <= raw <= 1:
        raise _error(field, "Must be a cosine similarity between -1 and 1, or null.")
    return float(raw)


def _query(raw: Any, field: str = "query") -> str | None:
    if raw is None:
        return None
    if not isinstance(raw, str):
        raise _error(field, "Must be a string or null.")
    if len(raw) > MAX_QUERY_CHARS:
        raise _error(field, f"At most {MAX_QUERY_CHARS} characters.")
    require_storable(raw, field)
    return raw or None  # an empty query lists, like LangGraph's stores


def _known(data: dict, allowed: set[str], where: str = "") -> None:
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise ValidationError({f"{where}{name}": ["Unknown field."] for name in unknown})


def put(data: Any) -> Put:
    """PUT /store/items: {namespace, key, value, index?, ttl?}; value null deletes (as in a batch)."""
    _object(data)
    _known(data, {"namespace", "key", "value", "index", "ttl", "op"})
    value = data.get("value")
    # deleting from the empty namespace is a no-op, as in LangGraph's stores; nothing can be put there
    return Put(namespace=namespace(data.get("namespace"), allow_empty=value is None), key=key(data.get("key")),
               value=None if value is None else _value(value), index=_index(data.get("index")),
               ttl=_ttl(data.get("ttl")))


def delete(data: Any) -> Put:
    _object(data)
    _known(data, {"namespace", "key", "op"})
    return Put(namespace=namespace(data.get("namespace"), allow_empty=True), key=key(data.get("key")), value=None)


def get(data: Any) -> Get:
    _object(data)
    _known(data, {"namespace", "key", "refresh_ttl", "op"})
    return Get(namespace=namespace(data.get("namespace"), allow_empty=True), key=key(data.get("key")),
               refresh_ttl=_boolean(data.get("refresh_ttl"), "refresh_ttl", True))


def get_query(params) -> Get:
    """GET /store/items?namespace=a.b&key=k[&refresh_ttl=false]: the namespace dot-joined."""
    _known(params, {"namespace", "key", "refresh_ttl"})
    joined = params.get("namespace", "")
    return get({"namespace": joined.split(".") if joined else [], "key": params.get("key"),
                "refresh_ttl": params.get("refresh_ttl")})


def search(data: Any) -> Search:
    _object(data)
    _known(data, {"namespace_prefix", "filter", "limit", "offset", "query", "refresh_ttl", "threshold", "op"})
    return Search(
        namespace_prefix=namespace(data.get("namespace_prefix", []), "namespace_prefix", allow_empty=True),
        filter=_filter(data.get("filter")),
        limit=_integer(data.get("limit"), "limit", 10, 1, settings.STORE_SEARCH_MAX_LIMIT),
        offset=_integer(data.get("offset"), "offset", 0, 0, MAX_OFFSET),
        query=_query(data.get("query")),
        refresh_ttl=_boolean(data.get("refresh_ttl"), "refresh_ttl", True),
        threshold=_threshold(data.get("threshold")),
    )


def list_namespaces(data: Any) -> ListNamespaces:
    """{prefix?, suffix?, match_conditions?: [{match_type, path}], max_depth?, limit?, offset?}."""
    _object(data)
    _known(data, {"prefix", "suffix", "match_conditions", "max_depth", "limit", "offset", "op"})
    conditions = []
    for match_type in ("prefix", "suffix"):
        if data.get(match_type) not in (None, []):  # anything else must be a namespace
            conditions.append((match_type, namespace(data[match_type], match_type)))
    raw_conditions = data.get("match_conditions")
    raw_conditions = [] if raw_conditions is None else raw_conditions
    if not isinstance(raw_conditions, list) or len(raw_conditions) > 10:
        raise _error("match_conditions", "Must be a list of at most 10 conditions.")
    for condition in raw_conditions:
        if not isinstance(condition, dict) or condition.get("match_type") not in ("prefix", "suffix"):
            raise _error("match_conditions", 'Each is {"match_type": "prefix"|"suffix", "path": [...]}.')
        path = namespace(condition.get("path"), "match_conditions", allow_empty=True)
        if path:
            conditions.append((condition["match_type"], path))
    max_depth = data.get("max_depth")
    return ListNamespaces(
        conditions=tuple(conditions),
        max_depth=None if max_depth is None else _integer(max_depth, "max_depth", 0, 1, MAX_LABELS),
        limit=_integer(data.get("limit"), "limit", 100, 1, settings.STORE_SEARCH_MAX_LIMIT),
        offset=_integer(data.get("offset"), "offset", 0, 0, MAX_OFFSET),
    )


PARSERS = {"get": get, "put": put, "delete": delete, "search": search, "list_namespaces": list_namespaces}


def batch(data: Any) -> list[Op]:
    """POST /store/batch: {"ops": [{"op": "get"|"put"|"delete"|"search"|"list_namespaces", ...the fields of
    that endpoint's body}]}. A bad op fails the whole batch, naming it: `ops[3].namespace`."""
    _object(data)
    _known(data, {"ops"})
    raw_ops = data.get("ops")
    if not isinstance(raw_ops, list) or not raw_ops:
        raise _error("ops", "Must be a non-empty list of operations.")
    if len(raw_ops) > settings.STORE_BATCH_MAX_OPS:
        raise _error("ops", f"At most {settings.STORE_BATCH_MAX_OPS} operations per batch, got {len(raw_ops)}.")
    ops = []
    for index, raw in enumerate(raw_ops):
        where = f"ops[{index}]"
        if not isinstance(raw, dict) or raw.get("op") not in PARSERS:
            raise _error(f"{where}.op", f"Must be one of {', '.join(PARSERS)}.")
        try:
            ops.append(PARSERS[raw["op"]](raw))
        except ValidationError as exc:
            raise ValidationError({f"{where}.{name}": messages for name, messages in exc.message_dict.items()}
                                  ) from None
    return ops


def _object(data: Any) -> None:
    if not isinstance(data, dict):
        raise _error("body", "Must be a JSON object.")
