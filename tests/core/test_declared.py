"""Inputs declared as pydantic models (core.declared): refusals are {field: [messages]} in the API's words, a null
for a nullable field with a default means the default, and the schema is OpenAPI 3.0's."""

from typing import Annotated

import pytest
from django.core.exceptions import ValidationError
from pydantic import AfterValidator, Field

from core.declared import Declared, checked, openapi30, refuse


def _even(number: int) -> int:
    if number % 2:
        raise refuse("Must be even.")
    return number


class Inner(Declared):
    name: str


class Body(Declared):
    count: Annotated[int, Field(ge=1), AfterValidator(_even)] | None = 2
    ratio: Annotated[float, Field(gt=0, le=1)] | None = None
    inner: Inner | None = None


def refusal(data) -> dict:
    with pytest.raises(ValidationError) as caught:
        checked(Body, data, "ops[1].")
    return caught.value.message_dict


def test_each_bad_field_is_named_with_its_message():
    assert refusal({"count": 0, "ratio": "0.5", "typo": 1}) == {
        "ops[1].count": ["Must be at least 1."], "ops[1].ratio": ["Must be a number or null."],
        "ops[1].typo": ["Unknown field."]}
    assert refusal({"count": 3}) == {"ops[1].count": ["Must be even."]}
    assert refusal({"count": True}) == {"ops[1].count": ["Must be an integer."]}  # strict: no 1 for true
    assert refusal({"inner": {"name": 5}}) == {"ops[1].inner": ["Must be a string or null."]}
    assert refusal([1]) == {"ops[1].body": ["Must be a JSON object."]}


def test_null_means_the_default_of_a_nullable_field():
    assert checked(Body, {"count": None, "ratio": None}) == Body(count=2, ratio=None)


def test_the_schema_is_openapi_30():
    schema = openapi30(Body.model_json_schema(ref_template="#/components/schemas/{model}"))
    assert schema["properties"]["count"] == {"type": "integer", "minimum": 1, "default": 2, "nullable": True}
    assert schema["properties"]["ratio"] == {"type": "number", "minimum": 0, "exclusiveMinimum": True,
                                             "maximum": 1, "default": None, "nullable": True}
    assert schema["properties"]["inner"] == {"allOf": [{"$ref": "#/components/schemas/Inner"}], "default": None,
                                             "nullable": True}
    assert schema["additionalProperties"] is False and "title" not in schema
