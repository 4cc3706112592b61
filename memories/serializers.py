"""Shapes of the memory API. Serializers check shape only; rules live in services."""

from rest_framework import serializers

from memories.models import Memory, Project


class StrictSerializer(serializers.Serializer):
    """Rejects fields it does not know, so a typo is a 400 that names it rather than silently ignored."""

    def to_internal_value(self, data):
        if isinstance(data, dict):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError({name: ["Unknown field."] for name in unknown})
        return super().to_internal_value(data)


class ProjectSerializer(StrictSerializer, serializers.ModelSerializer):
    class Meta:
        model = Project
        fields = ["id", "name", "description", "created_at", "updated_at"]
        read_only_fields = ["id", "created_at", "updated_at"]
        validators = []  # uniqueness per owner is checked by the service, which knows the owner


class OwnedPrimaryKeyField(serializers.PrimaryKeyRelatedField):
    """A related id that must belong to the requesting user; others' ids are reported as unknown."""

    def get_queryset(self):
        request = self.context.get("request")
        model = self.queryset.model
        if request is None:
            return model.objects.none()
        return model.objects.filter(owner=request.user)


class MemorySerializer(StrictSerializer, serializers.ModelSerializer):
    project = OwnedPrimaryKeyField(queryset=Project.objects.all(), required=False, allow_null=True)
    namespace = serializers.ListField(
        child=serializers.CharField(max_length=200, allow_blank=False), allow_empty=False, required=False
    )
    tags = serializers.ListField(child=serializers.CharField(max_length=100), required=False)
    importance = serializers.FloatField(min_value=0, max_value=1, required=False)
    confidence = serializers.FloatField(min_value=0, max_value=1, required=False)
    embedding_pending = serializers.SerializerMethodField()

    class Meta:
        model = Memory
        fields = [
            "id", "project", "agent_id", "namespace", "key", "content", "metadata", "tags", "entities", "category",
            "subject", "importance", "confidence", "source", "source_ref", "links", "version", "supersedes",
            "superseded_by", "is_active", "created_at", "updated_at", "accessed_at", "happened_at", "expires_at",
            "conversation", "message", "embedding_model", "embedding_pending",
        ]
        read_only_fields = [
            "id", "version", "supersedes", "superseded_by", "is_active", "created_at", "updated_at", "accessed_at",
            "conversation", "message", "embedding_model",
        ]
        extra_kwargs = {"key": {"required": False}}
        validators = []

    def get_embedding_pending(self, memory: Memory) -> bool:
        return memory.embedding is None
