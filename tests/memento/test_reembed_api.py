"""`/api/admin/reembed/`: staff start a re-embedding that the real worker runs, and follow it."""

import numpy as np
import pytest
from django.conf import settings

from integrations import embeddings
from memories import spaces
from memories.models import EmbeddingSpace, Memory
from tests.factories import MemoryFactory, UserFactory, api_client
from tests.worker import wait_for

pytestmark = pytest.mark.slow
OLD_VECTOR = [1.0] + [0.0] * 383


def test_staff_start_a_switch_the_worker_runs_and_see_its_progress(celery_worker):
    owner = UserFactory()
    contents = ["Ana is allergic to peanuts", "Ana drinks oat milk", "Ana plays the cello"]
    for content in contents:
        MemoryFactory(owner=owner, content=content, embedding=OLD_VECTOR, embedding_model="old-model")
    spaces.record_models()  # what `migrate` does: the table keeps its model when the setting changes
    assert spaces.active_model("memories") == "old-model"
    staff = api_client(UserFactory(is_staff=True))

    assert api_client(owner).post("/api/admin/reembed/", {}, format="json").status_code == 403
    assert api_client(owner).get("/api/admin/reembed/").status_code == 403
    assert staff.post("/api/admin/reembed/", {"batch_size": 0}, format="json").json() == {
        "batch_size": ["Ensure this value is greater than or equal to 1."]}

    response = staff.post("/api/admin/reembed/", {"batch_size": 2}, format="json")
    assert response.status_code == 202
    assert response.json()["configured_model"] == settings.EMBEDDING_MODEL

    def finished():
        tables = {t["name"]: t for t in staff.get("/api/admin/reembed/").json()["tables"]}
        return tables["memories"]["state"] == "done" and tables["memories"]["model"] == settings.EMBEDDING_MODEL

    wait_for(finished, timeout=180, worker=celery_worker)
    memories = staff.get("/api/admin/reembed/").json()["tables"][0]
    assert (memories["name"], memories["rows_done"], memories["rows_total"]) == ("memories", 3, 3)
    for memory in Memory.objects.filter(owner=owner):
        assert (memory.embedding_model, memory.embedding_dimensions) == (settings.EMBEDDING_MODEL, 384)
        assert np.allclose(memory.embedding, embeddings.embed_text(memory.content), atol=1e-4)
    assert EmbeddingSpace.objects.get(name="memories").model == settings.EMBEDDING_MODEL
