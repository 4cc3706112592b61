"""Shapes every API shares: a NUL or a lone surrogate anywhere in a JSON field, a text field or a tool argument is a
400 naming the field (PostgreSQL refused them with a 500), and a wrong type where text belongs is a 400, not
stored as its string."""

import json

import pytest

from conversations.models import Conversation, Message
from core.serializers import CharField, StrictSerializer
from memories.models import Memory
from tests.factories import ConversationFactory, MemoryFactory

BAD_TEXTS = {"nul": "a\x00b", "surrogate": "a\ud800b"}


def send(api, method, url, body):
    """`body` as JSON text: json.dumps writes a lone surrogate as the escape \\ud800, as an attacker would."""
    return getattr(api, method)(url, json.dumps(body), content_type="application/json")


def json_bodies(bad):
    conversation_id = "{conversation}"
    return [
        ("post", "/api/memories/", {"content": "ok", "metadata": {"k": bad}}, "metadata"),
        ("post", "/api/memories/", {"content": "ok", "entities": {"people": [bad]}}, "entities"),
        ("post", "/api/memories/", {"content": "ok", "links": {bad: 1}}, "links"),
        ("post", "/api/memories/", {"content": "ok", "source_ref": {"doc": {"deep": [bad]}}}, "source_ref"),
        ("post", "/api/memories/", {"content": bad}, "content"),
        ("post", "/api/memories/", {"content": "ok", "key": bad}, "key"),
        ("post", "/api/memories/", {"content": "ok", "namespace": ["a", bad]}, "namespace"),
        ("post", "/api/conversations/", {"metadata": {"a": bad}}, "metadata"),
        ("post", "/api/conversations/", {"title": bad}, "title"),
        ("post", f"/api/conversations/{conversation_id}/messages/",
         {"messages": [{"role": "user", "content": "hi", "metadata": {"x": [bad]}}]}, "messages"),
        ("post", f"/api/conversations/{conversation_id}/messages/",
         {"messages": [{"role": "user", "content": bad}]}, "messages"),
        ("post", "/api/projects/", {"name": bad}, "name"),
        ("put", "/api/store/items", {"namespace": ["a"], "key": "k", "value": {"text": bad}}, "value"),
        ("put", "/api/store/items", {"namespace": ["a"], "key": "k", "value": {bad: "x"}}, "value"),
        ("post", "/api/store/batch", {"ops": [{"op": "put", "namespace": ["a"], "key": "k",
                                               "value": {"a": [bad]}}]}, "ops[0].value"),
        ("post", "/api/tools/call/", {"name": "add_memory", "arguments": {"content": "ok", "metadata": {"m": bad}}},
         "metadata"),
        ("post", "/api/tools/call/", {"name": "add_memory", "arguments": json.dumps({"content": bad})}, "content"),
        ("post", "/api/tools/call/", {"name": "upsertMemory", "arguments": {"content": "ok", "tags": [bad]}}, "tags"),
    ]


CASES = [(kind, *case) for kind, bad in BAD_TEXTS.items() for case in json_bodies(bad)]


@pytest.mark.parametrize(("kind", "method", "url", "body", "field"), CASES,
                         ids=[f"{c[0]}-{c[2]}-{c[4]}" for c in CASES])
def test_unstorable_text_anywhere_is_a_400_naming_the_field(api, user, kind, method, url, body, field):
    conversation = ConversationFactory(owner=user)
    response = send(api, method, url.format(conversation=conversation.pk), body)
    assert response.status_code == 400, response.content
    assert field in response.json(), response.json()
    assert not Memory.objects.exists() and not Message.objects.exists()
    assert Conversation.objects.count() == 1


@pytest.mark.parametrize("bad", BAD_TEXTS.values(), ids=BAD_TEXTS)
def test_unstorable_text_in_an_update_is_a_400(api, user, bad):
    memory = MemoryFactory(owner=user)
    conversation = ConversationFactory(owner=user)
    assert send(api, "patch", f"/api/memories/{memory.pk}/", {"metadata": {"x": bad}}).status_code == 400
    assert send(api, "patch", f"/api/conversations/{conversation.pk}/", {"metadata": {bad: 1}}).status_code == 400
    memory.refresh_from_db()
    assert memory.version == 1


def test_an_unstorable_argument_over_mcp_is_a_tool_error_naming_it(api):
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "add_memory", "arguments": {"content": "ok", "metadata": {"note": "a\x00b"}}}}
    response = api.post("/mcp", json.dumps(call), content_type="application/json",
                        HTTP_ACCEPT="application/json, text/event-stream")
    assert response.status_code == 200
    result = response.json()["result"]
    assert result["isError"] is True
    assert "metadata" in result["content"][0]["text"]
    assert not Memory.objects.exists()


@pytest.mark.parametrize(("method", "url", "body", "field"), [
    ("post", "/api/memories/", {"content": 123}, "content"),
    ("post", "/api/memories/", {"content": "ok", "key": 7}, "key"),
    ("post", "/api/memories/", {"content": "ok", "namespace": ["a", 1]}, "namespace"),
    ("post", "/api/memories/", {"content": "ok", "tags": [True]}, "tags"),
    ("post", "/api/memories/", {"content": "ok", "category": 1.5}, "category"),
    ("post", "/api/memories/", {"content": "ok", "source_ref": 5}, "source_ref"),
    ("post", "/api/memories/", {"content": "ok", "metadata": ["a"]}, "metadata"),
    ("post", "/api/memories/batch/", {"items": [{"content": 5}]}, "items"),
    ("post", "/api/memories/search/", {"query": 42}, "query"),
    ("post", "/api/conversations/", {"title": 1}, "title"),
    ("post", "/api/conversations/{conversation}/messages/", {"messages": [{"role": "user", "content": 1}]},
     "messages"),
    ("post", "/api/projects/", {"name": 12}, "name"),
    ("post", "/api/chunks/search/", {"query": 3}, "query"),
])
def test_a_wrong_type_is_a_400(api, user, method, url, body, field):
    conversation = ConversationFactory(owner=user)
    response = send(api, method, url.format(conversation=conversation.pk), body)
    assert response.status_code == 400, response.content
    assert field in response.json()
    assert not Memory.objects.exists()


def test_an_error_quoting_a_lone_surrogate_is_still_json(api, user):
    conversation = ConversationFactory(owner=user)
    response = send(api, "post", f"/api/conversations/{conversation.pk}/messages/",
                    {"messages": [{"role": "\ud800", "content": "hi"}]})
    assert response.status_code == 400
    assert "\\ud800" in json.dumps(response.json())


@pytest.mark.parametrize("text", ["null", "[" * 3000 + "]" * 3000], ids=["null", "deep"])
def test_json_text_in_a_form_field_is_never_a_500(api, user, text):
    """A multipart PATCH with metadata=null was a 500 (NOT NULL violation); a JSON object field takes no JSON
    text from a form, so the memory keeps an object."""
    memory = MemoryFactory(owner=user, metadata={"a": 1})
    response = api.patch(f"/api/memories/{memory.pk}/", {"metadata": text}, format="multipart")
    assert response.status_code in (200, 400)
    memory.refresh_from_db()
    assert isinstance(memory.metadata, dict)


def test_represent_answers_what_the_serializer_answers(user):
    """The per-thread serializer of `represent` gives the same JSON as a new one, for one memory and for many."""
    from core.serializers import represent
    from memories.models import Memory
    from memories.serializers import MemorySerializer
    from tests.factories import MemoryFactory

    MemoryFactory(owner=user, tags=["a"], metadata={"k": [1, 2]})
    MemoryFactory(owner=user, embedding=None, key="k2")
    rows = list(Memory.objects.filter(owner=user).select_related("project").for_display())
    assert represent(MemorySerializer, rows, many=True) == MemorySerializer(rows, many=True).data
    for row in rows:
        assert represent(MemorySerializer, row) == MemorySerializer(row).data


def test_represent_answers_what_the_serializer_answers_for_nested_answers_and_odd_instances(user):
    """Nested serializers, lists of them, method fields and relations by key; a dict without an optional key
    (DRF leaves the field out) and an object whose attribute is missing take DRF's own loop and answer the same."""
    from types import SimpleNamespace

    from core.serializers import represent
    from memento.search import MemoriesOnlyResponseSerializer, SearchResponseSerializer
    from memories.models import Memory, Project
    from memories.serializers import MemorySerializer
    from tests.factories import MemoryFactory

    project = Project.objects.create(owner=user, name="p")
    MemoryFactory(owner=user, project=project, happened_at=None, expires_at=None)
    MemoryFactory(owner=user, embedding=None, tags=[], metadata={"nested": {"x": [None, 1.5]}})
    rows = list(Memory.objects.filter(owner=user).select_related("project").for_display())
    payload = {"mode": "hybrid", "ranking": "blend", "degraded": False,
               "results": [{"memory": row, "score": 0.5, "parts": {"semantic": 0.1}} for row in rows]}
    assert represent(MemoriesOnlyResponseSerializer, payload) == MemoriesOnlyResponseSerializer(payload).data
    assert represent(SearchResponseSerializer, payload) == SearchResponseSerializer(payload).data  # no "chunks"
    assert represent(MemorySerializer, next(r for r in rows if r.project_id))["project"] == project.pk
    odd = SimpleNamespace(**{name: getattr(rows[0], name) for name in ("id", "content")})
    with pytest.raises(AttributeError):
        MemorySerializer(odd).data  # noqa: B018
    with pytest.raises(AttributeError):
        represent(MemorySerializer, odd)


# --- moments the stack can read back (core.times) -------------------------------------------------------------

UNREADABLE_MOMENTS = ["9999-12-31T23:59:59-12:00", "0001-01-01T00:00:00+14:00", "9999-12-31T23:30:00Z"]


@pytest.mark.parametrize("moment", UNREADABLE_MOMENTS)
def test_a_moment_python_cannot_read_back_is_a_400_naming_the_field(api, user, moment):
    conversation = ConversationFactory(owner=user)
    cases = [
        ("post", "/api/memories/", {"content": "ok", "happened_at": moment}, "happened_at"),
        ("post", "/api/memories/", {"content": "ok", "expires_at": moment}, "expires_at"),
        ("post", "/api/memories/", {"content": "ok", "valid_from": moment}, "valid_from"),
        ("post", "/api/memories/search/", {"query": "ok", "created_after": moment}, "created_after"),
        ("post", "/api/memories/search/", {"query": "ok", "as_of": moment}, "as_of"),
        ("post", f"/api/conversations/{conversation.pk}/messages/",
         {"messages": [{"role": "user", "content": "hi", "sent_at": moment}]}, "sent_at"),
    ]
    for method, url, body, field in cases:
        response = send(api, method, url, body)
        assert response.status_code == 400, (url, field, response.content)
        assert field in json.dumps(response.json()), (url, response.json())
    assert api.get("/api/memories/", {"happened_after": moment}).status_code == 400
    assert not Memory.objects.exists() and not Message.objects.exists()
    assert api.get("/api/memories/").status_code == 200


def test_the_edges_of_the_readable_range_are_accepted(api):
    for moment in ("0001-01-02T00:00:00Z", "9999-12-30T00:00:00+00:00"):
        response = send(api, "post", "/api/memories/", {"content": f"edge {moment}", "happened_at": moment})
        assert response.status_code == 201, response.content
    assert len(api.get("/api/memories/").json()["results"]) == 2


def test_a_refused_choice_lists_the_valid_ones(api):
    """Any choice field of the API (declared, or made from a model's choices) names what it accepts."""
    response = api.post("/api/memories/search/", {"query": "tea", "mode": "fuzzy"}, format="json")
    assert response.status_code == 400
    assert response.json()["mode"] == ['"fuzzy" is not a valid choice; choose one of: semantic, keyword, hybrid.']
    listed = api.get("/api/memories/", {"source": "rumour"})
    assert listed.status_code == 400 and "choose one of: explicit, extracted" in str(listed.json())


class _Shape(StrictSerializer):
    name = CharField()
    note = CharField(required=False)
    colour = CharField(default="blue")


def test_unknown_fields_are_named_with_the_required_ones_missing():
    body = _Shape(data={"nmae": "typo"})
    assert not body.is_valid()
    assert body.errors == {"nmae": ["Unknown field."], "name": ["This field is required."]}
    partial = _Shape(data={"nmae": "typo"}, partial=True)
    assert not partial.is_valid() and partial.errors == {"nmae": ["Unknown field."]}
    assert _Shape(data={"name": "x"}).is_valid()
