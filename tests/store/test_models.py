"""Field vectors are user data: row-level security hides other users' rows in the database itself."""

import pytest
from django.db import DatabaseError, transaction

from core import rls
from store.models import ItemVector
from tests.factories import MemoryFactory

pytestmark = pytest.mark.django_db


def _vector(memory, path="$"):
    return ItemVector.objects.create(memory=memory, owner=memory.owner, path=path, embedding=[0.1] * 384,
                                     embedding_model="test")


def test_other_users_field_vectors_are_invisible_and_unwritable(user, other_user):
    mine = _vector(MemoryFactory(owner=user))
    theirs_memory = MemoryFactory(owner=other_user)
    _vector(theirs_memory)

    with rls.as_user(user.pk):
        assert list(ItemVector.objects.all()) == [mine]
        with pytest.raises(DatabaseError, match="row-level security"), transaction.atomic():
            _vector(theirs_memory, "title")


def test_forgetting_a_memory_erases_its_field_vectors(user):
    from memories.services import memory_forget

    memory = MemoryFactory(owner=user)
    _vector(memory)
    _vector(memory, "title")

    memory_forget(memory=memory)

    assert not ItemVector.objects.exists()
