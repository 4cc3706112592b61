"""Namespaces in the memory list: a memory's namespace as the list filter's value, and whether it is the default
one (which the rows leave unsaid)."""

from django import template

from memories.models import default_namespace
from panel.forms import namespace_value as _namespace_value

register = template.Library()


@register.filter
def namespace_value(labels) -> str:
    return _namespace_value(labels)


@register.filter
def is_default_namespace(labels) -> bool:
    return list(labels or []) == default_namespace()
