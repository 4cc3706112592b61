import pytest


@pytest.fixture
def put(api):
    """PUT one store item as the test user; returns the response."""

    def _put(namespace, key, value, **extra):
        response = api.put("/api/store/items", {"namespace": namespace, "key": key, "value": value, **extra},
                           format="json")
        assert response.status_code == 204, response.content
        return response

    return _put


@pytest.fixture
def search(api):
    """POST a store search as the test user; returns the items."""

    def _search(prefix=(), **body):
        response = api.post("/api/store/items/search", {"namespace_prefix": list(prefix), **body}, format="json")
        assert response.status_code == 200, response.content
        return response.json()["items"]

    return _search
