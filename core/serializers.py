"""Serializer pieces every API shares. Serializers check shape only; rules live in services.

Strings are strict (a number where text belongs is a 400, not stored as "123") and JSON values must be storable
(no NUL, no lone surrogate anywhere inside: core.text), both for declared fields and for the fields
ModelSerializers build from models."""

import threading

from django.db import models
from rest_framework import serializers

from core.parsers import loads
from core.text import check_storable


class CharField(serializers.CharField):
    """A string and only a string: DRF's own CharField turns 123 into "123". DRF already refuses NUL and lone
    surrogates in it."""

    default_error_messages = {"invalid": "Must be a string."}

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


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


class StrictSerializer(serializers.Serializer):
    """Rejects fields it does not know, so a typo is a 400 that names it rather than silently ignored. Model
    serializers that mix it in build strict text fields and storable JSON fields."""

    serializer_field_mapping = {
        **serializers.ModelSerializer.serializer_field_mapping,
        models.CharField: CharField,
        models.TextField: CharField,
        models.JSONField: JSONField,
    }

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


class OwnedPrimaryKeyField(serializers.PrimaryKeyRelatedField):
    """A related id that must belong to the requesting user; others' ids are reported as unknown."""

    def get_queryset(self):
        request = self.context.get("request")
        model = self.queryset.model
        if request is None:
            return model.objects.none()
        return model.objects.filter(owner=request.user)


_built = threading.local()


def represent(serializer_class: type[serializers.Serializer], instance, *, many: bool = False):
    """`serializer_class(instance, many=many).data` with the serializer's fields built once per thread instead of
    once per response: building them (a model serializer's ~30 fields from the model, nested serializers
    deep-copied) cost more than representing a search's ten memories (0.55 of 1.2 ms). For read-side serializers
    whose representation depends on the instance only, never on the context (the one made here is empty); each
    thread has its own, so no two requests share one at a time."""
    cache = _built.__dict__.setdefault("serializers", {})
    serializer = cache.get(serializer_class)
    if serializer is None:
        serializer = cache[serializer_class] = serializer_class(context={})
    if many:
        return [serializer.to_representation(item) for item in instance]
    return serializer.to_representation(instance)
