"""Browser-facing settings: the Content-Security-Policy and other security headers on every page (panel, admin,
API docs), pages that need no inline script or style, and the session cookie's policy."""

import re

import pytest
from django.urls import reverse

from tests.factories import DocumentFactory

INLINE_SCRIPT = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>", re.IGNORECASE)
INLINE_HANDLER = re.compile(r"<[^>]+\son[a-z]+\s*=", re.IGNORECASE)
STYLE_ATTRIBUTE = re.compile(r"<[^>]+\sstyle\s*=", re.IGNORECASE)


def directives(response) -> dict[str, list[str]]:
    policy = response["Content-Security-Policy"]
    return {name: values for name, *values in (part.split() for part in policy.split(";") if part.strip())}


@pytest.fixture
def signed_in(client, user):
    client.force_login(user)
    return client


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/", "/api/docs/", "/api/schema/"])
def test_every_page_has_a_policy_that_refuses_inline_scripts(client, db, path):
    response = client.get(path)
    assert response.status_code == 200
    policy = directives(response)
    assert policy["script-src"] == ["'self'"]
    assert policy["object-src"] == ["'none'"] and policy["base-uri"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert response["X-Content-Type-Options"] == "nosniff"
    assert response["Referrer-Policy"] == "same-origin"
    assert response["X-Frame-Options"] == "DENY"


def test_the_panel_and_admin_pages_need_no_inline_script_or_style(signed_in, user, admin_client):
    document = DocumentFactory(owner=user)  # its page has the progress bar
    pages = [reverse(name) for name in ("panel:overview", "panel:memory_list", "panel:settings",
                                        "panel:document_list", "panel:conversation_list")]
    pages.append(reverse("panel:document_detail", args=[document.pk]))
    for page in pages:
        html = signed_in.get(page).content.decode()
        assert not INLINE_SCRIPT.search(html), page
        assert not INLINE_HANDLER.search(html), page
        assert not STYLE_ATTRIBUTE.search(html), page
        assert directives(signed_in.get(page))["style-src"] == ["'self'"]
    for page in ("/admin/", "/admin/memories/memory/", "/admin/memories/memory/add/"):
        html = admin_client.get(page).content.decode()
        assert not INLINE_SCRIPT.search(html), page


def test_the_api_docs_load_their_init_script_from_a_url(client, db):
    page = client.get("/api/docs/")
    html = page.content.decode()
    assert not INLINE_SCRIPT.search(html)
    script = re.search(r'<script src="([^"]*script=[^"]*)"', html).group(1).replace("&amp;", "&")
    response = client.get(script)
    assert response.status_code == 200 and "SwaggerUIBundle" in response.content.decode()
    assert "'unsafe-inline'" not in directives(page)["script-src"]


def test_the_session_cookie_lasts_two_weeks_and_is_for_this_site_and_http_only(client, user):
    response = client.post(reverse("panel:login"), {"username": user.username,
                                                    "password": "correct horse battery staple"})
    assert response.status_code == 302
    cookie = response.cookies["sessionid"]
    assert cookie["httponly"] is True
    assert cookie["samesite"] == "Lax"
    assert int(cookie["max-age"]) == 14 * 24 * 3600
