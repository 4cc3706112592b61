"""MementoStore and AsyncMementoStore against a live server: LangGraph's store contract, a real graph compiled
with the store, the official langgraph_sdk pointed at Memento, and one user never seeing another's items."""

import asyncio
import operator
import uuid
from typing import Annotated, TypedDict

import httpx
import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.store.base import BaseStore, GetOp, InvalidNamespaceError, PutOp, SearchOp
from langgraph_sdk import get_sync_client
from memento_client.client import MementoClient, MementoError
from memento_client.langgraph import AsyncMementoStore, MementoStore


@pytest.fixture
def store(server_url, token):
    with MementoStore(url=server_url, token=token) as store:
        yield store


class ChatState(TypedDict):
    user_id: str
    message: str
    recalled: list[str]
    replies: Annotated[list[str], operator.add]


def _remembering_graph(store: BaseStore):
    """Seed 000's flow: memories retrieved before the model call, the user's facts stored after it. The
    "model" is deterministic: it answers with what it was reminded of."""

    def recall(state: ChatState, *, store: BaseStore) -> dict:
        found = store.search(("memories", state["user_id"]), query=state["message"], limit=3)
        return {"recalled": [item.value["content"] for item in found]}

    def model(state: ChatState) -> dict:
        reminder = "; ".join(state["recalled"]) or "nothing yet"
        return {"replies": [f"(I remember: {reminder})"]}

    def remember(state: ChatState, *, store: BaseStore) -> dict:
        if state["message"].startswith("Remember:"):
            fact = state["message"].removeprefix("Remember:").strip()
            store.put(("memories", state["user_id"]), str(uuid.uuid4()), {"content": fact}, index=["content"])
        return {}

    builder = StateGraph(ChatState)
    builder.add_node("recall", recall)
    builder.add_node("model", model)
    builder.add_node("remember", remember)
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "model")
    builder.add_edge("model", "remember")
    builder.add_edge("remember", END)
    return builder.compile(store=store, checkpointer=InMemorySaver())


def test_a_graph_compiled_with_memento_store_remembers_across_threads(store, server_url, token):
    graph = _remembering_graph(store)

    graph.invoke({"user_id": "u1", "message": "Remember: I am allergic to peanuts", "recalled": [], "replies": []},
                 {"configurable": {"thread_id": "monday"}})
    graph.invoke({"user_id": "u1", "message": "Remember: my sister lives in Porto", "recalled": [], "replies": []},
                 {"configurable": {"thread_id": "tuesday"}})
    answer = graph.invoke({"user_id": "u1", "message": "What snack should I avoid?", "recalled": [], "replies": []},
                          {"configurable": {"thread_id": "wednesday"}})

    assert answer["recalled"][0] == "I am allergic to peanuts"
    assert "allergic to peanuts" in answer["replies"][-1]
    with MementoClient(url=server_url, token=token) as memento:
        hits = memento.search("peanut allergy", limit=1)
        assert hits[0]["memory"]["content"] == "I am allergic to peanuts"
        assert hits[0]["memory"]["namespace"] == ["memories", "u1"]
        history = memento.history(hits[0]["memory"]["id"])
        assert [h["action"] for h in history] == ["CREATE"]


def test_the_store_contract_through_the_adapter(store):
    store.put(("docs", "a"), "d1", {"title": "Sourdough", "steps": [{"text": "Feed the starter"}]},
              index=["title", "steps[*].text"])
    store.put(("docs", "b"), "d2", {"title": "Tax", "year": 2024, "text": "File the return"})
    store.put(("docsx",), "d3", {"title": "Elsewhere"})

    item = store.get(("docs", "a"), "d1")
    assert item.value == {"title": "Sourdough", "steps": [{"text": "Feed the starter"}]}
    assert item.namespace == ("docs", "a") and item.created_at <= item.updated_at

    listed = store.search(("docs",))
    assert [i.key for i in listed] == ["d2", "d1"] and all(i.score is None for i in listed)
    found = store.search(("docs",), query="bread starter")
    assert found[0].key == "d1" and found[0].score > found[1].score
    assert [i.key for i in store.search(("docs",), filter={"year": {"$gte": 2024}})] == ["d2"]
    assert store.list_namespaces(prefix=("docs",)) == [("docs", "a"), ("docs", "b")]
    assert store.list_namespaces(max_depth=1) == [("docs",), ("docsx",)]

    store.put(("docs", "a"), "d1", {"title": "Rye bread"})
    again = store.get(("docs", "a"), "d1")
    assert again.value == {"title": "Rye bread"} and again.created_at == item.created_at
    store.delete(("docs", "a"), "d1")
    assert store.get(("docs", "a"), "d1") is None

    results = store.batch([PutOp(("b",), "k", {"v": 1}), GetOp(("b",), "k"), SearchOp(("b",)),
                           PutOp(("b",), "k", None), GetOp(("b",), "k")])
    assert results[0] is None and results[1].value == {"v": 1} and len(results[2]) == 1 and results[4] is None


def test_items_put_through_the_adapter_are_memories_and_the_reverse(store, server_url, token):
    store.put(("prefs",), "tea", {"content": "Prefers green tea", "strength": 2})
    with MementoClient(url=server_url, token=token) as memento:
        memory = next(m for m in memento.search("tea", mode="keyword") if m["memory"]["key"] == "tea")["memory"]
        assert memory["content"] == "Prefers green tea"
        assert memory["value"] == {"content": "Prefers green tea", "strength": 2}
        created = memento.create("Works night shifts", key="shifts", namespace=["work"])

    assert store.get(("work",), "shifts").value == {"content": "Works night shifts"}
    assert store.search(("work",), query="sleep schedule")[0].key == "shifts"
    assert created["version"] == 1


def test_ttls_are_kept_by_the_server(server_url, token):
    with MementoStore(url=server_url, token=token, ttl={"default_ttl": 5}) as store:
        store.put(("t",), "k", {"v": 1})
        store.put(("t",), "forever", {"v": 2}, ttl=None)
        assert store.get(("t",), "k").value == {"v": 1}
    with MementoClient(url=server_url, token=token) as memento:
        by_key = {m["key"]: m for m in memento.list(namespace=["t"])}
    assert by_key["k"]["ttl_minutes"] == 5 and by_key["forever"]["ttl_minutes"] is None


def test_async_store_sends_calls_made_together_as_one_request(server_url, token):
    sent = []

    async def main():
        async def count(request):
            sent.append(request.url.path)

        client = httpx.AsyncClient(base_url=f"{server_url}/api", headers={"Authorization": f"Token {token}"},
                                   event_hooks={"request": [count]})
        async with AsyncMementoStore(url=server_url, token=token, client=client) as store:
            await asyncio.gather(*(store.aput(("a",), f"k{i}", {"i": i}) for i in range(5)))
            assert len(sent) == 1
            items = await asyncio.gather(store.aget(("a",), "k1"), store.asearch(("a",), filter={"i": {"$gt": 2}}))
            assert len(sent) == 2
            return items

    item, found = asyncio.run(main())
    assert item.value == {"i": 1}
    assert sorted(i.key for i in found) == ["k3", "k4"]


def test_one_user_never_sees_another_users_items(store, server_url, other_token):
    store.put(("private",), "diary", {"content": "secret"})
    with MementoStore(url=server_url, token=other_token) as other:
        assert other.get(("private",), "diary") is None
        assert other.search(()) == []
        assert other.list_namespaces() == []
        other.put(("private",), "diary", {"content": "theirs"})
    assert store.get(("private",), "diary").value == {"content": "secret"}


def test_bad_tokens_and_bad_namespaces_are_refused(store, server_url):
    with MementoStore(url=server_url, token="not-a-token") as stranger, pytest.raises(MementoError) as refused:
        stranger.get(("a",), "k")
    assert refused.value.status_code in (401, 403)

    with pytest.raises(InvalidNamespaceError):
        store.put(("has.dot",), "k", {"v": 1})
    with pytest.raises(InvalidNamespaceError):
        store.batch([PutOp(("ok",), "k", {"v": 1}), GetOp(("",), "k")])
    assert store.get(("ok",), "k") is None  # the whole batch was refused before anything was sent
    with pytest.raises(MementoError) as blank:
        store.put(("   ",), "k", {"v": 1})  # LangGraph allows it; Memento's labels are never blank
    assert blank.value.status_code == 400 and "ops[0].namespace" in blank.value.detail


def test_the_official_langgraph_sdk_works_against_memento(server_url, token, other_token):
    client = get_sync_client(url=f"{server_url}/api", api_key=token)
    client.store.put_item(["sdk", "notes"], key="n1", value={"content": "Call the plumber"})
    client.store.put_item(["sdk", "notes"], key="n2", value={"content": "Buy oat milk"}, index=False)

    item = client.store.get_item(["sdk", "notes"], key="n1")
    assert item["value"] == {"content": "Call the plumber"} and item["namespace"] == ["sdk", "notes"]
    found = client.store.search_items(["sdk"], query="fix the leaking sink")
    assert [i["key"] for i in found["items"]] == ["n1", "n2"] and found["items"][1]["score"] is None
    assert client.store.list_namespaces(prefix=["sdk"])["namespaces"] == [["sdk", "notes"]]
    client.store.delete_item(["sdk", "notes"], key="n1")
    assert client.store.get_item(["sdk", "notes"], key="n1") is None

    other = get_sync_client(url=f"{server_url}/api", api_key=other_token)
    assert other.store.search_items([])["items"] == []
    with pytest.raises(httpx.HTTPStatusError) as refused:
        get_sync_client(url=f"{server_url}/api", api_key="wrong").store.list_namespaces()
    assert refused.value.response.status_code in (401, 403)
