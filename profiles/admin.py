"""Admin for profiles, reminders and consolidation runs (with their history). Staff pages bypass row-level
security (core.rls)."""

import json

from django.contrib import admin
from django.utils.html import format_html_join
from simple_history.admin import SimpleHistoryAdmin

from profiles.models import ConsolidationRun, Profile, ProfileEntry, Reminder, UserSettings


@admin.register(ProfileEntry)
class ProfileEntryAdmin(SimpleHistoryAdmin):
    list_display = ("text", "section", "owner", "evidence_count", "last_confirmed", "user_edited", "hidden",
                    "pinned", "current")
    list_select_related = ("owner",)
    list_filter = ("section", "origin", "user_edited", "hidden", "pinned", "current")
    search_fields = ("text", "key")
    readonly_fields = ("owner", "profile", "key", "memory_ids", "evidence_count", "last_confirmed", "updated_at")


@admin.register(Profile)
class ProfileAdmin(admin.ModelAdmin):
    list_display = ("__str__", "owner", "project", "built_at")
    list_select_related = ("owner", "project")
    readonly_fields = ("owner", "project", "built_at", "built_stamp")


@admin.register(Reminder)
class ReminderAdmin(SimpleHistoryAdmin):
    list_display = ("task", "owner", "due_at", "status", "closed_at")
    list_select_related = ("owner",)
    list_filter = ("status",)
    search_fields = ("task", "closed_reason")
    date_hierarchy = "due_at"
    raw_id_fields = ("memory",)
    readonly_fields = ("owner", "source_message_id", "said_at", "created_at")


@admin.register(UserSettings)
class UserSettingsAdmin(admin.ModelAdmin):
    list_display = ("owner", "time_zone", "profile_budget")
    list_select_related = ("owner",)


@admin.register(ConsolidationRun)
class ConsolidationRunAdmin(admin.ModelAdmin):
    """What each run did, read-only: runs are started by the sweep or the user, and undone from the panel/API."""

    list_display = ("__str__", "owner", "trigger", "status", "started_at", "seconds", "memories_seen", "merged",
                    "retired")
    list_select_related = ("owner",)
    list_filter = ("status", "trigger")
    date_hierarchy = "started_at"
    exclude = ("changes",)
    readonly_fields = ("owner", "trigger", "status", "started_at", "finished_at", "seconds", "memories_seen",
                       "cursor", "high_water", "error", "changes_list")

    def has_add_permission(self, request):
        return False

    @admin.display(description="merged")
    def merged(self, run: ConsolidationRun) -> int:
        return sum(1 for c in run.changes if c.get("action") == "merge")

    @admin.display(description="retired")
    def retired(self, run: ConsolidationRun) -> int:
        return sum(1 for c in run.changes if c.get("action") == "retire")

    @admin.display(description="changes")
    def changes_list(self, run: ConsolidationRun):
        return format_html_join("", "<p><b>{}</b> {} — {}{}</p>", (
            (c.get("action"), c.get("memory", ""), c.get("reason", ""),
             " (reverted)" if c.get("reverted_at") else "") for c in run.changes)) or json.dumps(run.changes)
