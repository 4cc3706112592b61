"""Admin for conversations and their messages. Staff pages bypass row-level security (core.rls)."""

from django.contrib import admin
from django.utils.text import Truncator

from conversations.models import Conversation, Message
from core.admin import ReadOnlyTabularInline, SearchById


class MessageInline(ReadOnlyTabularInline):
    """The thread, read-only: messages come from the API, in order."""

    model = Message
    fields = ("sequence", "role", "short_content", "extraction_status", "created_at")
    readonly_fields = fields
    ordering = ("sequence",)

    @admin.display(description="content")
    def short_content(self, obj: Message) -> str:
        return Truncator(obj.content).chars(120)


@admin.register(Conversation)
class ConversationAdmin(SearchById, admin.ModelAdmin):
    list_display = ("__str__", "owner", "project", "agent_id", "status", "created_at", "ended_at")
    list_select_related = ("owner", "project")
    list_filter = ("status", ("owner", admin.RelatedOnlyFieldListFilter), ("project", admin.RelatedOnlyFieldListFilter))
    search_fields = ("title", "summary", "agent_id")
    date_hierarchy = "created_at"
    autocomplete_fields = ("owner", "project")
    readonly_fields = ("id", "created_at", "updated_at")
    inlines = (MessageInline,)


@admin.register(Message)
class MessageAdmin(SearchById, admin.ModelAdmin):
    list_display = ("short_content", "role", "conversation", "sequence", "owner", "extraction_status", "created_at")
    list_select_related = ("conversation", "owner")
    list_filter = ("role", "extraction_status", ("owner", admin.RelatedOnlyFieldListFilter))
    search_fields = ("content", "client_message_id")
    date_hierarchy = "created_at"
    raw_id_fields = ("conversation",)
    readonly_fields = ("id", "owner", "created_at")
    fields = (
        "id", "conversation", "owner", "sequence", "role", "content", "client_message_id", "metadata",
        "extraction_status", "extraction_error", "created_at",
    )

    @admin.display(description="content", ordering="content")
    def short_content(self, obj: Message) -> str:
        return Truncator(obj.content).chars(80)

    def save_model(self, request, obj, form, change):
        obj.owner_id = obj.conversation.owner_id  # a message always belongs to its conversation's owner
        super().save_model(request, obj, form, change)
