import pytest

from tests.factories import MemoryFactory


@pytest.mark.parametrize("page", ["\n1", " 1", "1 ", "\u0661", "+1"])
def test_a_page_number_that_is_not_plain_digits_is_a_404(api, user, page):
    MemoryFactory(owner=user)
    response = api.get("/api/memories/", {"page": page})
    assert response.status_code == 404
    assert "Invalid page" in response.json()["detail"]


@pytest.mark.parametrize("page", ["1", "01"])
def test_plain_page_numbers_still_work(api, user, page):
    MemoryFactory(owner=user)
    response = api.get("/api/memories/", {"page": page})
    assert response.status_code == 200
    assert response.json()["count"] == 1


def test_page_size_is_honoured(api, user):
    MemoryFactory.create_batch(3, owner=user)
    body = api.get("/api/memories/", {"page_size": 2}).json()
    assert body["count"] == 3 and len(body["results"]) == 2 and body["next"]
    assert "page_size=2" in body["next"]


@pytest.mark.parametrize("size", ["0", "201", "x", " 2", "-1"])
def test_a_page_size_out_of_range_is_a_400(api, user, size):
    response = api.get("/api/conversations/", {"page_size": size})  # a list without its own query serializer
    assert response.status_code == 400
    assert "page_size" in response.json()
