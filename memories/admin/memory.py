"""Memories in the admin: list with filters and full-text search, change and history pages (revert from the
history page), bulk actions; every write through `memories.services`."""

import uuid

from django.conf import settings
from django.contrib import admin, messages
from django.contrib.postgres.search import SearchQuery
from django.core.exceptions import ValidationError
from django.db.models import Q
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator
from django.utils.translation import ngettext
from simple_history.admin import SimpleHistoryAdmin

from core.admin import ReadableChanges, VectorsHidden
from integrations import embeddings
from memories import batch, services
from memories.admin.forms import MemoryAdminForm
from memories.admin.lists import SupersededListFilter, TagListFilter
from memories.models import HistoryAction, Memory
from memories.versions import BOOKKEEPING_FIELDS

ADMIN_REASON = "edited in admin"


def preview(text: str, chars: int = 80) -> str:
    return Truncator(text).chars(chars)


def count_memories(count: int) -> str:
    return ngettext("%(count)d memory", "%(count)d memories", count) % {"count": count}


@admin.register(Memory)
class MemoryAdmin(VectorsHidden, SimpleHistoryAdmin):
    form = MemoryAdminForm
    list_display = (
        "short_content", "owner", "project", "category", "source", "tags", "is_active", "is_superseded", "valid_from",
        "valid_to", "version", "embedding_status", "updated_at",
    )
    list_display_links = ("short_content",)
    list_select_related = ("owner", "project")
    list_filter = (
        ("owner", admin.RelatedOnlyFieldListFilter),
        ("project", admin.RelatedOnlyFieldListFilter),
        "source",
        "category",
        TagListFilter,
        "is_active",
        SupersededListFilter,
    )
    search_fields = ("content",)  # shows the search box; the search itself is `get_search_results`
    search_help_text = "Full-text search of subject and content (web syntax: \"exact phrase\", or, -word), or an id."
    date_hierarchy = "created_at"
    list_per_page = 50
    autocomplete_fields = ("owner", "project")
    raw_id_fields = ("conversation", "message")
    actions = ("soft_delete_selected", "restore_selected", "reembed_selected")
    history_list_display = ("history_action", "version", "is_active")
    exclude = ("embedding", "search_vector", "embedding_model")

    add_fieldsets = (
        (None, {"fields": ("owner", "project", "agent_id", "namespace", "key", "content")}),
        ("Classification", {"fields": ("subject", "category", "tags", "importance", "confidence", "source")}),
        ("Details", {"classes": ("collapse",), "fields": (
            "metadata", "entities", "links", "source_ref", "happened_at", "valid_from", "expires_at", "conversation",
            "message",
        )}),
    )
    change_fieldsets = (
        (None, {"fields": ("id", "owner", "project", "agent_id", "namespace", "key", "content")}),
        ("Classification", {"fields": ("subject", "category", "tags", "importance", "confidence", "source")}),
        ("Details", {"fields": (
            "metadata", "entities", "links", "source_ref", "happened_at", "expires_at", "conversation", "message",
        )}),
        ("Valid time", {"fields": ("valid_from", "valid_to", "supersession")}),
        ("State", {"fields": (
            "is_active", "version", "supersedes", "superseded_by", "embedding_info", "created_at", "updated_at",
            "accessed_at",
        )}),
    )
    change_readonly_fields = (
        # valid time is set by the writes that place a memory in its chain (a date typed here would not move it)
        "id", "owner", "version", "valid_from", "valid_to", "supersession", "supersedes", "superseded_by",
        "embedding_info", "created_at", "updated_at", "accessed_at",
    )

    def get_fieldsets(self, request, obj=None):
        return self.change_fieldsets if obj is not None else self.add_fieldsets

    def get_readonly_fields(self, request, obj=None):
        return self.change_readonly_fields if obj is not None else ()

    def get_historical_record_context_helper(self, request, historical_record):
        return ReadableChanges(self.model, historical_record, hidden=BOOKKEEPING_FIELDS)

    # --- search ---

    def get_search_results(self, request, queryset, search_term):
        """PostgreSQL full text on `search_vector` (websearch syntax), or the memory's id."""
        term = search_term.strip()
        if not term:
            return queryset, False
        condition = Q(search_vector=SearchQuery(term, search_type="websearch", config="english"))
        try:
            condition |= Q(pk=uuid.UUID(term))
        except ValueError:
            pass
        return queryset.filter(condition), False

    # --- columns ---

    @admin.display(description="content", ordering="content")
    def short_content(self, obj: Memory) -> str:
        return preview(obj.content)

    @admin.display(description="superseded", boolean=True, ordering="superseded_by")
    def is_superseded(self, obj: Memory) -> bool:
        return obj.superseded_by_id is not None

    @admin.display(description="superseded by")
    def supersession(self, obj: Memory) -> str:
        """The memory that replaced this one, linked, and why (the reason its SUPERSEDE version records)."""
        if obj.superseded_by_id is None:
            return "— (current)"
        successor = Memory.objects.filter(pk=obj.superseded_by_id).only("pk", "content").first()
        reason = (obj.history.filter(history_action=HistoryAction.Action.SUPERSEDE,
                                     superseded_by_id=obj.superseded_by_id)
                  .order_by("-history_date").values_list("history_change_reason", flat=True).first())
        why = format_html(" (why: {})", reason) if reason else ""
        if successor is None:
            return format_html("{}{}", obj.superseded_by_id, why)
        return format_html('<a href="{}">{}</a>{}', reverse("admin:memories_memory_change", args=[successor.pk]),
                           preview(successor.content, 160), why)

    @admin.display(description="embedding", ordering="embedding_model")
    def embedding_status(self, obj: Memory) -> str:
        return obj.embedding_model or "pending"

    # --- writes, through the services ---

    def save_model(self, request, obj, form, change):
        fields = [name for name in services.WRITABLE_FIELDS if name in form.cleaned_data]
        if not change:
            data = {name: form.cleaned_data[name] for name in fields}
            write = services.memory_create(
                owner=obj.owner, content=data.pop("content"), actor=request.user, reason="created in admin",
                allow_duplicate=True, **data,
            )
            obj.pk = write.memory.pk
            obj._state.adding = False
            obj.refresh_from_db()
            return
        current = Memory.objects.get(pk=obj.pk)
        match = request.resolver_match
        if match is not None and match.url_name.endswith("_simple_history"):
            # the history page's "Revert" button: a REVERT version, then any edits made on that page on top
            current = services.memory_revert(
                memory=current, history_id=int(match.args[1]), actor=request.user, reason="reverted in admin"
            )
        attnames = {name: Memory._meta.get_field(name).attname for name in fields}
        data = {name: getattr(obj, name) for name in fields
                if getattr(obj, attnames[name]) != getattr(current, attnames[name])}
        if data:
            current = services.memory_update(memory=current, data=data, actor=request.user, reason=ADMIN_REASON)
        if "is_active" in form.cleaned_data and obj.is_active != current.is_active:
            if obj.is_active:
                services.memory_restore(memory=current, actor=request.user, reason="restored in admin")
            else:
                services.memory_soft_delete(memory=current, actor=request.user, reason="deleted in admin")
        obj.refresh_from_db()

    def delete_model(self, request, obj):
        """Deleting in the admin is the right to erasure: the memory and its whole history go."""
        services.memory_forget(memory=obj, actor=request.user)

    def delete_queryset(self, request, queryset):
        for memory in queryset:
            services.memory_forget(memory=memory, actor=request.user)

    # --- bulk actions ---

    @admin.action(description="Soft-delete selected memories", permissions=["change"])
    def soft_delete_selected(self, request, queryset):
        done = 0
        for memory in queryset.filter(is_active=True):
            services.memory_soft_delete(memory=memory, actor=request.user, reason="deleted in admin")
            done += 1
        self.message_user(request, f"Soft-deleted {count_memories(done)}.", messages.SUCCESS)

    @admin.action(description="Restore selected memories", permissions=["change"])
    def restore_selected(self, request, queryset):
        done, refused = 0, []
        for memory in queryset.filter(is_active=False):
            try:
                services.memory_restore(memory=memory, actor=request.user, reason="restored in admin")
                done += 1
            except ValidationError as exc:
                refused.append(f"{memory.pk}: {' '.join(exc.messages)}")
        self.message_user(request, f"Restored {count_memories(done)}.", messages.SUCCESS)
        if refused:
            self.message_user(request, "Not restored: " + "; ".join(refused), messages.WARNING)

    @admin.action(description="Re-embed selected memories", permissions=["change"])
    def reembed_selected(self, request, queryset):
        ids = list(queryset.values_list("pk", flat=True))
        batch_size = settings.EMBEDDING_BATCH_SIZE
        done = 0
        try:
            for start in range(0, len(ids), batch_size):
                memories = list(Memory.objects.filter(pk__in=ids[start:start + batch_size]).defer("embedding"))
                done += batch.memory_reembed_batch(memories=memories, reason="re-embedded in admin",
                                                      actor=request.user)
        except embeddings.EmbeddingError as exc:
            self.message_user(request, f"Embedding provider unavailable after {count_memories(done)}: {exc}",
                              messages.ERROR)
            return
        self.message_user(request, f"Re-embedded {count_memories(done)} with {settings.EMBEDDING_MODEL}.",
                          messages.SUCCESS)
