"""Admin for uploaded documents and their chunks. Vectors are never shown: only the model and the size.
Staff pages bypass row-level security (core.rls)."""

from django.contrib import admin
from django.utils.text import Truncator

from core.admin import ReadOnlyTabularInline, SearchById, VectorsHidden
from documents.models import Chunk, Document


class ChunkInline(VectorsHidden, ReadOnlyTabularInline):
    model = Chunk
    fields = ("chunk_index", "page_number", "token_count", "content_preview", "embedding_info")
    readonly_fields = fields
    ordering = ("chunk_index",)

    @admin.display(description="content")
    def content_preview(self, obj: Chunk) -> str:
        return Truncator(obj.content).chars(150)


@admin.register(Document)
class DocumentAdmin(SearchById, admin.ModelAdmin):
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
    readonly_fields = ("id", "created_at", "updated_at", "queued_at", "processed_at")
    inlines = (ChunkInline,)

    @admin.display(description="chunks")
    def progress(self, obj: Document) -> str:
        return f"{obj.chunks_done}/{obj.chunks_total}"


@admin.register(Chunk)
class ChunkAdmin(SearchById, VectorsHidden, admin.ModelAdmin):
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

    def save_model(self, request, obj, form, change):
        obj.owner_id = obj.document.owner_id  # a chunk always belongs to its document's owner
        if "content" in form.changed_data:
            # the old vector no longer matches: pending until `manage.py reembed` embeds it again
            obj.embedding, obj.embedding_model = None, ""
        super().save_model(request, obj, form, change)
