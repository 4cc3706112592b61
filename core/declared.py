"""Inputs declared once as pydantic models: the model checks a request body and gives the OpenAPI schema its
component. `Declared` is the base (strict JSON types, unknown fields refused); `checked` turns a model's refusals
into the API's 400 naming each field (`{"limit": ["Must be at least 1."]}`), as DRF serializers do; `DeclaredBody`
puts the models in the schema as OpenAPI 3.0 reads them."""

from typing import Any, TypeVar, get_args

import pydantic
from django.core.exceptions import ValidationError
from drf_spectacular.extensions import OpenApiSerializerExtension
from drf_spectacular.plumbing import ResolvedComponent
from pydantic_core import PydanticCustomError

M = TypeVar("M", bound=pydantic.BaseModel)


def refuse(message: str, field: str | None = None) -> PydanticCustomError:
    """A refusal in our words, raised by a validator; `field` names it when the validator checks a whole model."""
    return PydanticCustomError("declared", message, {"field": field} if field else None)


class Declared(pydantic.BaseModel):
    """Strict JSON types (no "5" for a number, no 1 for true), unknown fields refused, frozen once checked; a
    null for a nullable field that has a default means that default (as LangGraph's clients send it)."""

    model_config = pydantic.ConfigDict(extra="forbid", strict=True, frozen=True, allow_inf_nan=False)

    @pydantic.model_validator(mode="before")
    @classmethod
    def _null_means_the_default(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            raise refuse("Must be a JSON object.")
        defaulted = {name for name, field in cls.model_fields.items() if field.default is not None
                     and not field.is_required() and type(None) in get_args(field.annotation)}
        return {name: value for name, value in data.items() if value is not None or name not in defaulted}


_WORDS = {  # pydantic's own refusals in the API's words ({...}: the error's context)
    "missing": "This field is required.",
    "extra_forbidden": "Unknown field.",
    "dict_type": "Must be a JSON object.",
    "model_type": "Must be a JSON object.",
    "list_type": "Must be a list.",
    "string_type": "Must be a string or null.",
    "int_type": "Must be an integer.",
    "bool_type": "Must be true or false.",
    "float_type": "Must be a number or null.",
    "finite_number": "Must be a finite number.",
    "literal_error": "Must be {expected}.",
    "greater_than": "Must be more than {gt}.",
    "greater_than_equal": "Must be at least {ge}.",
    "less_than_equal": "Must be at most {le}.",
    "string_too_long": "At most {max_length} characters.",
    "too_long": "At most {max_length} items.",
    "too_short": "Must have at least {min_length} item(s).",
}


def refusals(exc: pydantic.ValidationError, where: str = "") -> dict[str, list[str]]:
    """{field: [messages]}: the top-level field each error is under (`where` before it), or for an error of the
    whole model the field its context names ("body" when none)."""
    named: dict[str, list[str]] = {}
    for error in exc.errors(include_url=False):
        context = error.get("ctx") or {}
        field = str(error["loc"][0]) if error["loc"] else context.get("field") or "body"
        words = _WORDS.get(error["type"])
        numbers = {name: f"{value:g}" if isinstance(value, float) else value for name, value in context.items()}
        message = words.format(**numbers) if words else error["msg"]
        named.setdefault(f"{where}{field}", []).append(message)
    return named


def checked(model: type[M], data: Any, where: str = "") -> M:
    """`data` checked by `model`, or a ValidationError naming each bad field (a 400)."""
    try:
        return model.model_validate(data)
    except pydantic.ValidationError as exc:
        raise ValidationError(refusals(exc, where)) from None


class DeclaredBody(OpenApiSerializerExtension):
    """A declared model in the schema, named by its `title` (config) or class name. pydantic writes JSON Schema
    2020-12 (null as a type, numeric exclusive bounds): said here as OpenAPI 3.0 says it."""

    target_class = "pydantic.BaseModel"
    match_subclasses = True
    priority = 1  # before drf-spectacular's own pydantic extension, which leaves the schema as pydantic wrote it

    def get_name(self, auto_schema, direction):
        return self.target.model_config.get("title") or self.target.__name__

    def map_serializer(self, auto_schema, direction):
        schema = self.target.model_json_schema(ref_template="#/components/schemas/{model}")
        for name, sub_schema in schema.pop("$defs", {}).items():
            auto_schema.registry.register_on_missing(ResolvedComponent(
                name=name, type=ResolvedComponent.SCHEMA, object=name, schema=openapi30(sub_schema)))
        return openapi30(schema)


def openapi30(node):
    """A JSON Schema 2020-12 node as OpenAPI 3.0's schema objects say it."""
    if isinstance(node, list):
        return [openapi30(item) for item in node]
    if not isinstance(node, dict):
        return node
    node = {name: openapi30(value) for name, value in node.items()}
    if {"type": "null"} in node.get("anyOf", ()):
        rest = [option for option in node.pop("anyOf") if option != {"type": "null"}]
        if len(rest) == 1:
            node = {**({"allOf": rest} if "$ref" in rest[0] else rest[0]), **node, "nullable": True}
        else:
            node.update(anyOf=rest, nullable=True)
    for exclusive, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
        if type(node.get(exclusive)) in (int, float):
            node[bound], node[exclusive] = node[exclusive], True
    if isinstance(node.get("title"), str):  # pydantic titles every property after its name
        del node["title"]
    return node
