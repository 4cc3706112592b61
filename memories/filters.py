"""The memory list's query string, declared once (django-filter): the filters search takes in its body
(FilterSerializer), read from the query string by the same fields, with a namespace written as a path and tags
separated by commas. Each filter means what `selectors.filter_memories` says, for the list as for search."""

from rest_framework import serializers

from core.filters import SerializedFilter, StrictFilterSet
from core.serializers import CharField
from core.text import LABEL_MAX_CHARS, NAMESPACE_MAX_LABELS, namespace_problem, unstorable
from memories import selectors
from memories.models import Project
from memories.serializers import FilterSerializer


def request_filters(request, data: dict) -> selectors.MemoryFilters:
    """Checked filter values (the list's query string, search's body) -> MemoryFilters; a project id must be one
    of the caller's projects."""
    values = {k: v for k, v in data.items() if k in selectors.MemoryFilters.__dataclass_fields__}
    project = values.get("project")
    if project not in (None, "", "none"):
        try:
            values["project"] = Project.objects.get(owner=request.user, pk=int(project))
        except (ValueError, Project.DoesNotExist):
            raise serializers.ValidationError({"project": ["Unknown project."]}) from None
    else:
        values["project"] = None
    return selectors.MemoryFilters(**values)


class StorableText(CharField):
    """Text checked for what PostgreSQL refuses before it is split into a list (DRF's own NUL check runs on the
    list, and finds none)."""

    def to_internal_value(self, data) -> str:
        text = super().to_internal_value(data)
        if problem := unstorable(text):
            raise serializers.ValidationError(problem)
        return text


class NamespacePath(StorableText):
    """A namespace prefix written as a path: memories/profile -> ["memories", "profile"]."""

    def to_internal_value(self, data) -> list[str]:
        labels = [label for label in super().to_internal_value(data).split("/") if label]
        problem = namespace_problem(labels)
        if problem:
            raise serializers.ValidationError(problem)
        return labels


class CommaSeparated(StorableText):
    """Values separated by commas: "a, b" -> ["a", "b"]."""

    def to_internal_value(self, data) -> list[str]:
        return [value.strip() for value in super().to_internal_value(data).split(",") if value.strip()]


QUERY_FIELDS = {  # where the query string writes a filter otherwise than a JSON body
    "namespace": NamespacePath(help_text="Namespace prefix, slash-separated: memories/profile",
                               max_length=NAMESPACE_MAX_LABELS * (LABEL_MAX_CHARS + 1)),
    "tags": CommaSeparated(help_text="Comma-separated tags."),
    "project": CharField(help_text="A project id, or 'none' for user-scoped only."),
    # checked here as this list always checked it: page 0 or "x" is a 400 naming it (the pagination's is a 404)
    "page": serializers.IntegerField(min_value=1, help_text="A page number within the paginated result set."),
}


class MemoryFilterSet(StrictFilterSet):
    """GET /api/memories/?...: every field of FilterSerializer, as a query parameter of the same name."""

    @classmethod
    def get_filters(cls):
        fields = {**FilterSerializer().fields, **QUERY_FIELDS}
        return {name: SerializedFilter(field) for name, field in fields.items()}

    def filter_queryset(self, queryset):
        given = {name: value for name, value in self.form.cleaned_data.items() if value is not None}
        return selectors.filter_memories(queryset, request_filters(self.request, given))
