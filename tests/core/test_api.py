"""The OpenAPI schema documents every status code an operation can answer (schemathesis, in
tests/memento/test_schemathesis.py, checks the answers against it); error details never carry lone surrogates; an
oversized body is a JSON 413 and every missing object the same 404."""

import json
import logging

import pytest
from drf_spectacular.generators import SchemaGenerator


@pytest.fixture(scope="module")
def schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def operations(schema):
    for path, methods in schema["paths"].items():
        for method, operation in methods.items():
            yield path, method, operation


def test_every_operation_documents_its_errors(schema):
    for path, method, operation in operations(schema):
        codes = set(operation["responses"])
        assert {"429", "503"} <= codes, (path, method)
        if path != "/api/auth/token/":
            assert {"401", "403"} <= codes, (path, method)
        if "{" in path:
            assert "404" in codes and "text/html" in operation["responses"]["404"]["content"], (path, method)
        if "requestBody" in operation:
            assert {"400", "413", "415"} <= codes, (path, method)
        if method == "get" and any(p["in"] == "query" for p in operation.get("parameters", ())):
            # a query string can outgrow the web server's request line (gunicorn answers 414 with its own page)
            assert "text/html" in operation["responses"]["414"]["content"], (path, method)
        assert operation["responses"]["429"]["content"]["application/json"]["schema"] == {
            "$ref": "#/components/schemas/Error"}


def test_strict_request_bodies_refuse_unknown_fields_in_the_schema(schema):
    components = schema["components"]["schemas"]
    assert components["MemoryWriteRequest"]["additionalProperties"] is False
    assert components["StorePutRequest"]["additionalProperties"] is False
    assert "requestBody" in schema["paths"]["/api/store/items"]["delete"]


def test_request_components_say_which_texts_may_not_be_blank(schema):
    """The API answers 400 "may not be blank" for "" in such a field: the request schema says minLength 1 (without
    it, schemathesis took the 400 for a sign that `ranking` was required, then found a search without it accepted:
    ST201). Responses, which may carry "" in other components' texts, say nothing of it."""
    components = schema["components"]["schemas"]
    search = components["SearchRequest"]
    assert search["required"] == ["query"]
    assert search["properties"]["ranking"]["minLength"] == 1 and search["properties"]["query"]["minLength"] == 1
    assert "minLength" not in components["SearchResponse"]["properties"]["ranking"]


def test_lists_that_are_not_paged_are_documented_as_lists(schema):
    for action in ("chain", "history"):
        ok = schema["paths"][f"/api/memories/{{id}}/{action}/"]["get"]["responses"]["200"]
        assert ok["content"]["application/json"]["schema"]["type"] == "array"


def test_a_conversation_answers_its_message_count_after_create_and_update(api):
    created = api.post("/api/conversations/", {"title": "Trip"}, format="json").json()
    assert created["message_count"] == 0
    updated = api.patch(f"/api/conversations/{created['id']}/", {"title": "Trip 2"}, format="json").json()
    assert updated["message_count"] == 0 and updated["title"] == "Trip 2"


@pytest.mark.parametrize(("method", "url", "headers"), [
    ("post", "/api/memories/", {}),
    ("post", "/api/memories/", {"HTTP_IDEMPOTENCY_KEY": "big-1"}),  # the key's fingerprint reads the body first
    ("post", "/api/memories/batch/", {}),
    ("put", "/api/store/items", {}),
    ("post", "/api/tools/call/", {}),
])
def test_a_body_over_the_upload_limit_is_a_json_413_naming_the_limit_and_no_error_is_logged(
        api, settings, caplog, method, url, headers):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    body = json.dumps({"content": "x" * 2000})
    response = getattr(api, method)(url, body, content_type="application/json", **headers)
    assert response.status_code == 413 and response["Content-Type"] == "application/json"
    assert "larger than 1,000 bytes" in response.json()["detail"]
    assert "DATA_UPLOAD_MAX_MEMORY_SIZE" in response.json()["detail"]
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


def test_a_form_body_over_the_upload_limit_is_a_json_413_too(api, settings):
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 1000
    response = api.post("/api/memories/", {"content": "x" * 2000})  # multipart
    assert response.status_code == 413 and "1,000 bytes" in response.json()["detail"]


def test_every_missing_object_is_the_same_404(api):
    for url in ("/api/reminders/999999/", "/api/webhooks/999999/", "/api/projects/999999/",
                "/api/profile/entries/999999/", "/api/tokens/999999/", "/api/end-users/999999/",
                "/api/consolidation/999999/", "/api/conversations/999999/", "/api/documents/999999/",
                "/api/memories/00000000-0000-0000-0000-000000000000/"):
        response = api.get(url)
        assert (response.status_code, response.json()) == (404, {"detail": "Not found."}), url
