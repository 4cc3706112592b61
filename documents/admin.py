"""Admin for uploaded documents and their chunks. Vectors are never shown: only the model and the size.
Staff pages bypass row-level security (memento.rls)."""

from django.contrib import admin
from django.db.models import F, Func, IntegerField
from django.utils.text import Truncator

from conversations.admin import search_with_id
from documents.models import Chunk, Document


def _embedding_info(obj) -> str:
    dimensions = getattr(obj, "embedding_dimensions", None)
    if dimensions is None and "embedding" not in obj.get_deferred_fields() and obj.embedding is not None:
        dimensions = len(obj.embedding)
    if dimensions is None:
        return "pending"
    return f"{obj.embedding_model or 'unknown model'} · {dimensions} dimensions"


def _without_vectors(queryset):
    return queryset.defer("embedding").annotate(
        embedding_dimensions=Func(F("embedding"), function="vector_dims", output_field=IntegerField())
    )


class ChunkInline(admin.TabularInline):
    model = Chunk
    fields = ("chunk_index", "page_number", "token_count", "content_preview", "embedding_info")
    readonly_fields = fields
    ordering = ("chunk_index",)
    extra = 0
    can_delete = False
    show_change_link = True

    def get_queryset(self, request):
        return _without_vectors(super().get_queryset(request))

    @admin.display(description="content")
    def content_preview(self, obj: Chunk) -> str:
        return Truncator(obj.content).chars(150)

    @admin.display(description="embedding")
    def embedding_info(self, obj: Chunk) -> str:
        return _embedding_info(obj)

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = (
        "__str__", "owner", "project", "filename", "content_type", "file_size", "processing_status", "progress",
        "created_at",
    )
    list_select_related = ("owner", "project")
    list_filter = (
        "processing_status", "content_type", ("owner", admin.RelatedOnlyFieldListFilter),
        ("project", admin.RelatedOnlyFieldListFilter),
    )
    search_fields = ("title", "filename")
    date_hierarchy = "created_at"
    autocomplete_fields = ("owner", "project")
    readonly_fields = ("id", "created_at", "updated_at", "processed_at")
    inlines = (ChunkInline,)

    @admin.display(description="chunks")
    def progress(self, obj: Document) -> str:
        return f"{obj.chunks_done}/{obj.chunks_total}"

    def get_search_results(self, request, queryset, search_term):
        return search_with_id(super().get_search_results(request, queryset, search_term), queryset, search_term)


@admin.register(Chunk)
class ChunkAdmin(admin.ModelAdmin):
    list_display = ("__str__", "document", "chunk_index", "page_number", "token_count", "owner", "embedding_model")
    list_select_related = ("document", "owner")
    list_filter = (("owner", admin.RelatedOnlyFieldListFilter), "embedding_model")
    search_fields = ("content",)
    raw_id_fields = ("document",)
    exclude = ("embedding", "search_vector")
    readonly_fields = ("id", "owner", "embedding_info", "created_at")
    fields = (
        "id", "document", "owner", "chunk_index", "page_number", "token_count", "content", "metadata",
        "embedding_info", "created_at",
    )

    def get_queryset(self, request):
        return _without_vectors(super().get_queryset(request))

    @admin.display(description="embedding")
    def embedding_info(self, obj: Chunk) -> str:
        return _embedding_info(obj)

    def get_search_results(self, request, queryset, search_term):
        return search_with_id(super().get_search_results(request, queryset, search_term), queryset, search_term)

    def save_model(self, request, obj, form, change):
        obj.owner_id = obj.document.owner_id  # a chunk always belongs to its document's owner
        if "content" in form.changed_data:
            # the old vector no longer matches: pending until `manage.py reembed` embeds it again
            obj.embedding, obj.embedding_model = None, ""
        super().save_model(request, obj, form, change)
