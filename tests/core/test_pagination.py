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
