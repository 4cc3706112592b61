"""The end-user list's query string (django-filter)."""

from django_filters.rest_framework import CharFilter, FilterSet


class EndUserFilterSet(FilterSet):
    """Unknown parameters are ignored here, as this list always did."""

    external_id = CharFilter(help_text="The end user your app knows by this id (X-Memento-End-User).")
