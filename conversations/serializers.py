from rest_framework import serializers

from conversations.models import Conversation, Message
from conversations.tools import TOOL_NAMES
from memories.models import Project
from memories.serializers import OwnedPrimaryKeyField, StrictSerializer


class ConversationSerializer(StrictSerializer, serializers.ModelSerializer):
    project = OwnedPrimaryKeyField(queryset=Project.objects.all(), required=False, allow_null=True)
    message_count = serializers.IntegerField(read_only=True, required=False)
    metadata = serializers.DictField(required=False, help_text="Free-form JSON object.")

    class Meta:
        model = Conversation
        fields = ["id", "title", "agent_id", "project", "status", "summary", "metadata", "created_at", "updated_at",
                  "ended_at", "message_count"]
        read_only_fields = ["id", "created_at", "updated_at", "ended_at"]


class MessageSerializer(serializers.ModelSerializer):
    memories = serializers.SerializerMethodField()

    class Meta:
        model = Message
        fields = ["id", "sequence", "role", "content", "client_message_id", "metadata", "extraction_status",
                  "extraction_error", "created_at", "memories"]

    def get_memories(self, message) -> list[str]:
        """Ids of the memories this message produced."""
        return [str(pk) for pk in message.memories.values_list("pk", flat=True)]


class MessageInSerializer(StrictSerializer):
    role = serializers.ChoiceField(choices=Message.Role.choices)
    content = serializers.CharField(max_length=100_000)
    client_message_id = serializers.CharField(max_length=200, required=False, allow_blank=True)
    metadata = serializers.DictField(required=False)


class AppendSerializer(StrictSerializer):
    messages = MessageInSerializer(many=True, allow_empty=False, max_length=500)


class ContextQuerySerializer(StrictSerializer):
    query = serializers.CharField(required=False, max_length=4000)
    budget = serializers.IntegerField(required=False, min_value=16, max_value=32000)
    limit = serializers.IntegerField(required=False, min_value=1, max_value=100, default=20)
    format = serializers.CharField(required=False)


class ToolCallSerializer(StrictSerializer):
    name = serializers.ChoiceField(choices=TOOL_NAMES)
    arguments = serializers.JSONField(help_text="The model's arguments: a JSON object or its JSON string.")
