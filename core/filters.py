"""The query strings of the API's lists, declared with django-filter: a FilterSet names each parameter once, the
OpenAPI parameters come from it, and a bad value is a 400 naming the parameter (DjangoFilterBackend's
ValidationError). A parameter may be read by a DRF field (`SerializedFilter`), so that a list takes a value exactly
as a request body does (strict text, readable moments, choices named in the refusal); a parameter nobody declared
is refused as StrictSerializer refuses an unknown field (`StrictFilterSet`)."""

import django_filters
from django import forms
from django.forms.utils import ErrorList
from drf_spectacular.contrib.django_filters import DjangoFilterExtension
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

KNOWN_ELSEWHERE = frozenset({"page", "page_size", "format"})  # the pagination's, DRF's own format


class SerializedField(forms.Field):
    """A form field that reads its value with a DRF field: the same values accepted, the same messages."""

    def __init__(self, *, serializer_field: serializers.Field, **kwargs):
        self.serializer_field = serializer_field
        super().__init__(**kwargs)

    def to_python(self, value):
        if value is None:
            return None  # not given ("" is given: a DRF text field refuses it as blank, as in a body)
        try:
            return self.serializer_field.run_validation(value)
        except serializers.ValidationError as exc:
            details = exc.detail if isinstance(exc.detail, list) else [exc.detail]
            # "%(text)s": django-filter formats each message with its params, and a message may quote the value
            raise forms.ValidationError([forms.ValidationError("%(text)s", params={"text": str(detail)})
                                         for detail in details]) from None


class SerializedFilter(django_filters.Filter):
    """A parameter read by `serializer_field` (its schema too). It filters nothing by itself: the FilterSet's
    `filter_queryset` hands the values to the app's selector, where each filter means what it means everywhere."""

    field_class = SerializedField

    def __init__(self, serializer_field: serializers.Field, **kwargs):
        super().__init__(serializer_field=serializer_field, help_text=serializer_field.help_text, **kwargs)
        extend_schema_field(serializer_field)(self)

    def filter(self, qs, value):
        return qs


class StrictFilterSet(django_filters.FilterSet):
    """Refuses a parameter it does not declare: a typo is a 400 naming it ("Unknown field."), not a filter
    silently ignored."""

    @property
    def errors(self):
        errors = self.form.errors
        for name in sorted(set(self.data) - set(self.filters) - KNOWN_ELSEWHERE):
            errors.setdefault(name, ErrorList([forms.ValidationError("Unknown field.", code="unknown")]))
        return errors

    def is_valid(self) -> bool:
        return self.is_bound and not self.errors


class SerializedFilterSchema(DjangoFilterExtension):
    """A SerializedFilter's parameter with its field's bounds, as a request body's field has them (drf-spectacular
    maps a filter's field without them)."""

    priority = 1

    def resolve_filter_field(self, auto_schema, model, filterset_class, field_name, filter_field):
        parameters = super().resolve_filter_field(auto_schema, model, filterset_class, field_name, filter_field)
        if isinstance(filter_field, SerializedFilter):
            field = filter_field.extra["serializer_field"]
            bounds = {"minLength": getattr(field, "min_length", None), "maxLength": getattr(field, "max_length", None),
                      "minimum": getattr(field, "min_value", None), "maximum": getattr(field, "max_value", None)}
            for parameter in parameters:
                parameter["schema"].update({key: bound for key, bound in bounds.items() if bound is not None})
        return parameters
