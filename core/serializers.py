"""Serializer pieces every API shares. Serializers check shape only; rules live in services."""

from rest_framework import serializers


class StrictSerializer(serializers.Serializer):
    """Rejects fields it does not know, so a typo is a 400 that names it rather than silently ignored."""

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
