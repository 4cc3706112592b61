"""The activity page (panel) and its instance-wide twin in the admin render their charts, each to its viewer."""

import pytest

from memories import services
from memories.models import MemoryEvent
from tests.factories import MemoryFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def data(user, other_user):
    MemoryFactory.create_batch(2, owner=user, category="preference")
    MemoryFactory.create_batch(3, owner=other_user, category="travel-secret")
    services.memories_touch(memory_ids=[], owner_id=user.pk, action=MemoryEvent.Action.SEARCH, query="tea")


def test_the_panel_page_charts_the_users_own_memory(client, user, data):
    assert client.get("/activity/").status_code == 302  # signed-in users only
    client.force_login(user)
    page = client.get("/activity/").content.decode()
    assert page.count("<svg class=\"chart\"") == 5
    assert "preference (2)" in page and "travel-secret" not in page
    assert "1 searches in the last 30 days" in page
    assert 'href="/activity/" aria-current="page"' in page  # in the navigation


def test_staff_see_the_whole_instance_in_the_admin(client, user, data):
    client.force_login(user)
    assert client.get("/admin/activity/").status_code == 302  # not staff: the admin's login
    client.force_login(UserFactory(is_staff=True))
    page = client.get("/admin/activity/").content.decode()
    assert "Activity of the whole instance" in page and page.count("<svg class=\"chart\"") == 5
    assert "preference (2)" in page and "travel-secret (3)" in page
