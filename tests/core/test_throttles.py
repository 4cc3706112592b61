"""The login forms (panel and admin) are throttled per client address, in the shared cache, under the same budget
as the API's token endpoint: one address spraying usernames is stopped before any password is hashed."""

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.settings import api_settings

pytestmark = pytest.mark.django_db


def allowed() -> int:
    return int(api_settings.DEFAULT_THROTTLE_RATES["auth"].split("/")[0])


@pytest.mark.parametrize("login", ["panel:login", "admin:login"])
def test_a_login_form_is_throttled_per_address_whatever_the_username(login, monkeypatch):
    from django.contrib.auth import base_user

    hashed, real = [], base_user.make_password  # an unknown username still costs one hash (Django's timing guard)
    monkeypatch.setattr(base_user, "make_password", lambda *a, **k: hashed.append(1) or real(*a, **k))
    client = Client(REMOTE_ADDR="10.0.0.7")
    url = reverse(login)
    statuses = [client.post(url, {"username": f"nobody{i}", "password": "x"}).status_code
                for i in range(allowed() + 2)]
    assert statuses == [200] * allowed() + [429, 429]  # 200: the form again, with its error
    response = client.post(url, {"username": "nobody", "password": "x"})
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert b"tried to log in too often" in response.content
    assert len(hashed) == allowed()  # refused tries cost no password hash
    assert client.get(url).status_code == 200  # showing the form is free
    assert Client(REMOTE_ADDR="10.0.0.8").post(url, {"username": "a", "password": "b"}).status_code == 200


def test_forms_and_the_token_endpoint_share_one_budget_per_address():
    client = Client(REMOTE_ADDR="10.0.0.9")
    for i in range(allowed()):
        client.post(reverse("panel:login"), {"username": f"nobody{i}", "password": "x"})
    assert client.post("/api/auth/token/", {"username": "a", "password": "b"}).status_code == 429
