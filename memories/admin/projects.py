"""Projects in the admin: deleting one goes through the service (its own memories are erased with it)."""

from django.contrib import admin
from django.db.models import Count

from memories import services
from memories.models import Project


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
