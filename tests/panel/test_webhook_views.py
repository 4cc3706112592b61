"""The panel's webhooks pages: register (checked like the API, the secret shown once), the delivery log,
switch off and on, a new secret, delete; another user's endpoint is a 404."""

import re

import pytest

from webhooks.models import Delivery, Endpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def panel(client, user):
    client.force_login(user)
    return client


def errors_of(response, field: str) -> list[str]:
    match = re.search(rf'<ul class="errors" id="id_{field}_errors">(.*?)</ul>', response.content.decode(), re.S)
    return re.findall(r"<li>(.*?)</li>", match.group(1), re.S) if match else []


def test_registering_shows_the_secret_once(panel, user):
    response = panel.post("/webhooks/", {"url": "https://1.1.1.1/hook", "events": ["memory.created"]})
    assert response.status_code == 200
    endpoint = Endpoint.objects.get(owner=user)
    assert endpoint.events == ["memory.created"]
    assert f'id="webhook-secret">{endpoint.secret}<' in response.content.decode()
    listing = panel.get("/webhooks/").content.decode()
    assert "https://1.1.1.1/hook" in listing and endpoint.secret not in listing
    assert endpoint.secret not in panel.get(f"/webhooks/{endpoint.pk}/").content.decode()


@pytest.mark.parametrize("url", ["http://127.0.0.1/hook", "file:///etc/passwd", "http://169.254.169.254/"])
def test_a_refused_url_is_shown_next_to_the_field(panel, settings, url):
    settings.WEBHOOKS_ALLOW_PRIVATE = False
    response = panel.post("/webhooks/", {"url": url})
    assert response.status_code == 400 and errors_of(response, "url")
    assert not Endpoint.objects.exists()


def test_the_delivery_log_and_the_actions(panel, user):
    endpoint = Endpoint.objects.create(owner=user, url="https://1.1.1.1/hook", secret="whsec_old", active=False,
                                       failure_count=5, disabled_reason="Switched off after 5 failed deliveries")
    Delivery.objects.create(endpoint=endpoint, owner=user, event="memory.deleted", payload={}, status="failed",
                            attempts=9, last_error="HTTP 502: an error status.")
    page = panel.get(f"/webhooks/{endpoint.pk}/").content.decode()
    assert "memory.deleted" in page and "HTTP 502: an error status." in page and 'id="disabled-reason"' in page

    panel.post(f"/webhooks/{endpoint.pk}/action/", {"action": "on"})
    endpoint.refresh_from_db()
    assert (endpoint.active, endpoint.failure_count, endpoint.disabled_reason) == (True, 0, "")
    rotated = panel.post(f"/webhooks/{endpoint.pk}/action/", {"action": "rotate"})
    endpoint.refresh_from_db()
    assert endpoint.secret != "whsec_old" and endpoint.secret in rotated.content.decode()
    panel.post(f"/webhooks/{endpoint.pk}/", {"url": "https://1.0.0.1/in", "events": ["document.failed"]})
    endpoint.refresh_from_db()
    assert (endpoint.url, endpoint.events) == ("https://1.0.0.1/in", ["document.failed"])
    panel.post(f"/webhooks/{endpoint.pk}/action/", {"action": "delete"})
    assert not Endpoint.objects.exists() and not Delivery.objects.exists()


def test_another_users_endpoint_is_not_found(panel, other_user):
    theirs = Endpoint.objects.create(owner=other_user, url="https://1.1.1.1/x", secret="whsec_theirs")
    assert panel.get(f"/webhooks/{theirs.pk}/").status_code == 404
    assert panel.post(f"/webhooks/{theirs.pk}/action/", {"action": "delete"}).status_code == 404
    assert "1.1.1.1/x" not in panel.get("/webhooks/").content.decode()
    assert Endpoint.objects.filter(pk=theirs.pk).exists()


@pytest.mark.django_db(transaction=True)
def test_registering_in_a_browser_shows_the_secret_and_the_pages_fit_a_phone(browser, live_server, settings,
                                                                            live_requests_close_connections):
    from tests.factories import UserFactory
    from tests.panel.conftest import log_in, screenshot

    settings.WEBHOOKS_ALLOW_PRIVATE = False
    someone = UserFactory()
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True)
    page = context.new_page()
    try:
        log_in(page, live_server, someone)
        page.click("header nav >> text=Settings")  # webhooks are one of its tabs
        page.click("#settings-tabs >> text=Webhooks")
        page.fill("input[name=url]", "https://1.1.1.1/" + "a-rather-long-path/" * 6 + "hook")
        page.check("input[value='memory.created']")
        page.click("button:has-text('Add endpoint')")
        endpoint = Endpoint.objects.get(owner=someone)
        assert page.inner_text("#webhook-secret") == endpoint.secret
        Delivery.objects.create(endpoint=endpoint, owner=someone, event="memory.created", payload={},
                                status="retrying", attempts=3, last_error="ConnectTimeoutError: " + "x" * 150)
        for path, name in (("/webhooks/", "webhooks-phone"), (f"/webhooks/{endpoint.pk}/", "webhook-detail-phone")):
            page.goto(f"{live_server.url}{path}")
            screenshot(page, name)
            assert page.evaluate("document.documentElement.scrollWidth") <= 375, path
    finally:
        context.close()
