"""Serializer pieces every API shares. Serializers check shape only; rules live in services.

Strings are strict (a number where text belongs is a 400, not stored as "123") and JSON values must be storable
(no NUL, no lone surrogate anywhere inside: core.text), both for declared fields and for the fields
ModelSerializers build from models."""

import functools
import threading
import types
from collections.abc import Mapping

from django.db import models
from rest_framework import fields as drf_fields
from rest_framework import serializers
from rest_framework.relations import PrimaryKeyRelatedField

from core.parsers import loads
from core.text import check_storable
from core.times import unreadable


class CharField(serializers.CharField):
    """A string and only a string: DRF's own CharField turns 123 into "123". DRF already refuses NUL and lone
    surrogates in it."""

    default_error_messages = {"invalid": "Must be a string."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class DateTimeField(serializers.DateTimeField):
    """A moment the stack can read back (core.times: years 1 to 9999 in any time zone); DRF's own field takes a
    year-10000 moment written with a negative offset, which PostgreSQL stores and nothing can read."""

    def enforce_timezone(self, value):
        problem = unreadable(value)  # before DRF converts it (a conversion past year 9999 would overflow)
        if problem:
            raise serializers.ValidationError(problem)
        return super().enforce_timezone(value)


class JSONField(serializers.JSONField):
    """Free-form JSON the database can store: a NUL or a lone surrogate anywhere inside (keys too) is a 400. JSON
    text in a form field is read by the API's JSON reader (depth limit), and its null is refused like JSON's."""

    def to_internal_value(self, data):
        if not (self.binary or getattr(data, "is_json_string", False)):
            return super().to_internal_value(data)
        try:
            value = loads(data.decode() if isinstance(data, bytes) else data)
        except (TypeError, ValueError):
            self.fail("invalid")
        if value is None and not self.allow_null:
            self.fail("null")
        return value

    def get_validators(self):
        return [*super().get_validators(), check_storable]


class DictField(serializers.DictField):
    """A JSON object the database can store (see JSONField)."""

    def get_validators(self):
        return [*super().get_validators(), check_storable]


CHOICE_ERROR = '"{input}" is not a valid choice; choose one of: {choices}.'


class ChoiceField(serializers.ChoiceField):
    """A choice that names what it accepts when it refuses a value: `"csv" is not a valid choice; choose one of:
    auto, chatgpt, ...` (DRF's own message names only the bad value). Every API choice field is one, declared or
    made by a model serializer from a model's choices (StrictSerializer.serializer_choice_field)."""

    default_error_messages = {"invalid_choice": CHOICE_ERROR}

    def fail(self, key, **kwargs):
        if key == "invalid_choice":
            kwargs["choices"] = ", ".join(str(choice) for choice in self.choices)
        super().fail(key, **kwargs)


class StrictSerializer(serializers.Serializer):
    """Rejects fields it does not know, so a typo is a 400 that names it rather than silently ignored; the refusal
    names the required fields that are missing too (a bare message posted where `{"messages": [...]}` belongs
    hears of `messages`, not only that `role` and `content` are unknown). Model serializers that mix it in build
    strict text fields and storable JSON fields."""

    serializer_choice_field = ChoiceField
    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.CharField: CharField,
        models.TextField: CharField,
        models.JSONField: JSONField,
        models.DateTimeField: DateTimeField,
    }

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                errors = {name: ["Unknown field."] for name in unknown}
                if not self.partial:
                    for name, field in self.fields.items():
                        if field.required and not field.read_only and name not in data:
                            try:
                                field.fail("required")  # the field's own message, formatted as DRF does
                            except serializers.ValidationError as exc:
                                errors[name] = exc.detail
                raise serializers.ValidationError(errors)
        return super().to_internal_value(data)


def read_only_meta(base: type[serializers.ModelSerializer], *extra: str) -> type:
    """The Meta of a read-only answer showing `base`'s fields and `extra` ones the subclass declares: the one
    answer that carries a secret (a token's key, a webhook endpoint's signing key)."""
    fields = [*base.Meta.fields, *extra]
    return type("Meta", (base.Meta,), {"fields": fields, "read_only_fields": fields})


class OwnedPrimaryKeyField(serializers.PrimaryKeyRelatedField):
    """A related id that must belong to the requesting user; others' ids are reported as unknown."""

    def get_queryset(self):
        request = self.context.get("request")
        model = self.queryset.model
        if request is None:
            return model.objects.none()
        return model.objects.filter(owner=request.user)


_built = threading.local()
_CALLABLE = (types.FunctionType, types.MethodType, functools.partial)  # what DRF's get_attribute would call


class _Fallback(Exception):
    """An instance the compiled plan cannot read as DRF would: DRF's own loop represents it."""


def represent(serializer_class: type[serializers.Serializer], instance, *, many: bool = False):
    """`serializer_class(instance, many=many).data` with the serializer's fields built once per thread instead of
    once per response: building them (a model serializer's ~30 fields from the model, nested serializers
    deep-copied) cost more than representing a search's ten memories (0.55 of 1.2 ms). For read-side serializers
    whose representation depends on the instance only, never on the context (the one made here is empty); each
    thread has its own, so no two requests share one at a time.

    Each field is read by a plan compiled once (`_compile`): DRF's generic loop asks every field of every row
    how to find its value (source attributes, callables, primary-key-only relations, SkipField), which took more
    than half of a 20-memory list page's CPU."""
    cache = _built.__dict__.setdefault("serializers", {})
    plan = cache.get(serializer_class)
    if plan is None:
        plan = cache[serializer_class] = _compile(serializer_class(context={}))
    if many:
        return [plan(item) for item in instance]
    return plan(instance)


def _compile(serializer: serializers.Serializer):
    """A function giving `serializer.to_representation(instance)` the way DRF's loop does for the field kinds
    the API's read-side serializers use (plain fields of one source attribute, primary-key relations, method
    fields, nested serializers and lists of them); DRF's own loop for anything else, and for an instance the plan
    cannot read (a missing key or attribute, a callable value)."""
    if type(serializer).to_representation is not serializers.Serializer.to_representation:
        return serializer.to_representation  # a serializer that represents in its own way
    steps = []
    for field in serializer.fields.values():
        if field.write_only:
            continue  # what to_representation leaves out
        if isinstance(field, serializers.SerializerMethodField):
            steps.append((field.field_name, None, getattr(serializer, field.method_name)))
            continue
        if len(field.source_attrs) != 1 or type(field).get_attribute not in (
                drf_fields.Field.get_attribute, PrimaryKeyRelatedField.get_attribute):
            return serializer.to_representation
        source = field.source_attrs[0]
        if isinstance(field, PrimaryKeyRelatedField):
            if field.pk_field is not None or not field.use_pk_only_optimization():
                return serializer.to_representation
            # DRF represents it by instance.serializable_value(source): the key column, no query
            model = getattr(getattr(serializer, "Meta", None), "model", None)
            if model is None:
                return serializer.to_representation
            steps.append((field.field_name, model._meta.get_field(source).attname, None))
        elif isinstance(field, serializers.ListSerializer):
            child = _compile(field.child)
            steps.append((field.field_name, source, functools.partial(_each, child)))
        elif isinstance(field, serializers.BaseSerializer):
            steps.append((field.field_name, source, _compile(field)))
        else:
            steps.append((field.field_name, source, field.to_representation))
    generic = serializer.to_representation

    def plan(instance):
        try:
            return _run(steps, instance)
        except _Fallback:
            return generic(instance)

    return plan


def _each(child, items) -> list:
    if isinstance(items, models.Manager):  # a reverse relation, as ListSerializer reads it
        items = items.all()
    return [child(item) for item in items]


def _run(steps, instance) -> dict:
    mapping = isinstance(instance, Mapping)
    ret = {}
    for name, source, convert in steps:
        if source is None:  # a method field
            ret[name] = convert(instance)
            continue
        try:
            value = instance[source] if mapping else getattr(instance, source)
        except (KeyError, AttributeError):
            raise _Fallback from None  # DRF decides: a default, SkipField, or the error
        if isinstance(value, _CALLABLE):
            raise _Fallback
        ret[name] = None if value is None else (value if convert is None else convert(value))
    return ret
