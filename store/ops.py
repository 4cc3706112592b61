"""The store API's operations, declared once: LangGraph's GetOp, PutOp, SearchOp and ListNamespacesOp as JSON (the
bodies the LangGraph server and `langgraph_sdk` use), as pydantic models. The same models check a request and give
the OpenAPI schema its request bodies (store/views.py). A bad field is a ValidationError naming it (a 400), before
anything is read or written: `{"namespace": ["Labels may not be empty."]}`, in a batch `ops[3].namespace`."""

import json
from typing import Annotated, Any, Literal, Self

import pydantic
from django.conf import settings
from django.core.exceptions import ValidationError
from langgraph.store.base.embed import tokenize_path
from pydantic import AfterValidator, BeforeValidator, Field, WithJsonSchema, model_validator

from core.declared import Declared, checked, refuse
from core.text import LABEL_MAX_CHARS, NAMESPACE_MAX_LABELS, nfc, unstorable
from memories.models import MAX_TTL_MINUTES

MAX_LABELS = NAMESPACE_MAX_LABELS  # namespace depth
MAX_LABEL_LENGTH = LABEL_MAX_CHARS  # Memory.namespace's labels
MAX_KEY_LENGTH = 255  # Memory.key
MAX_PATHS = 20
MAX_PATH_LENGTH = 200
MAX_QUERY_CHARS = 4000
MAX_FILTER_KEYS = 20
MAX_MATCH_CONDITIONS = 10
MAX_OFFSET = 100_000
OPERATORS = ("$eq", "$ne", "$gt", "$gte", "$lt", "$lte")


def _storable(value):
    problem = unstorable(value)
    if problem:
        raise refuse(problem)
    return value


# --- the field types: each one's shape (for the schema) and its rules, side by side -------------------------------

def _labels(raw: Any) -> tuple[str, ...]:
    """Labels: strings, not blank, without '.' or NUL (labels are dot-joined on GET), each in NFC (one spelling
    names one item)."""
    if not isinstance(raw, list | tuple):
        raise refuse("Must be a list of strings.")
    if len(raw) > MAX_LABELS:
        raise refuse(f"At most {MAX_LABELS} labels.")
    for label in raw:
        if not isinstance(label, str):
            raise refuse(f"Labels must be strings, got {type(label).__name__}.")
    labels = tuple(nfc(label) for label in raw)
    for label in labels:
        if not label.strip():
            raise refuse("Labels may not be empty.")
        if "." in label or "\x00" in label:
            raise refuse(f"Label {label!r} may not contain '.' or NUL.")
        if len(label) > MAX_LABEL_LENGTH:
            raise refuse(f"Labels are at most {MAX_LABEL_LENGTH} characters.")
        _storable(label)
    return labels


Namespace = Annotated[
    tuple[Annotated[str, Field(max_length=MAX_LABEL_LENGTH, pattern=r"^[^.]*[^.\s][^.]*$")], ...],
    Field(max_length=MAX_LABELS), BeforeValidator(_labels)]


def _key(raw: Any) -> str:
    if not isinstance(raw, str) or not raw:
        raise refuse("Must be a non-empty string.")
    raw = nfc(raw)
    if len(raw) > MAX_KEY_LENGTH:
        raise refuse(f"At most {MAX_KEY_LENGTH} characters.")
    return _storable(raw)


Key = Annotated[str, Field(min_length=1, max_length=MAX_KEY_LENGTH), BeforeValidator(_key)]


def _value(raw: dict) -> dict:
    _storable(raw)
    size = len(json.dumps(raw, ensure_ascii=False).encode())
    if size > settings.STORE_VALUE_MAX_BYTES:
        raise refuse(f"Is {size} bytes as JSON; the limit is {settings.STORE_VALUE_MAX_BYTES}.")
    return raw


Value = Annotated[dict[str, Any], AfterValidator(_value)]


def _index(raw: Any):
    """None (the store's default fields), False (no vector), or field paths LangGraph can read."""
    if raw is None or raw is False:
        return raw
    if not isinstance(raw, list) or not raw:
        raise refuse("Must be false, null or a non-empty list of field paths.")
    if len(raw) > MAX_PATHS:
        raise refuse(f"At most {MAX_PATHS} paths.")
    for path in raw:
        if not isinstance(path, str) or not path or len(path) > MAX_PATH_LENGTH:
            raise refuse(f"Paths are non-empty strings of at most {MAX_PATH_LENGTH} characters.")
        _storable(path)
        if path != "$" and not tokenize_path(path):
            raise refuse(f"Cannot read path {path!r}.")
    return list(raw)


Index = Annotated[Any, pydantic.PlainValidator(_index), WithJsonSchema({"description": (
    'null: the default fields; false: no vector; or field paths such as ["text", "a.b", "arr[*].x"]')})]


def _filter(raw: dict) -> dict:
    """Top-level value keys to exact JSON values, or to {operator: operand} with LangGraph's operators;
    $gt/$gte/$lt/$lte compare numbers as numbers and strings as strings."""
    if len(raw) > MAX_FILTER_KEYS:
        raise refuse(f"At most {MAX_FILTER_KEYS} keys.")
    _storable(raw)
    for name, condition in raw.items():
        if isinstance(condition, dict) and any(k.startswith("$") for k in condition):
            for operator, operand in condition.items():
                if operator not in OPERATORS:
                    raise refuse(f"{name}: unknown operator {operator!r} (use one of {', '.join(OPERATORS)}).")
                if operator not in ("$eq", "$ne") and (
                        isinstance(operand, bool) or not isinstance(operand, int | float | str)):
                    raise refuse(f"{name}: {operator} compares numbers or strings.")
    return raw


Filter = Annotated[dict[str, Any], AfterValidator(_filter)]


def _number(raw: Any) -> Any:
    """An integer, also written as text ("10": a query string's, or a client's that sends text)."""
    if isinstance(raw, str):
        try:
            return int(raw)
        except ValueError:
            raise refuse("Must be an integer.") from None
    return raw


def _flag(raw: Any) -> Any:
    """true or false, also written as text ("true", "false", "1", "0": a query string's)."""
    if isinstance(raw, str) and raw.lower() in ("true", "false", "1", "0"):
        return raw.lower() in ("true", "1")
    return raw


def _at_most(setting: str):
    def check(number: int) -> int:
        if number > getattr(settings, setting):
            raise refuse(f"Must be between 1 and {getattr(settings, setting)}.")
        return number
    return AfterValidator(check)


Flag = Annotated[bool, BeforeValidator(_flag)]
Limit = Annotated[int, Field(ge=1), _at_most("STORE_SEARCH_MAX_LIMIT"), BeforeValidator(_number)]
Offset = Annotated[int, Field(ge=0, le=MAX_OFFSET), BeforeValidator(_number)]
Ttl = Annotated[float, Field(gt=0, le=MAX_TTL_MINUTES, description="Minutes; reads refresh it.")]
Threshold = Annotated[float, Field(ge=-1, le=1, description="Minimum cosine similarity (none by default).")]
Query = Annotated[str, Field(max_length=MAX_QUERY_CHARS), AfterValidator(_storable)]


# --- the operations -----------------------------------------------------------------------------------------------

class Get(Declared, title="StoreGet"):
    namespace: Namespace
    key: Key
    refresh_ttl: Flag | None = True


class Put(Declared, title="StorePut"):
    """An upsert of one item; a null value deletes it (nothing can be put in the empty namespace)."""

    namespace: Namespace
    key: Key
    value: Value | None = Field(default=None, description="null or none deletes the item.")
    index: Index = None
    ttl: Ttl | None = None

    @model_validator(mode="after")
    def _somewhere(self) -> Self:
        # deleting from the empty namespace is a no-op, as in LangGraph's stores; nothing can be put there
        if self.value is not None and not self.namespace:
            raise refuse("Must have at least one label.", "namespace")
        return self


class Delete(Declared, title="StoreDelete"):
    namespace: Namespace
    key: Key


class Search(Declared, title="StoreSearch"):
    namespace_prefix: Namespace = ()
    filter: Filter | None = None
    limit: Limit | None = 10
    offset: Offset | None = 0
    query: Query | None = Field(default=None, description="Empty or null: no ranking, the items in order "
                                                          "(LangGraph's stores).")
    refresh_ttl: Flag | None = True
    threshold: Threshold | None = None

    @pydantic.field_validator("query")
    @classmethod
    def _empty_lists(cls, query: str | None) -> str | None:
        return query or None  # an empty query lists, like LangGraph's stores


class MatchCondition(Declared, title="StoreMatchCondition"):
    match_type: Literal["prefix", "suffix"]
    path: Namespace


class ListNamespaces(Declared, title="StoreListNamespaces"):
    """Namespaces matching every condition ("*" matches any one label), at most max_depth labels deep."""

    prefix: Namespace | None = None
    suffix: Namespace | None = None
    match_conditions: list[MatchCondition] | None = Field(default=None, max_length=MAX_MATCH_CONDITIONS)
    max_depth: Annotated[int, Field(ge=1, le=MAX_LABELS), BeforeValidator(_number)] | None = None
    limit: Limit | None = 100
    offset: Offset | None = 0

    @property
    def conditions(self) -> tuple[tuple[str, tuple[str, ...]], ...]:
        """(match_type, path) pairs, the empty paths left out."""
        given = [("prefix", self.prefix), ("suffix", self.suffix)]
        given += [(c.match_type, c.path) for c in self.match_conditions or ()]
        return tuple((match_type, path) for match_type, path in given if path)


class Batch(Declared, title="StoreBatch"):
    """Several operations in one round trip, run in order in one transaction; results[i] answers ops[i]."""

    ops: list[Any] = Field(min_length=1, description='Each {"op": "get"|"put"|"delete"|"search"|'
                                                     '"list_namespaces", ...the fields of that body}.')


Op = Get | Put | Search | ListNamespaces
MODELS: dict[str, type[Declared]] = {"get": Get, "put": Put, "delete": Delete, "search": Search,
                                     "list_namespaces": ListNamespaces}


def parse(model: type[Declared], data: Any, where: str = "") -> Declared:
    """`data` checked by `model`; its "op" (a batch's tag) is not a field of any operation."""
    if isinstance(data, dict):
        data = {name: value for name, value in data.items() if name != "op"}
    return checked(model, data, where)


def put(data: Any) -> Put:
    """PUT /store/items: {namespace, key, value, index?, ttl?}; value null deletes (as in a batch)."""
    return parse(Put, data)


def delete(data: Any, where: str = "") -> Put:
    found = parse(Delete, data, where)
    return Put(namespace=found.namespace, key=found.key)


def get(data: Any) -> Get:
    return parse(Get, data)


def get_query(params) -> Get:
    """GET /store/items?namespace=a.b&key=k[&refresh_ttl=false]: the namespace dot-joined."""
    joined = params.get("namespace", "")
    return parse(Get, {**params.dict(), "namespace": joined.split(".") if joined else [], "key": params.get("key")})


def search(data: Any) -> Search:
    return parse(Search, data)


def list_namespaces(data: Any) -> ListNamespaces:
    return parse(ListNamespaces, data)


def batch(data: Any) -> list[Op]:
    """POST /store/batch: {"ops": [{"op": "get"|"put"|"delete"|"search"|"list_namespaces", ...the fields of
    that endpoint's body}]}. A bad op fails the whole batch, naming it: `ops[3].namespace`."""
    raw_ops = checked(Batch, data).ops
    if len(raw_ops) > settings.STORE_BATCH_MAX_OPS:
        raise ValidationError({"ops": [f"At most {settings.STORE_BATCH_MAX_OPS} operations per batch, "
                                       f"got {len(raw_ops)}."]})
    ops: list[Op] = []
    for index, raw in enumerate(raw_ops):
        where = f"ops[{index}]."
        if not isinstance(raw, dict) or raw.get("op") not in MODELS:
            raise ValidationError({f"{where}op": [f"Must be one of {', '.join(MODELS)}."]})
        ops.append(delete(raw, where) if raw["op"] == "delete" else parse(MODELS[raw["op"]], raw, where))
    return ops
