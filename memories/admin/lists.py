"""The memory list's filters beyond the plain fields: a tag in use, superseded or not."""

from django.contrib import admin
from django.db.models import CharField, F, Func

from memories.models import Memory

TAG_CHOICES_LIMIT = 500


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
