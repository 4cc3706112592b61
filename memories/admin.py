"""Admin for projects, memories and read events. Every memory write made here goes through `memories.services`,
so it is versioned like any API write (actor = the staff user, reason "... in admin"). Staff pages under /admin/
bypass row-level security (core.rls), so the admin sees every owner's rows."""

import uuid

from django import forms
from django.conf import settings
from django.contrib import admin, messages
from django.contrib.postgres.search import SearchQuery
from django.core.exceptions import ValidationError
from django.db.models import CharField, Count, F, Func, Q
from django.urls import reverse
from django.utils.html import format_html
from django.utils.text import Truncator
from simple_history.admin import SimpleHistoryAdmin

from core.admin import embedding_info, without_vectors
from integrations import embeddings
from memories import batch, services
from memories.models import HistoryAction, Memory, MemoryEvent, Project

ADMIN_REASON = "edited in admin"
TAG_CHOICES_LIMIT = 500


def _preview(text: str, chars: int = 80) -> str:
    return Truncator(text).chars(chars)


# --- projects -------------------------------------------------------------------------------------------------


@admin.register(Project)
class ProjectAdmin(admin.ModelAdmin):
    list_display = ("name", "owner", "memory_count", "created_at", "updated_at")
    list_select_related = ("owner",)
    search_fields = ("name", "owner__username", "owner__email")
    autocomplete_fields = ("owner",)
    readonly_fields = ("created_at", "updated_at")
    date_hierarchy = "created_at"

    def get_queryset(self, request):
        return super().get_queryset(request).annotate(_memory_count=Count("memories"))

    @admin.display(description="memories", ordering="_memory_count")
    def memory_count(self, obj: Project) -> int:
        count = getattr(obj, "_memory_count", None)
        return obj.memories.count() if count is None else count

    def delete_model(self, request, obj):
        services.project_delete(project=obj)

    def delete_queryset(self, request, queryset):
        for project in queryset:
            services.project_delete(project=project)


# --- memories: filters ----------------------------------------------------------------------------------------


class TagListFilter(admin.SimpleListFilter):
    """The distinct tags in use (`SELECT DISTINCT unnest(tags)`); picks memories carrying that tag."""

    title = "tag"
    parameter_name = "tag"

    def lookups(self, request, model_admin):
        tags = (
            Memory.objects.annotate(tag=Func(F("tags"), function="unnest", output_field=CharField()))
            .order_by("tag")
            .values_list("tag", flat=True)
            .distinct()[:TAG_CHOICES_LIMIT]
        )
        return [(tag, tag) for tag in tags]

    def queryset(self, request, queryset):
        if self.value():
            return queryset.filter(tags__contains=[self.value()])
        return queryset


class SupersededListFilter(admin.SimpleListFilter):
    title = "superseded"
    parameter_name = "superseded"

    def lookups(self, request, model_admin):
        return [("yes", "Yes"), ("no", "No")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(superseded_by__isnull=False)
        if self.value() == "no":
            return queryset.filter(superseded_by__isnull=True)
        return queryset


# --- memories: form -------------------------------------------------------------------------------------------


class MemoryAdminForm(forms.ModelForm):
    """Checks the services would make, done here so that a mistake shows on the form instead of as an error page."""

    class Meta:
        model = Memory
        fields = ("owner", *services.WRITABLE_FIELDS, "is_active")  # never the vectors

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if "key" in self.fields:
            self.fields["key"].required = False
            self.fields["key"].help_text = "Unique per owner and namespace among live memories; empty: a new UUID."

    def clean(self):
        cleaned = super().clean()
        owner = cleaned.get("owner") or (self.instance.owner if self.instance.owner_id else None)
        for name in ("project", "conversation", "message"):
            related = cleaned.get(name)
            if related is not None and owner is not None and related.owner_id != owner.pk:
                self.add_error(name, f"This {name} belongs to another user.")
        for name, validate in (("content", services.validate_content), ("namespace", services.validate_namespace)):
            if name in self.fields and cleaned.get(name) is not None:
                try:
                    validate(cleaned[name])
                except ValidationError as exc:
                    self.add_error(name, exc.message_dict[name])
        if "key" in self.fields and not cleaned.get("key"):
            cleaned["key"] = str(uuid.uuid4())
        is_active = cleaned.get("is_active", self.instance.is_active)
        namespace = cleaned.get("namespace", self.instance.namespace)
        key = cleaned.get("key", self.instance.key)
        if owner is not None and is_active and namespace and key and (
            Memory.objects.filter(owner=owner, namespace=namespace, key=key, is_active=True)
            .exclude(pk=self.instance.pk).exists()
        ):
            self.add_error("key" if "key" in self.fields else None,
                           f"A live memory of this owner already uses key {key!r} in this namespace.")
        return cleaned


# --- memories: admin ------------------------------------------------------------------------------------------


@admin.register(Memory)
class MemoryAdmin(SimpleHistoryAdmin):
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

    def get_queryset(self, request):
        # the vector itself is 384 floats a row: the pages only need to know whether it is there and its size
        return without_vectors(super().get_queryset(request))

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
        return _preview(obj.content)

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
                           _preview(successor.content, 160), why)

    @admin.display(description="embedding", ordering="embedding_model")
    def embedding_status(self, obj: Memory) -> str:
        return obj.embedding_model or "pending"

    @admin.display(description="embedding")
    def embedding_info(self, obj: Memory) -> str:
        return embedding_info(obj)

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
        self.message_user(request, f"Soft-deleted {done} memories.", messages.SUCCESS)

    @admin.action(description="Restore selected memories", permissions=["change"])
    def restore_selected(self, request, queryset):
        done, refused = 0, []
        for memory in queryset.filter(is_active=False):
            try:
                services.memory_restore(memory=memory, actor=request.user, reason="restored in admin")
                done += 1
            except ValidationError as exc:
                refused.append(f"{memory.pk}: {' '.join(exc.messages)}")
        self.message_user(request, f"Restored {done} memories.", messages.SUCCESS)
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
            self.message_user(request, f"Embedding provider unavailable after {done} memories: {exc}", messages.ERROR)
            return
        self.message_user(request, f"Re-embedded {done} memories with {settings.EMBEDDING_MODEL}.", messages.SUCCESS)


# --- read events ----------------------------------------------------------------------------------------------


@admin.register(MemoryEvent)
class MemoryEventAdmin(admin.ModelAdmin):
    """READ / SEARCH events: an audit trail, so read-only."""

    list_display = ("at", "action", "owner", "memory", "short_query")
    list_select_related = ("owner", "memory")
    list_filter = ("action", ("owner", admin.RelatedOnlyFieldListFilter))
    search_fields = ("query",)
    date_hierarchy = "at"
    raw_id_fields = ("owner", "memory")

    @admin.display(description="query")
    def short_query(self, obj: MemoryEvent) -> str:
        return _preview(obj.query, 60)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
