"""Shapes of the memory API. Serializers check shape only; rules live in services."""

import datetime

from rest_framework import serializers

from core.serializers import CharField, ChoiceField, DateTimeField, DictField, OwnedPrimaryKeyField, StrictSerializer
from core.text import LABEL_MAX_CHARS, NAMESPACE_MAX_LABELS
from core.times import unreadable
from memories.models import Memory, Project


class ProjectSerializer(StrictSerializer, serializers.ModelSerializer):
    class Meta:
        model = Project
        fields = ["id", "name", "description", "created_at", "updated_at"]
        read_only_fields = ["id", "created_at", "updated_at"]
        validators = []  # uniqueness per owner is checked by the service, which knows the owner


class MemorySerializer(StrictSerializer, serializers.ModelSerializer):
    project = OwnedPrimaryKeyField(queryset=Project.objects.all(), required=False, allow_null=True)
    namespace = serializers.ListField(
        child=CharField(max_length=LABEL_MAX_CHARS, allow_blank=False), allow_empty=False, required=False,
        max_length=NAMESPACE_MAX_LABELS,
    )
    tags = serializers.ListField(child=CharField(max_length=100), required=False)
    importance = serializers.FloatField(min_value=0, max_value=1, required=False)
    confidence = serializers.FloatField(min_value=0, max_value=1, required=False)
    # JSON objects (readers call .get on them): {"source_ref": 5} is a 400, not a memory that breaks its context
    metadata = DictField(required=False, help_text="Free-form JSON object from the client.")
    entities = DictField(required=False, help_text='Named things mentioned, e.g. {"people": ["Emma"]}.')
    source_ref = DictField(required=False, help_text="Where it came from: conversation, message, document ids.")
    links = DictField(required=False, help_text="Related URLs, files and memories.")
    embedding_pending = serializers.SerializerMethodField()

    class Meta:
        model = Memory
        fields = [
            "id", "project", "agent_id", "namespace", "key", "content", "metadata", "tags", "entities", "category",
            "subject", "importance", "confidence", "source", "source_ref", "links", "version", "supersedes",
            "superseded_by", "is_active", "created_at", "updated_at", "accessed_at", "happened_at", "expires_at",
            "conversation", "message", "embedding_model", "embedding_pending", "value", "ttl_minutes", "indexed",
            "valid_from", "valid_to",
        ]
        # value, ttl_minutes and indexed are set through the LangGraph store API (/api/store/)
        read_only_fields = [
            "id", "version", "supersedes", "superseded_by", "is_active", "created_at", "updated_at", "accessed_at",
            "conversation", "message", "embedding_model", "value", "ttl_minutes", "indexed", "valid_to",
        ]
        extra_kwargs = {"key": {"required": False}}
        validators = []

    def get_embedding_pending(self, memory: Memory) -> bool:
        has_embedding = memory.__dict__.get("has_embedding")  # rows of for_display() leave the vector unread
        if has_embedding is None:
            has_embedding = memory.embedding is not None
        return memory.indexed and not has_embedding


class MemoryWriteSerializer(MemorySerializer):
    """A create or upsert: a memory plus the instructions that only apply while writing."""

    supersedes = serializers.UUIDField(
        required=False, allow_null=True, write_only=True, help_text="Id of the memory this replaces."
    )
    allow_duplicate = serializers.BooleanField(
        required=False, default=False, write_only=True,
        help_text="Store it even when a near-identical memory exists.",
    )
    duplicate = serializers.SerializerMethodField()

    class Meta(MemorySerializer.Meta):
        fields = [*MemorySerializer.Meta.fields, "allow_duplicate", "duplicate"]
        read_only_fields = [f for f in MemorySerializer.Meta.read_only_fields if f != "supersedes"]

    def get_duplicate(self, memory) -> bool:
        return bool(self.context.get("duplicate"))

    def to_representation(self, memory):
        data = super().to_representation(memory)
        data["supersedes"] = str(memory.supersedes_id) if memory.supersedes_id else None
        return data


class WrittenMemorySerializer(MemorySerializer):
    """What a create or upsert answers (for the schema): the memory, and whether it was a near-duplicate."""

    duplicate = serializers.BooleanField(help_text="True: nothing was stored; this is the near-identical memory.")

    class Meta(MemorySerializer.Meta):
        fields = [*MemorySerializer.Meta.fields, "duplicate"]


class AsOfField(DateTimeField):
    """A moment in valid time: an ISO datetime, or an ISO date (meaning the end of that day, UTC). A refusal says
    both (DRF's own lists only datetime formats)."""

    default_error_messages = {
        "invalid": "Must be a date (YYYY-MM-DD: the end of that day, UTC) or an ISO 8601 datetime "
                   "(YYYY-MM-DDThh:mm[:ss[.uuuuuu]][+HH:MM|-HH:MM|Z]).",
    }

    def to_internal_value(self, value):
        if isinstance(value, str) and len(value.strip()) == 10:
            try:
                day = datetime.date.fromisoformat(value.strip())
            except ValueError:
                pass
            else:
                moment = datetime.datetime.combine(day, datetime.time.max, tzinfo=datetime.UTC)
                if problem := unreadable(moment):  # checked here: the field's validators would not name it
                    raise serializers.ValidationError(problem)
                return moment
        return super().to_internal_value(value)


AS_OF_HELP = ("What was true then (valid time): an ISO date or datetime. Superseded memories that were current at "
              "that moment are included; memories that became true later are not.")


class FilterSerializer(StrictSerializer):
    """The filters shared by list (query string) and search (JSON body)."""

    project = serializers.IntegerField(required=False, allow_null=True, help_text=(
        "Scope: omitted or null -> user-scoped memories only; a project id -> user-scoped memories "
        "plus that project's."))
    all_projects = serializers.BooleanField(required=False, default=False,
                                            help_text="Ignore scope: memories of every project and none.")
    agent_id = CharField(required=False, max_length=200)
    namespace = serializers.ListField(child=CharField(max_length=LABEL_MAX_CHARS), required=False,
                                      max_length=NAMESPACE_MAX_LABELS,
                                      help_text="Namespace prefix, e.g. [\"memories\", \"profile\"].")
    tags = serializers.ListField(child=CharField(max_length=100), required=False)
    tags_mode = ChoiceField(choices=["any", "all"], required=False, default="any")
    category = CharField(required=False, max_length=100)
    subject = CharField(required=False, max_length=200)
    source = ChoiceField(choices=Memory.Source.choices, required=False)
    created_after = DateTimeField(required=False)
    created_before = DateTimeField(required=False)
    happened_after = DateTimeField(required=False)
    happened_before = DateTimeField(required=False)
    include_superseded = serializers.BooleanField(required=False, default=False)
    include_inactive = serializers.BooleanField(required=False, default=False)
    include_expired = serializers.BooleanField(required=False, default=False)
    as_of = AsOfField(required=False, help_text=AS_OF_HELP)


class SearchSerializer(FilterSerializer):
    query = CharField(max_length=4000, help_text="What to look for, in natural language.")
    mode = ChoiceField(choices=["semantic", "keyword", "hybrid"], default="hybrid")
    threshold = serializers.FloatField(required=False, allow_null=True, min_value=0, max_value=1,
                                       help_text="Minimum cosine similarity (semantic: default 0.2).")
    limit = serializers.IntegerField(required=False, default=20, min_value=1, max_value=100)
    ranking = CharField(required=False, allow_null=True, max_length=50)
    include_chunks = serializers.BooleanField(required=False, default=False, help_text=(
        "Also return document chunks for the same query, mode, limit and scope."))
    include_messages = serializers.BooleanField(required=False, default=False, help_text=(
        "Also return conversation messages (what was said) for the same query, mode, limit and scope."))


class ScoredMemorySerializer(serializers.Serializer):
    memory = MemorySerializer()
    score = serializers.FloatField()
    parts = DictField(child=serializers.FloatField())


class SearchResponseSerializer(serializers.Serializer):
    mode = CharField()
    ranking = CharField()
    degraded = serializers.BooleanField()
    results = ScoredMemorySerializer(many=True)


class BatchSerializer(StrictSerializer):
    items = serializers.ListField(child=DictField(), allow_empty=False, max_length=1000)


class BatchRequestSerializer(StrictSerializer):
    """The batch body as the schema shows it: each item is checked as a create (the view does it item by item)."""

    items = MemoryWriteSerializer(many=True, allow_empty=False, max_length=1000)


class BatchResultSerializer(serializers.Serializer):
    """One line per item, in order: what happened and to which memory (fetch it for the full record)."""

    outcome = ChoiceField(choices=["created", "updated", "duplicate"])
    id = serializers.UUIDField(source="memory.pk")
    key = CharField(source="memory.key")
    version = serializers.IntegerField(source="memory.version")


class RevertSerializer(StrictSerializer):
    history_id = serializers.IntegerField(required=False, min_value=1)
    version = serializers.IntegerField(required=False, min_value=1)
    reason = CharField(required=False, max_length=500, allow_blank=True)

    def validate(self, attrs):
        if ("history_id" in attrs) == ("version" in attrs):
            raise serializers.ValidationError({"non_field_errors": ["Give exactly one of history_id or version."]})
        return attrs


class HistoryEntrySerializer(serializers.Serializer):
    history_id = serializers.IntegerField()
    version = serializers.IntegerField()
    action = CharField()
    actor = CharField(allow_null=True)
    at = DateTimeField()
    reason = CharField(allow_null=True)
    changed_fields = serializers.ListField(child=CharField())
    content = CharField()
    is_active = serializers.BooleanField()
