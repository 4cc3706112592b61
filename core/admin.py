"""Helpers the apps' admins share. Staff pages bypass row-level security (core.rls)."""

import dataclasses
import uuid

from django.contrib import admin
from simple_history.template_utils import HistoricalRecordContextHelper

from core.readable import readable_text


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


class SearchById:
    """An admin (mixed in before admin.ModelAdmin) whose search box also finds the row whose id is typed in."""

    def get_search_results(self, request, queryset, search_term):
        return search_with_id(super().get_search_results(request, queryset, search_term), queryset, search_term)


class ReadOnlyAdmin(admin.ModelAdmin):
    """A log staff read and never write (its rows come from uploads, the worker or sign-ins): nothing added or
    changed by hand, so every field shows read-only."""

    def has_add_permission(self, request) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False


class VectorsHidden:
    """Rows with a vector (mixed in before admin.ModelAdmin or an inline): the vector columns left unread (384
    floats a row; a page needs only whether it is there and its size), shown as `embedding_info`."""

    def get_queryset(self, request):
        return without_vectors(super().get_queryset(request))

    @admin.display(description="embedding")
    def embedding_info(self, obj) -> str:
        return embedding_info(obj)


class ReadOnlyTabularInline(admin.TabularInline):
    """Child rows shown under their parent, read-only: they come from the API."""

    extra = 0
    can_delete = False
    show_change_link = True

    def has_add_permission(self, request, obj=None):
        return False

    def has_change_permission(self, request, obj=None):
        return False


class ReadableChanges(HistoricalRecordContextHelper):
    """A history page's "what changed" (django-simple-history): JSON and lists as people read them, not Python
    reprs, and the `hidden` fields (bookkeeping that changes with every version) left out. An admin uses it from
    `get_historical_record_context_helper`."""

    def __init__(self, model, historical_record, *, hidden=(), **kwargs):
        super().__init__(model, historical_record, **kwargs)
        self.hidden = set(hidden)

    def context_for_delta_changes(self, delta):
        kept = [change for change in delta.changes if change.field not in self.hidden]
        return super().context_for_delta_changes(dataclasses.replace(delta, changes=kept))

    def prepare_delta_change_value(self, change, value):
        value = super().prepare_delta_change_value(change, value)
        return readable_text(value) if isinstance(value, list | dict) else value
