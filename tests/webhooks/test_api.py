"""/api/webhooks/: register, list, change, rotate and delete endpoints, read their delivery log."""

import pytest
from django.db import DatabaseError, transaction
from rest_framework.test import APIClient

from core import rls
from tests.factories import ProjectFactory, token_for
from webhooks.models import Delivery, Endpoint

pytestmark = pytest.mark.django_db

URL = "https://1.1.1.1/hook"


def create(api, **body):
    return api.post("/api/webhooks/", {"url": URL, **body}, format="json")


def test_the_secret_is_shown_once_on_creation(api, user):
    response = create(api, events=["memory.created", "document.failed"], description="crm sync")
    assert response.status_code == 201, response.content
    body = response.json()
    assert body["secret"].startswith("whsec_")
    assert body["events"] == ["memory.created", "document.failed"] and body["active"] is True
    assert Endpoint.objects.get(pk=body["id"]).secret == body["secret"]
    listed = api.get("/api/webhooks/").json()["results"]
    assert [e["id"] for e in listed] == [body["id"]] and "secret" not in listed[0]
    assert "secret" not in api.get(f"/api/webhooks/{body['id']}/").json()
    rotated = api.post(f"/api/webhooks/{body['id']}/rotate-secret/").json()["secret"]
    assert rotated != body["secret"] and Endpoint.objects.get(pk=body["id"]).secret == rotated


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/hook", "http://localhost/", "http://169.254.169.254/",
                                 "http://[::1]/", "http://10.0.0.1/", "ftp://1.1.1.1/", "file:///etc/passwd"])
def test_private_addresses_and_other_schemes_are_a_400_naming_url(api, settings, url):
    settings.WEBHOOKS_ALLOW_PRIVATE = False
    response = create(api, url=url)
    assert response.status_code == 400
    assert list(response.json()) == ["url"]
    assert Endpoint.objects.count() == 0


def test_unknown_events_and_fields_are_a_400_naming_them(api):
    response = create(api, events=["memory.created", "memory.eaten"])
    assert response.status_code == 400 and "memory.eaten" in response.json()["events"][0]
    assert create(api, secret="mine").json().keys() == {"secret"}
    assert api.post("/api/webhooks/", {}, format="json").json().keys() == {"url"}


def test_changing_the_url_is_checked_too_and_switching_on_clears_the_failures(api, settings):
    settings.WEBHOOKS_ALLOW_PRIVATE = False
    endpoint_id = create(api).json()["id"]
    response = api.patch(f"/api/webhooks/{endpoint_id}/", {"url": "http://192.168.1.1/"}, format="json")
    assert response.status_code == 400 and list(response.json()) == ["url"]
    Endpoint.objects.filter(pk=endpoint_id).update(active=False, failure_count=5, disabled_reason="down")
    body = api.patch(f"/api/webhooks/{endpoint_id}/", {"active": True}, format="json").json()
    assert (body["active"], body["failure_count"], body["disabled_reason"]) == (True, 0, "")


def test_the_delivery_log_lists_an_endpoints_deliveries(api, user):
    endpoint = Endpoint.objects.get(pk=create(api).json()["id"])
    Delivery.objects.create(endpoint=endpoint, owner=user, event="memory.created", payload={"id": "x"},
                            status="retrying", attempts=2, last_error="HTTP 503: an error status.")
    rows = api.get(f"/api/webhooks/{endpoint.pk}/deliveries/").json()["results"]
    assert [(r["event"], r["status"], r["attempts"], r["last_error"]) for r in rows] == [
        ("memory.created", "retrying", 2, "HTTP 503: an error status.")]


def test_other_users_cannot_see_change_or_delete_your_endpoints(api, other_api):
    endpoint_id = create(api).json()["id"]
    assert other_api.get("/api/webhooks/").json()["results"] == []
    assert other_api.get(f"/api/webhooks/{endpoint_id}/").status_code == 404
    assert other_api.get(f"/api/webhooks/{endpoint_id}/deliveries/").status_code == 404
    assert other_api.patch(f"/api/webhooks/{endpoint_id}/", {"url": URL}, format="json").status_code == 404
    assert other_api.post(f"/api/webhooks/{endpoint_id}/rotate-secret/").status_code == 404
    assert other_api.delete(f"/api/webhooks/{endpoint_id}/").status_code == 404
    assert api.delete(f"/api/webhooks/{endpoint_id}/").status_code == 204
    assert not Endpoint.objects.exists()


def test_row_level_security_hides_and_refuses_other_users_endpoints_and_deliveries(user, other_user):
    mine = Endpoint.objects.create(owner=user, url=URL, secret="whsec_a")
    theirs = Endpoint.objects.create(owner=other_user, url=URL, secret="whsec_b")
    Delivery.objects.create(endpoint=theirs, owner=other_user, event="memory.created", payload={})
    with rls.as_user(user.pk):
        assert list(Endpoint.objects.all()) == [mine]
        assert not Delivery.objects.exists()
        with pytest.raises(DatabaseError, match="row-level security"), transaction.atomic():
            Delivery.objects.create(endpoint=theirs, owner=other_user, event="memory.created", payload={})


def test_at_most_the_configured_number_of_endpoints(api, settings):
    settings.WEBHOOKS_MAX_ENDPOINTS = 1
    assert create(api).status_code == 201
    response = create(api)
    assert response.status_code == 400 and list(response.json()) == ["url"]


def test_a_token_bound_to_a_project_cannot_manage_webhooks(user):
    """An endpoint gets every event of its owner's: a token confined to one project would see the others'."""
    project = ProjectFactory(owner=user)
    bound = APIClient()
    bound.credentials(HTTP_AUTHORIZATION=f"Token {token_for(user, project=project)}")
    response = bound.post("/api/webhooks/", {"url": URL}, format="json")
    assert response.status_code == 403 and "bound to a project" in response.json()["detail"]
    assert bound.get("/api/webhooks/").status_code == 403
    assert not Endpoint.objects.exists()
