"""`manage.py reembed_store`: field vectors of another model are embedded again from the items' values."""

import numpy as np
import pytest
from django.core.management import call_command

from integrations import embeddings
from store.models import ItemVector

pytestmark = pytest.mark.django_db


def test_stale_field_vectors_are_embedded_again_from_the_value(put, settings):
    put(["docs"], "d1", {"title": "Sourdough", "steps": ["Feed the starter", "Bake at dawn"]},
        index=["title", "steps[*]", "title"])
    put(["docs"], "d2", {"title": "Taxes"}, index=["title"])
    ItemVector.objects.filter(memory__key="d1").update(embedding=[0.0] * 383 + [1.0], embedding_model="old-model")

    call_command("reembed_store", stdout=None)

    rows = {row.path: row for row in ItemVector.objects.filter(memory__key="d1")}
    assert set(rows) == {"title", "steps[*].0", "steps[*].1"}
    assert {row.embedding_model for row in rows.values()} == {settings.EMBEDDING_MODEL}
    expected = embeddings.embed_texts(["Bake at dawn"])[0]
    assert np.allclose(rows["steps[*].1"].embedding, expected, atol=1e-5)
    assert rows["steps[*].1"].field == "steps[*]"
