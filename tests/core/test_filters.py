"""List query strings declared with django-filter (core.filters): a parameter read by a DRF field takes what a body
takes and is refused in the same words, naming the parameter; an undeclared parameter is refused by name."""

import pytest
from django.http import QueryDict
from rest_framework import serializers

from core.filters import SerializedFilter, StrictFilterSet
from core.serializers import CharField, ChoiceField
from memories.models import Memory


class Filters(StrictFilterSet):
    mode = SerializedFilter(ChoiceField(choices=["a", "b%s"]))
    name = SerializedFilter(CharField(max_length=5))
    flag = SerializedFilter(serializers.BooleanField())

    class Meta:
        model = Memory
        fields = []


def errors(query: str) -> dict:
    found = Filters(QueryDict(query), queryset=Memory.objects.none())
    assert not found.is_valid()
    return {name: [e.message % (e.params or ()) for e in errors] for name, errors in found.errors.as_data().items()}


def test_values_are_read_by_the_drf_fields():
    found = Filters(QueryDict("mode=a&name=x&flag=yes&page_size=5&format=json"), queryset=Memory.objects.none())
    assert found.is_valid()
    assert found.form.cleaned_data == {"mode": "a", "name": "x", "flag": True}


@pytest.mark.parametrize(("query", "expected"), [
    ("mode=%25d", {"mode": ['"%d" is not a valid choice; choose one of: a, b%s.']}),  # a value with a % in it
    ("name=toolong", {"name": ["Ensure this field has no more than 5 characters."]}),
    ("name=", {"name": ["This field may not be blank."]}),
    ("flag=maybe", {"flag": ["Must be a valid boolean."]}),
    ("nmae=x", {"nmae": ["Unknown field."]}),
])
def test_refusals_name_the_parameter_in_the_bodies_words(query, expected):
    assert errors(query) == expected


def test_the_list_answers_a_400_naming_the_parameter(api):
    response = api.get("/api/memories/", {"source": "rumour", "tag": "x"})
    assert response.status_code == 400
    assert response.json() == {"source": ['"rumour" is not a valid choice; choose one of: explicit, extracted, '
                                          'inferred, updated, system, document, import.'],
                               "tag": ["Unknown field."]}
