"""Read and search events in the admin: an audit trail, so read-only."""

from django.contrib import admin

from memories.admin.memory import preview
from memories.models import MemoryEvent


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
        return preview(obj.query, 60)

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False
