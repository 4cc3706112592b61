"""The documents REST API: upload (202, then background processing), list/retrieve/delete, reprocess, chunks,
derived memories, chunk search; bad input; scoping to the caller."""

import stat
from pathlib import Path

import pytest
from django.core.files.storage import default_storage

from documents import processing
from documents.models import Chunk, Document
from documents.tasks import process_document
from memories.models import Memory
from tests.documents import files
from tests.factories import ProjectFactory

pytestmark = pytest.mark.django_db

MARKDOWN = files.as_markdown(files.sample_sections(21, sections=3), title="Team handbook")


def _post(api, name, data, **fields):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return api.post("/api/documents/", {"file": SimpleUploadedFile(name, data), **fields}, format="multipart")


def _run(document_id):
    processing.document_process(document_id=document_id)


@pytest.mark.parametrize(("name", "data", "content_type"), [
    ("plan.pdf", files.as_pdf(files.sample_sections(22, sections=2)), "application/pdf"),
    ("plan.docx", files.as_docx(files.sample_sections(23, sections=2)),
     "application/vnd.openxmlformats-officedocument.wordprocessingml.document"),
    ("plan.html", files.as_html(files.sample_sections(24, sections=2)), "text/html"),
    ("plan.md", files.as_markdown(files.sample_sections(25, sections=2)), "text/markdown"),
    ("plan.txt", files.as_text(files.sample_sections(26, sections=2)), "text/plain"),
], ids=["pdf", "docx", "html", "markdown", "text"])
def test_upload_each_format_then_processing_completes(api, media_root, name, data, content_type,
                                                      django_capture_on_commit_callbacks, monkeypatch):
    queued = []
    monkeypatch.setattr(process_document, "delay", lambda pk: queued.append(pk))
    with django_capture_on_commit_callbacks(execute=True):
        response = _post(api, name, data, title="Plan")
    assert response.status_code == 202, response.content
    body = response.json()
    assert body["status"] == "pending"
    assert body["progress"] == {"done": 0, "total": 0, "percent": 0.0}
    assert (body["filename"], body["content_type"], body["file_size"], body["title"]) == (
        name, content_type, len(data), "Plan")
    assert queued == [body["id"]]  # queued once the upload committed

    document = Document.objects.get(pk=body["id"])
    stored = Path(media_root) / document.file.name
    assert stored.is_file() and stored.read_bytes() == data
    assert stored.parent == Path(media_root) / "documents" / str(document.owner_id)
    assert stored.stem != "plan" and len(stored.stem) == 32  # a generated name

    _run(body["id"])
    body = api.get(f"/api/documents/{body['id']}/").json()
    assert body["status"] == "completed", body["error_message"]
    assert body["progress"]["done"] == body["progress"]["total"] > 0 and body["progress"]["percent"] == 100.0
    assert body["word_count"] > 300
    assert (body["page_count"] or 0) == (2 if name.endswith(".pdf") else 0)
    assert body["processed_at"] and body["error_message"] == ""

    chunks = api.get(f"/api/documents/{body['id']}/chunks/").json()
    assert chunks["count"] == body["progress"]["total"]
    assert [c["chunk_index"] for c in chunks["results"]] == list(range(chunks["count"]))
    first = chunks["results"][0]
    assert first["embedding_pending"] is False
    assert bool(first["metadata"].get("section_title")) == (not name.endswith(".txt"))
    assert (first["page_number"] == 1) == name.endswith(".pdf")
    assert "embedding" not in first

    memories = api.get(f"/api/documents/{body['id']}/memories/").json()
    assert memories["count"] > 0
    assert all(m["source"] == "document" and m["source_ref"]["document_id"] == body["id"]
               for m in memories["results"])


def test_upload_with_a_project_scopes_the_derived_memories(api, user):
    project = ProjectFactory(owner=user)
    response = _post(api, "handbook.md", MARKDOWN, project=project.pk)
    assert response.status_code == 202 and response.json()["project"] == project.pk
    _run(response.json()["id"])
    memories = api.get(f"/api/documents/{response.json()['id']}/memories/").json()["results"]
    assert memories and {m["project"] for m in memories} == {project.pk}


def test_title_comes_from_the_file_when_not_given(api):
    response = _post(api, "page.html", files.as_html(files.sample_sections(2, sections=1), title="Quarterly plan"))
    assert response.json()["title"] == ""
    _run(response.json()["id"])
    assert api.get(f"/api/documents/{response.json()['id']}/").json()["title"] == "Quarterly plan"


@pytest.mark.parametrize(("name", "data", "status", "message"), [
    ("tool.exe", b"MZ\x90\x00\x03", 415, "'.exe' are not supported"),
    ("fake.pdf", b"this is not a pdf", 415, "not a PDF"),
    ("picture", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00", 415, "not a supported type"),
    ("empty.txt", b"", 400, "empty"),
], ids=["exe", "fake-pdf", "png", "empty"])
def test_bad_uploads_are_refused_with_a_clear_message(api, media_root, name, data, status, message):
    response = _post(api, name, data)
    assert response.status_code == status, response.content
    assert message in str(response.json())
    assert not Document.objects.exists()
    assert not any(p.is_file() for p in Path(media_root).rglob("*"))


def test_files_over_the_size_limit_are_refused(api, settings, media_root):
    settings.DOCUMENT_MAX_BYTES = 1000
    response = _post(api, "big.txt", b"word " * 300)
    assert response.status_code == 413
    assert response.json()["detail"] == "The file is 1.5 KB; the limit is 1000 bytes."
    huge = _post(api, "huge.txt", b"word " * 30000)  # refused from Content-Length, before reading the body
    assert huge.status_code == 413 and "larger than the limit" in huge.json()["detail"]
    assert _post(api, "ok.txt", b"word " * 100).status_code == 202


def test_uploads_are_readable_by_the_server_user_only(api, media_root):
    response = _post(api, "notes.txt", b"The audit is due on Friday.")
    stored = Path(media_root) / Document.objects.get(pk=response.json()["id"]).file.name
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert stat.S_IMODE(stored.parent.stat().st_mode) == 0o700  # documents/<owner>/
    assert stat.S_IMODE(stored.parent.parent.stat().st_mode) == 0o700  # documents/


def test_a_zip_bomb_is_refused_at_upload(api, settings, media_root):
    bomb = files.zip_bomb_docx()  # ~200 KB that unpacks to 52 MB
    response = _post(api, "report.docx", bomb)
    assert response.status_code == 413
    assert "unpacks from" in response.json()["detail"] and "zip bomb" in response.json()["detail"]
    settings.DOCUMENT_MAX_UNPACKED_BYTES = 100 * 1024
    plain = _post(api, "plan.docx", files.as_docx(files.sample_sections(2)))
    assert plain.status_code == 413 and "the most a document may unpack to is 100 KB" in plain.json()["detail"]
    assert not Document.objects.exists()
    assert not any(p.is_file() for p in Path(media_root).rglob("*"))


def test_path_tricks_in_the_file_name_are_sanitised(api, media_root):
    response = _post(api, "../../../etc/cron.d/evil\x07.txt", b"The audit is due on Friday.")
    assert response.status_code == 202
    document = Document.objects.get(pk=response.json()["id"])
    assert document.filename == "evil.txt"
    stored = (Path(media_root) / document.file.name).resolve()
    assert stored.is_relative_to(Path(media_root).resolve()) and stored.name != "evil.txt"


def test_upload_checks_fields(api, other_user):
    assert _post(api, "a.txt", b"hello", colour="blue").json() == {"colour": ["Unknown field."]}
    foreign = ProjectFactory(owner=other_user)
    response = _post(api, "a.txt", b"hello", project=foreign.pk)
    assert response.status_code == 400 and "project" in response.json()
    assert api.post("/api/documents/", {}, format="multipart").status_code == 400


def test_documents_are_private(api, other_api):
    document_id = _post(api, "handbook.md", MARKDOWN).json()["id"]
    _run(document_id)
    assert other_api.get("/api/documents/").json()["count"] == 0
    for url in (f"/api/documents/{document_id}/", f"/api/documents/{document_id}/chunks/",
                f"/api/documents/{document_id}/memories/"):
        assert other_api.get(url).status_code == 404
    assert other_api.delete(f"/api/documents/{document_id}/").status_code == 404
    assert other_api.post(f"/api/documents/{document_id}/reprocess/").status_code == 404
    found = other_api.post("/api/chunks/search/", {"query": "leads the team", "all_projects": True},
                           format="json").json()
    assert found["results"] == []
    assert api.get("/api/documents/").json()["count"] == 1


def test_list_delete_and_reprocess(api, user, django_capture_on_commit_callbacks, monkeypatch):
    queued = []
    monkeypatch.setattr(process_document, "delay", lambda pk: queued.append(pk))
    first = _post(api, "one.md", MARKDOWN).json()["id"]
    second = _post(api, "two.txt", b"Bruno Tanaka leads the data team.").json()["id"]
    assert [d["id"] for d in api.get("/api/documents/").json()["results"]] == [second, first]
    _run(first)
    memories = Memory.objects.filter(owner=user, is_active=True).count()

    with django_capture_on_commit_callbacks(execute=True):
        response = api.post(f"/api/documents/{first}/reprocess/")
    assert response.status_code == 202 and response.json()["status"] == "pending"
    assert queued == [first]
    _run(first)
    assert api.get(f"/api/documents/{first}/").json()["status"] == "completed"
    assert Memory.objects.filter(owner=user, is_active=True).count() == memories

    stored = Document.objects.get(pk=first).file.name
    with django_capture_on_commit_callbacks(execute=True):
        assert api.delete(f"/api/documents/{first}/").status_code == 204
    assert api.get(f"/api/documents/{first}/").status_code == 404
    assert not Chunk.objects.filter(document_id=first).exists()
    assert not default_storage.exists(stored)
    assert Memory.objects.filter(owner=user, is_active=True).count() == 0
    assert api.patch(f"/api/documents/{second}/", {"title": "x"}, format="json").status_code == 405


def test_chunk_search_modes_filters_and_shape(api, user):
    project = ProjectFactory(owner=user)
    plain = _post(api, "handbook.md", MARKDOWN).json()["id"]
    scoped = _post(api, "secret.txt", b"The zeppelin hangar in Friedrichshafen needs a new roof.",
                   project=project.pk).json()["id"]
    _run(plain)
    _run(scoped)

    for mode in ("semantic", "keyword", "hybrid"):
        response = api.post("/api/chunks/search/", {"query": "customer feedback on onboarding", "mode": mode},
                            format="json")
        assert response.status_code == 200, response.content
        body = response.json()
        assert body["mode"] == mode and body["degraded"] is False and body["results"]
        top = body["results"][0]
        assert top["chunk"]["document"] == plain and top["chunk"]["filename"] == "handbook.md"
        assert top["chunk"]["document_title"] == "handbook.md"
        assert abs(sum(top["parts"].values()) - top["score"]) < 1e-9
        scores = [r["score"] for r in body["results"]]
        assert scores == sorted(scores, reverse=True)

    def hits(**body):
        response = api.post("/api/chunks/search/", {"query": "zeppelin hangar roof", "mode": "keyword", **body},
                            format="json")
        assert response.status_code == 200, response.content
        return [r["chunk"]["document"] for r in response.json()["results"]]

    assert hits() == []  # no project: documents without a project only (seed 004)
    assert hits(project=project.pk) == [scoped]
    assert hits(all_projects=True) == [scoped]
    assert hits(all_projects=True, document=plain) == []
    semantic = api.post("/api/chunks/search/", {"query": "airship hangar repairs", "mode": "semantic",
                                                "project": project.pk}, format="json").json()
    assert semantic["results"][0]["chunk"]["document"] == scoped
    assert all(r["score"] >= 0.3 for r in semantic["results"])
    strict = api.post("/api/chunks/search/", {"query": "airship hangar repairs", "mode": "semantic",
                                              "project": project.pk, "threshold": 0.99}, format="json").json()
    assert strict["results"] == []
    limited = api.post("/api/chunks/search/", {"query": "the", "mode": "hybrid", "limit": 2,
                                               "query_typo": 1}, format="json")
    assert limited.status_code == 400 and limited.json() == {"query_typo": ["Unknown field."]}
    assert api.post("/api/chunks/search/", {"query": "x", "mode": "fuzzy"}, format="json").status_code == 400
    assert api.post("/api/chunks/search/", {"query": "x", "project": 999999}, format="json").status_code == 400


def test_memory_search_can_return_matching_chunks_beside_memories(api, other_api, user):
    project = ProjectFactory(owner=user)
    plain = _post(api, "handbook.md", MARKDOWN).json()["id"]
    scoped = _post(api, "hangar.txt", b"The zeppelin hangar roof in Friedrichshafen is due for repair on "
                   b"Friday, March 6.", project=project.pk).json()["id"]
    _run(plain)
    _run(scoped)
    derived = [m["id"] for m in api.get(f"/api/documents/{scoped}/memories/").json()["results"]]
    assert derived
    other = _post(other_api, "theirs.txt", b"Our zeppelin hangar roof leaks in Friedrichshafen.").json()["id"]
    _run(other)

    def search(**body):
        response = api.post("/api/memories/search/", {"query": "zeppelin hangar roof", **body}, format="json")
        assert response.status_code == 200, response.content
        return response.json()

    assert "chunks" not in search(mode="keyword")
    for mode in ("semantic", "keyword", "hybrid"):
        body = search(mode=mode, include_chunks=True, project=project.pk)
        assert body["chunks"], mode
        top = body["chunks"][0]
        assert top["chunk"]["document"] == scoped and "Friedrichshafen" in top["chunk"]["content"]
        assert top["chunk"]["filename"] == "hangar.txt" and abs(sum(top["parts"].values()) - top["score"]) < 1e-9
        assert other not in {c["chunk"]["document"] for c in body["chunks"]}
        assert [r["memory"]["id"] for r in body["results"]][:1] == derived[:1], mode
    # the memory search's scope applies to the chunks too: no project -> documents without a project only
    assert scoped not in {c["chunk"]["document"] for c in search(mode="keyword", include_chunks=True)["chunks"]}
    assert [c["chunk"]["document"] for c in search(mode="keyword", include_chunks=True, limit=1,
                                                   all_projects=True)["chunks"]] == [scoped]
