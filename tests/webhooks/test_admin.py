"""The webhooks admin: staff register endpoints through the same checks, and read the delivery log."""

from django.urls import reverse

from tests.factories import UserFactory
from webhooks.models import Delivery, Endpoint


def test_staff_register_endpoints_with_the_same_url_checks(admin_client, db, settings):
    settings.WEBHOOKS_ALLOW_PRIVATE = False
    owner = UserFactory()
    add = reverse("admin:webhooks_endpoint_add")
    refused = admin_client.post(add, {"owner": owner.pk, "url": "http://10.0.0.1/", "active": "on",
                                      "deliveries-TOTAL_FORMS": 0, "deliveries-INITIAL_FORMS": 0})
    assert refused.status_code == 200 and b"not a public address" in refused.content
    made = admin_client.post(add, {"owner": owner.pk, "url": "https://1.1.1.1/hook", "events": ["memory.created"],
                                   "active": "on", "deliveries-TOTAL_FORMS": 0, "deliveries-INITIAL_FORMS": 0})
    assert made.status_code == 302
    endpoint = Endpoint.objects.get(owner=owner)
    assert endpoint.events == ["memory.created"] and endpoint.secret.startswith("whsec_")
    page = admin_client.get(reverse("admin:webhooks_endpoint_change", args=[endpoint.pk]))
    assert page.status_code == 200 and endpoint.secret.encode() not in page.content


def test_the_delivery_log_is_listed_read_only(admin_client, db):
    owner = UserFactory()
    endpoint = Endpoint.objects.create(owner=owner, url="https://1.1.1.1/hook", secret="whsec_x")
    delivery = Delivery.objects.create(endpoint=endpoint, owner=owner, event="memory.created", payload={},
                                       status="retrying", attempts=2, last_error="HTTP 503: an error status.")
    listing = admin_client.get(reverse("admin:webhooks_delivery_changelist"))
    assert listing.status_code == 200 and b"memory.created" in listing.content
    page = admin_client.get(reverse("admin:webhooks_delivery_change", args=[delivery.pk]))
    assert page.status_code == 200 and b"HTTP 503" in page.content and b'name="_save"' not in page.content
    assert admin_client.get(reverse("admin:webhooks_delivery_add")).status_code == 403
    inline = admin_client.get(reverse("admin:webhooks_endpoint_change", args=[endpoint.pk]))
    assert b"HTTP 503: an error status." in inline.content
