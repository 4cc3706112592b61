"""Helpers the apps' admins share. Staff pages bypass row-level security (core.rls)."""

import uuid

from django.contrib import admin


def search_with_id(results, queryset, search_term):
    """Add the row whose primary key is `search_term` to a (queryset, may_have_duplicates) search result."""
    filtered, may_have_duplicates = results
    try:
        pk = uuid.UUID(search_term.strip())
    except ValueError:
        return filtered, may_have_duplicates
    return filtered | queryset.filter(pk=pk), may_have_duplicates


def without_vectors(queryset):
    """Leave the vector columns unread (`embedding_info` shows the row's recorded model and dimensions)."""
    fields = {f.name for f in queryset.model._meta.concrete_fields}
    return queryset.defer(*(name for name in ("embedding", "embedding_next") if name in fields))


def embedding_info(obj) -> str:
    """Model and size of the vector, never the vector itself."""
    dimensions = getattr(obj, "embedding_dimensions", None)
    if dimensions is None and "embedding" not in obj.get_deferred_fields() and obj.embedding is not None:
        dimensions = len(obj.embedding)
    if dimensions is None:
        return "pending"
    return f"{obj.embedding_model or 'unknown model'} · {dimensions} dimensions"


class ReadOnlyTabularInline(admin.TabularInline):
    """Child rows shown under their parent, read-only: they come from the API."""

    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False
