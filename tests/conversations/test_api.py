"""Conversations, messages, extraction on append (tasks run eagerly here; tests/conversations/test_pipeline.py
uses a real worker), the context endpoint and the agent tools."""

import json

import pytest

from conversations.models import Message
from memories import services as memory_services
from memories.models import Memory
from tests.factories import ConversationFactory, ProjectFactory


def post(api, url, body):
    return api.post(url, body, format="json")


def test_conversation_crud_and_end(api):
    created = post(api, "/api/conversations/", {"title": "Trip to Japan", "agent_id": "travel-bot"})
    assert created.status_code == 201
    cid = created.json()["id"]
    assert created.json()["status"] == "active"
    assert api.patch(f"/api/conversations/{cid}/", {"summary": "planning"}, format="json").status_code == 200
    ended = post(api, f"/api/conversations/{cid}/end/", {})
    assert ended.status_code == 200
    assert ended.json()["status"] == "completed" and ended.json()["ended_at"]
    refused = post(api, f"/api/conversations/{cid}/messages/", {"messages": [{"role": "user", "content": "hi"}]})
    assert refused.status_code == 400
    assert api.delete(f"/api/conversations/{cid}/").status_code == 204


def test_a_message_over_the_character_limit_is_a_400_naming_its_content(api, settings):
    cid = post(api, "/api/conversations/", {}).json()["id"]
    long = " ".join(["y" * 1000] * 101)  # over MESSAGE_MAX_CHARS (100,000), few word pieces
    refused = post(api, f"/api/conversations/{cid}/messages/", {"messages": [{"role": "user", "content": long}]})
    assert refused.status_code == 400
    assert f"{settings.MESSAGE_MAX_CHARS}" in refused.json()["messages"]["0"]["content"][0]
    assert not Message.objects.exists()


def test_a_bare_message_is_a_400_naming_messages_as_required(api):
    cid = post(api, "/api/conversations/", {}).json()["id"]
    refused = post(api, f"/api/conversations/{cid}/messages/", {"role": "user", "content": "hi"})
    assert refused.status_code == 400
    body = refused.json()
    assert body["role"] == ["Unknown field."] and body["content"] == ["Unknown field."]
    assert body["messages"][0].startswith("This field is required") and '{"messages": [' in body["messages"][0]
    assert post(api, f"/api/conversations/{cid}/messages/", {}).json()["messages"] == body["messages"]


def test_another_users_conversation_is_a_404(api, other_user):
    theirs = ConversationFactory(owner=other_user)
    assert api.get(f"/api/conversations/{theirs.pk}/").status_code == 404
    assert api.get(f"/api/conversations/{theirs.pk}/messages/").status_code == 404
    assert post(api, f"/api/conversations/{theirs.pk}/messages/",
                {"messages": [{"role": "user", "content": "x"}]}).status_code == 404
    assert api.get(f"/api/conversations/{theirs.pk}/context/").status_code == 404
    assert api.get("/api/conversations/").json()["count"] == 0
    project = ProjectFactory(owner=other_user)
    assert post(api, "/api/conversations/", {"project": project.pk}).status_code == 400


def test_conversation_metadata_must_be_an_object(api):
    refused = post(api, "/api/conversations/", {"metadata": None})
    assert refused.status_code == 400 and "metadata" in refused.json()
    assert post(api, "/api/conversations/", {"metadata": [1]}).status_code == 400
    # the form encoding the schema also allows (found by schemathesis: a null there was a 500)
    assert api.post("/api/conversations/", {"agent_id": "", "metadata": "null"}, format="multipart").status_code < 500
    assert post(api, "/api/conversations/", {"metadata": {"channel": "sms"}}).json()["metadata"] == {"channel": "sms"}


def test_append_is_ordered_and_idempotent_by_client_id(api, user):
    cid = post(api, "/api/conversations/", {}).json()["id"]
    url = f"/api/conversations/{cid}/messages/"
    first = post(api, url, {"messages": [
        {"role": "user", "content": "Hello there", "client_message_id": "m1"},
        {"role": "assistant", "content": "Hi! How can I help?", "client_message_id": "m2"},
    ]})
    assert first.status_code == 201
    assert [m["sequence"] for m in first.json()] == [1, 2]
    assert [m["extraction_status"] for m in first.json()] == ["pending", "skipped"]
    again = post(api, url, {"messages": [{"role": "user", "content": "Hello there", "client_message_id": "m1"}]})
    assert again.status_code == 200
    assert again.json()[0]["id"] == first.json()[0]["id"]
    assert Message.objects.filter(conversation_id=cid).count() == 2
    listed = api.get(url).json()["results"]
    assert [m["sequence"] for m in listed] == [1, 2]


@pytest.mark.parametrize("body", [
    {"messages": []},
    {"messages": [{"role": "robot", "content": "x"}]},
    {"messages": [{"role": "user"}]},
    {"messages": [{"role": "user", "content": "x", "colour": "red"}]},
    {"message": "hi"},
])
def test_bad_messages_are_400(api, body):
    cid = post(api, "/api/conversations/", {}).json()["id"]
    assert post(api, f"/api/conversations/{cid}/messages/", body).status_code == 400
    assert not Message.objects.exists()


def test_user_messages_become_memories_with_provenance(api, user, eager, django_capture_on_commit_callbacks):
    cid = post(api, "/api/conversations/", {"title": "chat"}).json()["id"]
    with django_capture_on_commit_callbacks(execute=True):
        response = post(api, f"/api/conversations/{cid}/messages/", {"messages": [
            {"role": "user", "content": "I'm allergic to peanuts."},
            {"role": "assistant", "content": "Noted, I will avoid peanuts."},
            {"role": "user", "content": "What's the weather like?"},
        ]})
    assert response.status_code == 201
    messages = {m.sequence: m for m in Message.objects.filter(conversation_id=cid)}
    assert messages[1].extraction_status == "done"
    assert messages[3].extraction_status == "done"
    memory = Memory.objects.get(owner=user)
    assert "peanut" in memory.content.lower()
    assert memory.conversation_id is not None and memory.message_id == messages[1].pk
    assert memory.source_ref["message_id"] == str(messages[1].pk)
    record = memory.history.get()
    assert f"extracted from message {messages[1].pk}" in record.history_change_reason
    assert "ADD" in record.history_change_reason
    listed = api.get(f"/api/conversations/{cid}/messages/").json()["results"]
    assert listed[0]["memories"] == [str(memory.pk)]


def test_extraction_reconciles_add_update_noop(api, user, eager, django_capture_on_commit_callbacks):
    cid = post(api, "/api/conversations/", {}).json()["id"]

    def say(text):
        with django_capture_on_commit_callbacks(execute=True):
            post(api, f"/api/conversations/{cid}/messages/", {"messages": [{"role": "user", "content": text}]})

    say("I live in Paris.")
    paris = Memory.objects.get(owner=user)
    say("I live in Paris.")
    assert Memory.objects.filter(owner=user).count() == 1  # NOOP
    paris.refresh_from_db()
    assert "NOOP" in paris.history.order_by("-history_date").first().history_change_reason
    say("I moved to Berlin last month.")
    berlin = Memory.objects.get(owner=user, superseded_by__isnull=True, is_active=True)
    paris.refresh_from_db()
    assert "Berlin" in berlin.content and berlin.supersedes_id == paris.pk
    assert paris.superseded_by_id == berlin.pk
    assert "UPDATE" in berlin.history.first().history_change_reason


def test_a_new_figure_for_the_same_thing_supersedes_the_old(api, user, eager, django_capture_on_commit_callbacks):
    # the two sentences embed at cosine > 0.95: only the figures tell them apart
    cid = post(api, "/api/conversations/", {}).json()["id"]
    for text in ("Remember that my locker code is 4411.", "Remember that my locker code is 9072."):
        with django_capture_on_commit_callbacks(execute=True):
            post(api, f"/api/conversations/{cid}/messages/", {"messages": [{"role": "user", "content": text}]})
    old, new = Memory.objects.filter(owner=user).order_by("created_at")
    assert "4411" in old.content and "9072" in new.content
    assert new.supersedes_id == old.pk and new.source == "explicit"
    assert "UPDATE" in new.history.first().history_change_reason


def test_rerunning_extraction_creates_nothing_new(user, eager):
    from conversations import services
    from conversations.tasks import extract_message

    conversation = ConversationFactory(owner=user)
    [(message, _)] = services.messages_append(conversation=conversation,
                                              messages=[{"role": "user", "content": "I speak Portuguese."}])
    assert extract_message.delay(str(message.pk)).get() == "done"
    memory = Memory.objects.get()
    versions = memory.history.count()
    assert extract_message.delay(str(message.pk)).get() == "done"
    # even when the message is reset to pending (a redelivered task after a crash before the status was
    # visible), the memory is recognised and not stored twice
    Message.objects.filter(pk=message.pk).update(extraction_status="pending")
    assert extract_message.delay(str(message.pk)).get() == "done"
    assert list(Memory.objects.values_list("pk", flat=True)) == [memory.pk]
    assert memory.history.count() == versions + 1  # the NOOP refresh, nothing else


def test_context_respects_the_budget(api, user):
    for text in ["Is allergic to peanuts", "Prefers vegetarian food", "Lives in Lisbon",
                 "Daughter Emma starts school in May", "Works as a nurse on night shifts"]:
        memory_services.memory_create(owner=user, content=text)
    cid = post(api, "/api/conversations/", {}).json()["id"]
    query = "any food allergies or food preferences to keep in mind for dinner?"
    big = api.get(f"/api/conversations/{cid}/context/", {"query": query}).json()
    assert big["text"].startswith("About the user (profile):") and "peanuts" in big["text"]  # the profile first
    profile = big["items"][0]
    assert profile["type"] == "profile" and profile["source"]["memory_ids"]
    assert all(item["type"] == "memory" and item["source"]["memory_id"] for item in big["items"][1:])
    # what the profile says is not repeated among the memories
    assert set(profile["source"]["memory_ids"]).isdisjoint(m["id"] for m in big["memories"])
    assert big["used_tokens"] <= big["budget"]
    small = api.get(f"/api/conversations/{cid}/context/", {"query": query, "budget": 20}).json()
    assert small["used_tokens"] <= 20
    assert len(small["items"]) < len(big["items"])
    assert api.get(f"/api/conversations/{cid}/context/", {"budget": 3}).status_code == 400


def test_context_defaults_to_the_latest_user_message(api, user, eager, django_capture_on_commit_callbacks):
    memory_services.memory_create(owner=user, content="Is allergic to peanuts")
    cid = post(api, "/api/conversations/", {}).json()["id"]
    post(api, f"/api/conversations/{cid}/messages/", {"messages": [
        {"role": "user", "content": "Can you suggest a snack with nuts?"}]})
    context = api.get(f"/api/conversations/{cid}/context/").json()
    assert context["query"] == "Can you suggest a snack with nuts?"
    assert "peanuts" in context["text"]


def test_context_as_of_gives_what_was_true_then(api, user):
    old = memory_services.memory_create(owner=user, content="Rides a red Vespa scooter to work",
                                        valid_from="2022-04-02T08:00:00Z").memory
    memory_services.memory_create(owner=user, content="Rides an electric cargo bike to work", supersedes=old.pk,
                                  valid_from="2024-07-15T08:00:00Z")
    cid = post(api, "/api/conversations/", {}).json()["id"]
    query = {"query": "how does the user get to work?"}
    now = api.get(f"/api/conversations/{cid}/context/", query).json()
    assert "Rides an electric cargo bike to work" in now["text"] and "Vespa" not in now["text"]
    assert (now["as_of"], now["past"]) == (None, False)
    then = api.get(f"/api/conversations/{cid}/context/", {**query, "as_of": "2023-01-31"}).json()
    assert [m["content"] for m in then["memories"]] == ["Rides a red Vespa scooter to work"]
    assert "Rides a red Vespa scooter to work [true then: 2 April 2022 to 15 July 2024; no longer true now]" in then[
        "text"]
    assert then["as_of"].startswith("2023-01-31T23:59:59") and then["past"]
    assert then["items"][0]["source"]["valid_to"].startswith("2024-07-15")
    exact = api.get(f"/api/conversations/{cid}/context/", {**query, "as_of": "2024-07-15T09:00:00Z"}).json()
    assert [m["content"] for m in exact["memories"]] == ["Rides an electric cargo bike to work"]
    bad = api.get(f"/api/conversations/{cid}/context/", {**query, "as_of": "last summer"})
    assert bad.status_code == 400 and "as_of" in json.dumps(bad.json())
    tool = post(api, "/api/tools/call/", {"name": "get_context", "arguments": {**query, "as_of": "2023-01-31"}})
    assert tool.status_code == 200 and "Vespa" in tool.json()["text"] and "cargo bike" not in tool.json()["text"]
    assert tool.json()["data"]["as_of"].startswith("2023-01-31T23:59:59")
    refused = post(api, "/api/tools/call/", {"name": "get_context", "arguments": {**query, "as_of": "yesterday"}})
    assert refused.status_code == 400 and "as_of" in json.dumps(refused.json())
    searched = post(api, "/api/tools/call/", {"name": "search_memories", "arguments": {**query, "as_of": "2023-01-31"}})
    assert [r["content"] for r in searched.json()["data"]["results"]] == ["Rides a red Vespa scooter to work"]
    current = post(api, "/api/tools/call/", {"name": "search_memories", "arguments": query}).json()["data"]
    assert [r["content"] for r in current["results"]] == ["Rides an electric cargo bike to work"]
    refused = post(api, "/api/tools/call/", {"name": "search_memories", "arguments": {**query, "as_of": "soon"}})
    assert refused.status_code == 400 and "as_of" in json.dumps(refused.json())


def test_tool_definitions(api):
    """The same tools as /mcp (conversations/tools.py); the seed's three names are call-only aliases."""
    tools = api.get("/api/tools/").json()["tools"]
    names = [t["function"]["name"] for t in tools]
    assert names == ["add_memory", "search_memories", "get_memory", "list_memories", "update_memory",
                     "delete_memory", "memory_history", "get_profile", "list_reminders", "update_reminder",
                     "get_context"]
    add = tools[0]["function"]["parameters"]
    assert {"content", "metadata", "key"} <= set(add["properties"]) and add["required"] == ["content"]
    assert not any("user" in name for t in tools for name in t["function"]["parameters"]["properties"])


def test_tool_calls_round_trip(api, user):
    call = lambda name, arguments: post(api, "/api/tools/call/", {"name": name, "arguments": arguments})  # noqa: E731
    stored = call("upsertMemory", json.dumps({"content": "Prefers aisle seats", "key": "seat"}))
    assert stored.status_code == 200
    body = stored.json()
    assert body["success"] is True and body["memoryId"] and body["message"]
    updated = call("upsertMemory", {"content": "Prefers window seats", "key": "seat"}).json()
    assert updated["memoryId"] == body["memoryId"]
    found = call("searchMemory", {"query": "which seat does the user like on planes?"}).json()
    assert found["results"][0]["memoryId"] == body["memoryId"]
    deleted = call("deleteMemory", {"key": "seat"}).json()
    assert deleted["success"] is True
    assert not Memory.objects.get(pk=body["memoryId"]).is_active
    assert call("deleteMemory", {"memoryId": body["memoryId"]}).json()["success"] is False


@pytest.mark.parametrize(("name", "arguments"), [
    ("upsertMemory", "{not json"),
    ("upsertMemory", {}),
    ("upsertMemory", {"content": 5}),
    ("upsertMemory", {"content": "x", "extra": 1}),
    ("searchMemory", {"query": "x", "limit": 500}),
    ("deleteMemory", {}),
    ("upsertMemory", '{"content": "x", "importance": NaN}'),
    ("add_memory", {"content": "nul \x00 byte"}),
    ("search_memories", {"query": "x", "limit": 2.5}),
    ("launchRocket", {}),
])
def test_bad_tool_calls_are_400(api, name, arguments):
    response = post(api, "/api/tools/call/", {"name": name, "arguments": arguments})
    assert response.status_code == 400


def test_tool_calls_never_touch_another_users_memory(api, other_user):
    theirs = memory_services.memory_create(owner=other_user, content="their secret", key="k").memory
    result = post(api, "/api/tools/call/", {"name": "deleteMemory", "arguments": {"memoryId": str(theirs.pk)}})
    assert result.json()["success"] is False
    assert Memory.objects.get(pk=theirs.pk).is_active


def test_history_with_sent_at_and_names_and_a_bad_time_is_a_400(api):
    cid = post(api, "/api/conversations/", {}).json()["id"]
    bad = post(api, f"/api/conversations/{cid}/messages/", {"messages": [
        {"role": "user", "content": "hi", "sent_at": "last tuesday"}]})
    assert bad.status_code == 400 and "sent_at" in json.dumps(bad.json())
    sent = post(api, f"/api/conversations/{cid}/messages/", {"messages": [
        {"role": "user", "name": "Bob", "content": "Second", "sent_at": "2023-05-08T14:00:00Z"},
        {"role": "assistant", "content": "First", "sent_at": "2023-05-08T13:00:00+00:00"}]})
    assert sent.status_code == 201
    listed = api.get(f"/api/conversations/{cid}/messages/").json()["results"]
    assert [(m["content"], m["name"], m["sent_at"]) for m in listed] == [
        ("First", "", "2023-05-08T13:00:00Z"), ("Second", "Bob", "2023-05-08T14:00:00Z")]


def test_memory_search_includes_messages_when_asked(api, user, eager, django_capture_on_commit_callbacks):
    cid = post(api, "/api/conversations/", {}).json()["id"]
    with django_capture_on_commit_callbacks(execute=True):
        post(api, f"/api/conversations/{cid}/messages/", {"messages": [
            {"role": "assistant", "content": "Your locker number at the gym is 318."}]})
    plain = post(api, "/api/memories/search/", {"query": "gym locker number"}).json()
    assert "messages" not in plain
    body = post(api, "/api/memories/search/", {"query": "gym locker number", "include_messages": True}).json()
    assert body["messages"][0]["message"]["content"] == "Your locker number at the gym is 318."
    assert body["messages"][0]["message"]["conversation"] == cid and body["messages"][0]["message"]["embedded"]


def test_context_endpoint_returns_items_with_their_sources(api, user, eager, django_capture_on_commit_callbacks):
    cid = post(api, "/api/conversations/", {"title": "Gym"}).json()["id"]
    with django_capture_on_commit_callbacks(execute=True):
        post(api, f"/api/conversations/{cid}/messages/", {"messages": [
            {"role": "user", "content": "Where do I keep my gym bag?"},
            {"role": "assistant", "content": "In locker 318, next to the sauna."}]})
    context = api.get(f"/api/conversations/{cid}/context/", {"query": "which locker at the gym?"}).json()
    excerpt = next(i for i in context["items"] if i["type"] == "excerpt")
    assert excerpt["source"]["conversation_id"] == cid and excerpt["source"]["conversation_title"] == "Gym"
    assert "assistant: In locker 318" in excerpt["text"] and excerpt["text"] in context["text"]
    assert context["used_tokens"] <= context["budget"]


def test_forget_erases_the_conversation_and_what_was_learnt(api, user, eager, django_capture_on_commit_callbacks):
    cid = post(api, "/api/conversations/", {}).json()["id"]
    with django_capture_on_commit_callbacks(execute=True):
        post(api, f"/api/conversations/{cid}/messages/", {"messages": [
            {"role": "user", "content": "I'm allergic to shellfish."}]})
    assert Memory.objects.filter(owner=user).exists()
    response = post(api, f"/api/conversations/{cid}/forget/", {})
    assert response.status_code == 200 and response.json()["forgotten_memories"] == 1
    assert not Memory.objects.filter(owner=user).exists()
    assert api.get(f"/api/conversations/{cid}/").status_code == 404
def test_the_mcp_tools_are_callable_here_too(api, user):
    call = lambda name, arguments: post(api, "/api/tools/call/", {"name": name, "arguments": arguments})  # noqa: E731
    added = call("add_memory", {"content": "Prefers aisle seats", "tags": ["travel"]})
    assert added.status_code == 200
    memory = added.json()["data"]["memory"]
    assert memory["version"] == 1 and memory["tags"] == ["travel"] and "Prefers aisle seats" in added.json()["text"]
    updated = call("update_memory", json.dumps({"memory_id": memory["id"], "content": "Prefers window seats"}))
    assert updated.json()["data"]["memory"]["version"] == 2
    found = call("search_memories", {"query": "where does the user like to sit on planes?"}).json()["data"]
    assert found["results"][0]["id"] == memory["id"] and found["results"][0]["score"] > 0
    bad = call("search_memories", {"query": "x" * 4001})
    assert bad.status_code == 400 and bad.json()["query"] == ["At most 4000 characters."]


def test_seed_aliases_name_their_own_arguments(api):
    response = post(api, "/api/tools/call/", {"name": "deleteMemory", "arguments": {"memoryId": 5}})
    assert response.status_code == 400 and list(response.json()) == ["memoryId"]
