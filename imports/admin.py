"""Admin for imports: what was imported, by whom, how far it got (read-only; imports are made by upload or the
command). Staff pages bypass row-level security (core.rls)."""

from django.contrib import admin

from core.admin import ReadOnlyAdmin, SearchById
from imports.models import Import


@admin.register(Import)
class ImportAdmin(SearchById, ReadOnlyAdmin):
    list_display = ("__str__", "owner", "format", "status", "items_total", "created_at", "finished_at")
    list_select_related = ("owner",)
    list_filter = ("status", "format", ("owner", admin.RelatedOnlyFieldListFilter))
    search_fields = ("filename",)
    date_hierarchy = "created_at"
    readonly_fields = [field.name for field in Import._meta.fields]
