"""One spelling per name: a key or namespace label typed in NFC ("é", one code point) or NFD ("e" and a combining
accent) names the same memory and the same store item."""

import pytest

from core.text import nfc, nfc_path, unstorable
from memories import services
from memories.models import Memory

NFC, NFD = "caf\u00e9", "cafe\u0301"


def test_the_spellings_differ_but_normalise_alike():
    assert NFC != NFD and nfc(NFD) == NFC and nfc(NFC) == NFC
    assert nfc_path(["a", NFD]) == ["a", NFC] and nfc_path((NFD,)) == (NFC,)


@pytest.mark.parametrize(("value", "problem"), [
    ("fine", None), ({"a": [1, {"b": "ok"}]}, None), ("x\x00", "NUL"), ({"k": ["\ud83d"]}, "surrogate"),
    ({"\x00": 1}, "NUL"), ([[[["\udfff"]]]], "surrogate"), ("\U0001f600 emoji pair is fine", None),
])
def test_unstorable_finds_nul_and_lone_surrogates_anywhere(value, problem):
    found = unstorable(value)
    assert (found is None) if problem is None else (problem in found)


def test_nfc_and_nfd_keys_name_one_memory(user):
    first = services.memory_create(owner=user, content="Orders a flat white", namespace=["drinks", NFC], key=NFC)
    second = services.memory_create(owner=user, content="Orders an espresso", namespace=["drinks", NFD], key=NFD)
    assert second.outcome == "updated" and second.memory.pk == first.memory.pk
    memory = Memory.objects.get()
    assert memory.key == NFC and memory.namespace == ["drinks", NFC] and memory.content == "Orders an espresso"


def test_an_update_normalises_too(user):
    memory = services.memory_create(owner=user, content="Owns a bike", key="bike").memory
    services.memory_update(memory=memory, data={"key": NFD, "namespace": [NFD]})
    memory.refresh_from_db()
    assert memory.key == NFC and memory.namespace == [NFC]


def test_nfc_and_nfd_name_one_store_item(api, user):
    for spelling, text in ((NFC, "first"), (NFD, "second")):
        response = api.put("/api/store/items", {"namespace": ["places", spelling], "key": spelling,
                                                "value": {"content": text}}, format="json")
        assert response.status_code == 204
    assert Memory.objects.filter(is_active=True).count() == 1
    for spelling in (NFC, NFD):
        item = api.get("/api/store/items", {"namespace": f"places.{spelling}", "key": spelling}).json()
        assert item["value"] == {"content": "second"} and item["key"] == NFC


def test_list_and_tool_lookups_find_the_other_spelling(api, user):
    services.memory_create(owner=user, content="Visits Lyon in June", namespace=["trips", NFC], key=NFC)
    listed = api.get("/api/memories/", {"namespace": f"trips/{NFD}"}).json()["results"]
    assert [m["key"] for m in listed] == [NFC]
    got = api.post("/api/tools/call/", {"name": "get_memory", "arguments": {"key": NFD}}, format="json")
    assert got.status_code == 200 and got.json()["data"]["memory"]["key"] == NFC


# --- namespace bounds (10,000 labels were a 500 on four endpoints) ---------------------------------------------


def test_a_namespace_over_its_bounds_is_a_400_on_every_path_in(api, db):
    import json as _json
    import uuid

    from memories.models import Memory

    many = ["a"] * 10_000
    long_label = ["x" * 201]
    for labels in (many, long_label):
        cases = [
            api.post("/api/memories/", {"content": "x", "namespace": labels}, format="json"),
            api.post("/api/memories/batch/", {"items": [{"content": "x", "namespace": labels}]}, format="json"),
            api.post("/api/memories/search/", {"query": "x", "namespace": labels}, format="json"),
            api.get("/api/memories/", {"namespace": "/".join(labels)}),
            api.post("/api/memories/import/", _json.dumps({"format": "memento.memory/1", "id": str(uuid.uuid4()),
                                                                   "content": "x", "namespace": labels}),
                     content_type="application/jsonl"),
            api.put("/api/store/items", {"namespace": labels, "key": "k", "value": {"a": 1}}, format="json"),
            api.post("/api/store/items/search", {"namespace_prefix": labels}, format="json"),
        ]
        for response in cases:
            assert response.status_code == 400, (response.request["PATH_INFO"], response.content[:200])
            assert "namespace" in response.content.decode(), response.content[:200]
    assert not Memory.objects.exists()
