"""The admin's history tables (django-simple-history) as the admin's own lists show things: a column's header is
its field's verbose name or its admin method's description (not the attribute name), a cell is the field's
display (a choice's label, a boolean's icon)."""

from django import template
from django.contrib import admin
from django.contrib.admin.exceptions import NotRegistered
from django.contrib.admin.utils import display_for_field, display_for_value, label_for_field, lookup_field
from django.utils.text import capfirst
from simple_history.utils import get_history_model_for_model

register = template.Library()


def _model_admin(model):
    try:
        return admin.site.get_model_admin(model)
    except NotRegistered:
        return None


@register.simple_tag
def history_column_label(column: str, opts) -> str:
    """The header of a `history_list_display` column on the history page of `opts.model`'s objects."""
    try:
        label = label_for_field(column, get_history_model_for_model(opts.model), _model_admin(opts.model))
    except AttributeError:
        label = column.replace("_", " ")
    return capfirst(label)


@register.simple_tag
def history_column_value(record, column: str, opts) -> str:
    """A history record's value in a `history_list_display` column, displayed as the admin's lists do."""
    model_admin = _model_admin(opts.model)
    empty = model_admin.get_empty_value_display() if model_admin else "-"
    try:
        field, attr, value = lookup_field(column, record, model_admin)
    except (AttributeError, LookupError):
        return empty
    if field is None:
        return display_for_value(value, empty, boolean=getattr(attr, "boolean", False))
    return display_for_field(value, field, empty)
