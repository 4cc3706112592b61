"""Shapes of the profile, reminder and consolidation API (shape checks only; the services decide the rest)."""

from rest_framework import serializers

from core.serializers import CharField, ChoiceField, StrictSerializer
from profiles.models import ConsolidationRun, ProfileEntry, Reminder, Section, UserSettings


class ScopeQuerySerializer(StrictSerializer):
    """?project=<id> (default: the user-scoped profile) and ?budget=<tokens>."""

    project = serializers.IntegerField(required=False, min_value=1)
    budget = serializers.IntegerField(required=False, min_value=16, max_value=4000)


class ProfileEntrySerializer(serializers.ModelSerializer):
    section_title = serializers.SerializerMethodField()

    class Meta:
        model = ProfileEntry
        fields = ["id", "section", "section_title", "key", "text", "origin", "memory_ids", "evidence_count",
                  "last_confirmed", "importance", "user_edited", "hidden", "pinned", "current", "updated_at"]
        read_only_fields = fields

    def get_section_title(self, entry) -> str:
        return Section(entry.section).label


class EntryUpdateSerializer(StrictSerializer):
    text = CharField(required=False, max_length=2000)
    section = ChoiceField(choices=Section.choices, required=False)
    pinned = serializers.BooleanField(required=False)
    hidden = serializers.BooleanField(required=False, help_text="True: deleted by the user (rebuilds keep it out).")
    user_edited = serializers.BooleanField(required=False, help_text="False: hand the entry back to the memories.")


class EntryCreateSerializer(StrictSerializer):
    text = CharField(max_length=2000)
    section = ChoiceField(choices=Section.choices)
    project = serializers.IntegerField(required=False, min_value=1)


class SettingsSerializer(StrictSerializer, serializers.ModelSerializer):
    class Meta:
        model = UserSettings
        fields = ["time_zone", "profile_budget"]


class ReminderSerializer(serializers.ModelSerializer):
    content = serializers.CharField(source="memory.content", read_only=True)
    overdue = serializers.SerializerMethodField()

    class Meta:
        model = Reminder
        fields = ["id", "task", "content", "due_at", "status", "overdue", "closed_at", "closed_reason", "memory",
                  "source_message_id", "created_at"]
        read_only_fields = fields

    def get_overdue(self, reminder) -> bool:
        from django.utils import timezone

        return reminder.status == Reminder.Status.OPEN and reminder.due_at is not None and \
            reminder.due_at < timezone.now()


class ReminderQuerySerializer(StrictSerializer):
    due_before = serializers.DateTimeField(required=False)
    status = ChoiceField(choices=[*Reminder.Status.values, "all"], required=False, default="open")
    page = serializers.IntegerField(required=False, min_value=1)
    page_size = serializers.IntegerField(required=False, min_value=1, max_value=200)


class ReminderCreateSerializer(StrictSerializer):
    text = CharField(max_length=1000, help_text="What to be reminded of, with its time: 'call mom on Friday at 5pm'.")


class ReminderUpdateSerializer(StrictSerializer):
    status = ChoiceField(choices=Reminder.Status.choices)
    reason = CharField(required=False, max_length=500)


class ConsolidationRunSerializer(serializers.ModelSerializer):
    class Meta:
        model = ConsolidationRun
        fields = ["id", "trigger", "status", "started_at", "finished_at", "seconds", "memories_seen", "changes",
                  "error"]
        read_only_fields = fields


class ConsolidationRevertSerializer(StrictSerializer):
    change = serializers.IntegerField(required=False, min_value=0, help_text="The change's index; omit for all.")
