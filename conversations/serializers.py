from django.conf import settings
from rest_framework import serializers

from conversations.models import Conversation, Message
from conversations.tools import TOOL_NAMES
from core.serializers import CharField, ChoiceField, DateTimeField, DictField, OwnedPrimaryKeyField, StrictSerializer
from memories.models import Project
from memories.serializers import AsOfField


class ConversationSerializer(StrictSerializer, serializers.ModelSerializer):
    project = OwnedPrimaryKeyField(queryset=Project.objects.all(), required=False, allow_null=True)
    message_count = serializers.IntegerField(read_only=True, required=False)
    metadata = DictField(required=False, help_text="Free-form JSON object.")

    class Meta:
        model = Conversation
        fields = ["id", "title", "agent_id", "project", "status", "summary", "metadata", "created_at", "updated_at",
                  "ended_at", "message_count"]
        read_only_fields = ["id", "created_at", "updated_at", "ended_at"]


class MessageSerializer(serializers.ModelSerializer):
    memories = serializers.SerializerMethodField()
    embedded = serializers.SerializerMethodField()

    class Meta:
        model = Message
        fields = ["id", "conversation", "sequence", "role", "name", "content", "sent_at", "client_message_id",
                  "metadata", "extraction_status", "extraction_error", "embedded", "created_at", "memories"]

    def get_embedded(self, message) -> bool:
        """Searchable by meaning yet (words are searchable at once)."""
        return message.embedding is not None

    def get_memories(self, message) -> list[str]:
        """Ids of the memories this message produced (`with_memory_ids` looks up a page's in one query)."""
        if "memory_ids" in message.__dict__:
            return message.memory_ids
        return [str(pk) for pk in message.memories.values_list("pk", flat=True)]


def with_memory_ids(messages: list[Message]) -> list[Message]:
    """`messages` with the ids of the memories each produced, for MessageSerializer: one query for all of them
    rather than one per message (a page of 50 messages made 50)."""
    from memories.models import Memory

    found: dict = {}
    if messages:
        ids = [m.pk for m in messages]
        for message_id, pk in Memory.objects.filter(message_id__in=ids).values_list("message_id", "pk"):
            found.setdefault(message_id, []).append(str(pk))  # in Memory's own order (newest first), as before
    for message in messages:
        message.memory_ids = found.get(message.pk, [])
    return messages


class MessageInSerializer(StrictSerializer):
    role = ChoiceField(choices=Message.Role.choices)
    name = CharField(max_length=200, required=False, allow_blank=True,
                                 help_text="The speaker's name (shown in context instead of the role).")
    content = CharField(max_length=settings.MESSAGE_MAX_CHARS)
    sent_at = DateTimeField(required=False, help_text=(
        "When it was said (ISO 8601), for history imported from elsewhere; default: now. Orders the "
        "conversation and dates what is extracted from it."))
    client_message_id = CharField(max_length=200, required=False, allow_blank=True)
    metadata = DictField(required=False)


class AppendSerializer(StrictSerializer):
    messages = MessageInSerializer(many=True, allow_empty=False, max_length=500, error_messages={
        # DRF formats its messages: braces doubled
        "required": 'This field is required: a list of messages, e.g. {{"messages": [{{"role": "user", "content": '
                    '"Hi"}}]}}.'})


class ContextQuerySerializer(StrictSerializer):
    query = CharField(required=False, max_length=4000)
    budget = serializers.IntegerField(required=False, min_value=16, max_value=32000)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=100, default=20)
    stay = serializers.BooleanField(required=False, default=False, help_text=(
        "Excerpts from this conversation only (default: from all of the user's conversations in scope)."))
    as_of = AsOfField(required=False, help_text=(
        "What was true then (valid time): an ISO date (its end, UTC) or datetime. Memories valid at that moment, "
        "superseded since or not (those no longer true marked so), and excerpts of what had been said by then."))
    format = CharField(required=False)


class ScoredMessageSerializer(serializers.Serializer):
    message = MessageSerializer()
    score = serializers.FloatField()
    parts = DictField(child=serializers.FloatField())


class ContextItemSerializer(serializers.Serializer):
    type = ChoiceField(choices=["profile", "memory", "excerpt"])
    text = CharField(help_text="What the model reads for this item.")
    score = serializers.FloatField()
    tokens = serializers.IntegerField()
    source = DictField(help_text=(
        "Where it came from: the profile's supporting memory ids; a memory's id, the conversation/message or "
        "document it was extracted from and its valid time (valid_from, valid_to: null while true); an excerpt's "
        "conversation, its messages in order and which of them matched, and when it was said."))


class ContextSerializer(serializers.Serializer):
    query = CharField()
    budget = serializers.IntegerField()
    as_of = DateTimeField(allow_null=True, help_text="The moment asked about, if any.")
    past = serializers.BooleanField(help_text=(
        "Superseded memories were let in, marked as no longer true: the query asked about the past or a change, "
        "or `as_of` was given."))
    used_tokens = serializers.IntegerField()
    degraded = serializers.BooleanField()
    text = CharField()
    items = ContextItemSerializer(many=True)
    memories = serializers.ListField(child=DictField(), help_text="The memories in the context.")
    scores = serializers.ListField(child=serializers.FloatField(), help_text="Their scores, in the same order.")


class ToolCallSerializer(StrictSerializer):
    name = ChoiceField(choices=TOOL_NAMES)
    arguments = serializers.JSONField(help_text="The model's arguments: a JSON object or its JSON string.")
