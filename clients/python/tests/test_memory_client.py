"""The plain memory API client against a live server."""

import pytest
from memento_client.client import MementoClient, MementoError


def test_create_search_get_history_and_delete(server_url, token):
    with MementoClient(url=f"{server_url}/api/", token=token) as memento:
        created = memento.create("Is allergic to peanuts", key="allergy", importance=0.9, tags=["health"])
        memento.create("Is allergic to shellfish too", key="allergy")  # same key: an update, version 2

        hits = memento.search("which seafood allergy do they have?", limit=5)
        assert hits[0]["memory"]["id"] == created["id"] and hits[0]["score"] > 0
        memory = memento.get(created["id"])
        assert memory["content"] == "Is allergic to shellfish too" and memory["version"] == 2
        assert [h["version"] for h in memento.history(created["id"])] == [2, 1]
        assert [m["key"] for m in memento.list(tags=["health"])] == ["allergy"]

        memento.delete(created["id"])
        assert memento.list() == []


def test_refusals_name_the_problem(server_url, token, other_token):
    with MementoClient(url=server_url, token=token) as memento:
        with pytest.raises(MementoError) as blank:
            memento.create("   ")
        assert blank.value.status_code == 400 and "content" in blank.value.detail
        mine = memento.create("Mine only")
    with MementoClient(url=server_url, token=other_token) as other, pytest.raises(MementoError) as hidden:
        other.get(mine["id"])
    assert hidden.value.status_code == 404
    with MementoClient(url=server_url, token="wrong") as stranger, pytest.raises(MementoError) as refused:
        stranger.list()
    assert refused.value.status_code == 401
