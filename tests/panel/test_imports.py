"""The panel's import page: upload an export, see it refused with the bad item named, watch its progress."""

import re

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from conversations.models import Conversation
from imports import processing
from imports.models import Import
from tests.imports.samples import data, dumps, raw


@pytest.fixture
def panel(client, user):
    client.force_login(user)
    return client


def test_upload_then_watch_the_progress(panel, user):
    page = panel.get("/imports/")
    assert page.status_code == 200 and b"Import history" in page.content and b'href="/imports/"' in page.content
    response = panel.post("/imports/", {"file": SimpleUploadedFile("conversations.json", raw("claude")),
                                        "format": "auto"})
    job = Import.objects.get(owner=user)
    assert response.status_code == 302 and response["Location"] == f"/imports/{job.pk}/"
    detail = panel.get(f"/imports/{job.pk}/").content.decode()
    assert f'data-status-url="/imports/{job.pk}/status/"' in detail and "0 / 2 items" in detail
    processing.import_process(import_id=job.pk)
    status = panel.get(f"/imports/{job.pk}/status/").json()
    assert status["status"] == "completed" and status["counts"]["conversations"] == 2
    assert "Learning Portuguese" in panel.get("/conversations/").content.decode()


def test_a_bad_item_is_named_on_the_page_and_nothing_is_written(panel, user):
    export = data("claude")
    export[0]["created_at"] = "soon"
    response = panel.post("/imports/", {"file": SimpleUploadedFile("conversations.json", dumps(export)),
                                        "format": "claude"})
    assert response.status_code == 200
    text = re.sub(r"\s+", " ", response.content.decode())
    assert "item 1: created_at: &#x27;soon&#x27; is not an ISO 8601 time." in text
    assert not Import.objects.exists() and not Conversation.objects.exists()


def test_skipped_items_are_listed(panel, user):
    export = data("claude")
    export[0]["created_at"] = "soon"
    panel.post("/imports/", {"file": SimpleUploadedFile("c.json", dumps(export)), "format": "auto",
                             "skip_bad": "on"})
    job = Import.objects.get(owner=user)
    assert "item 1: created_at:" in panel.get(f"/imports/{job.pk}/").content.decode()


def test_another_users_import_is_not_found(panel, other_user):
    from imports import services

    job = services.import_upload(owner=other_user, raw=raw("mem0"), filename="m.json")
    assert panel.get(f"/imports/{job.pk}/").status_code == 404
    assert panel.get(f"/imports/{job.pk}/status/").status_code == 404
