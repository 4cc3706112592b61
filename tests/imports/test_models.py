"""Imports and their items are user data: row-level security hides other users' rows in the database itself."""

import pytest
from django.db import DatabaseError, transaction

from core import rls
from imports import services
from imports.models import Import, ImportItem
from tests.imports.samples import raw

pytestmark = pytest.mark.django_db


def test_other_users_imports_are_invisible_and_unwritable(user, other_user):
    mine = services.import_upload(owner=user, raw=raw("mem0"), filename="m.json")
    theirs = services.import_upload(owner=other_user, raw=raw("mem0"), filename="m.json")
    with rls.as_user(user.pk):
        assert list(Import.objects.all()) == [mine]
        assert set(ImportItem.objects.values_list("job_id", flat=True)) == {mine.pk}
        with pytest.raises(DatabaseError, match="row-level security"), transaction.atomic():
            ImportItem.objects.create(job=theirs, owner=other_user, position=99, kind="memory", fingerprint="x",
                                      payload={})
