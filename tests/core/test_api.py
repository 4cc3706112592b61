"""The OpenAPI schema documents every status code an operation can answer (schemathesis, in
tests/memento/test_schemathesis.py, checks the answers against it); error details never carry lone surrogates."""

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
