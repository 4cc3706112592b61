"""`POST /api/imports/` (202 and an import to watch; 400 naming the bad item and field, nothing written; 413),
`GET` its progress and counts, only the caller's."""

from django.core.files.uploadedfile import SimpleUploadedFile

from conversations.models import Conversation
from imports import processing
from imports.models import Import
from tests.imports.samples import data, dumps, raw


def upload(api, content: bytes, name="conversations.json", **fields):
    return api.post("/api/imports/", {"file": SimpleUploadedFile(name, content), **fields}, format="multipart")


def test_an_upload_is_accepted_and_shows_its_progress(api):
    response = upload(api, raw("claude"))
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["status"] == "pending" and body["format"] == "claude" and body["filename"] == "conversations.json"
    assert body["progress"] == {"done": 0, "total": 2, "percent": 0.0}
    processing.import_process(import_id=body["id"])
    done = api.get(f"/api/imports/{body['id']}/").json()
    assert done["status"] == "completed" and done["progress"]["percent"] == 100.0
    assert done["counts"] == {"conversations": 2, "messages": 4, "memories": 0, "duplicates": 0, "skipped": 0}
    assert [item["id"] for item in api.get("/api/imports/").json()["results"]] == [body["id"]]


def test_a_malformed_export_is_a_400_naming_item_and_field(api, user):
    export = data("chatgpt")
    export[1]["mapping"]["g-assistant"]["message"]["author"]["role"] = "narrator"
    response = upload(api, dumps(export))
    assert response.status_code == 400
    assert response.json()["items"][0] == (
        "item 2: mapping.g-assistant.message.author.role: 'narrator' is not one of user, assistant, system, tool.")
    assert not Import.objects.exists() and not Conversation.objects.exists()


def test_skip_bad_imports_the_rest(api):
    export = data("chatgpt")
    export[1]["create_time"] = "never"
    response = upload(api, dumps(export), skip_bad="true")
    assert response.status_code == 202
    assert response.json()["problems"] == [
        {"item": 2, "field": "create_time", "message": "'never' is not an ISO 8601 time."}]
    assert response.json()["progress"]["total"] == 1


def test_a_bad_format_lists_the_choices(api):
    response = upload(api, raw("mem0"), format="csv")
    assert response.status_code == 400
    message = response.json()["format"][0]
    assert "csv" in message and "chatgpt" in message and "langgraph" in message and "jsonl" in message


def test_a_refused_zip_is_a_400(api):
    from tests.imports.samples import export_zip

    response = upload(api, export_zip({"conversations.json": raw("chatgpt"), "../x.json": b"{}"}), name="export.zip")
    assert response.status_code == 400 and "leaves the archive" in response.json()["file"][0]


def test_too_large_is_a_413(api, settings):
    settings.IMPORT_MAX_BYTES = 100
    assert upload(api, raw("chatgpt")).status_code == 413


def test_imports_are_the_callers_only(api, other_api):
    job_id = upload(api, raw("mem0"), name="mem0.json").json()["id"]
    assert other_api.get(f"/api/imports/{job_id}/").status_code == 404
    assert other_api.get("/api/imports/").json()["count"] == 0
