"""Panel tests: Django test-client tests, and browser tests driving the Debian Chromium (/usr/bin/chromium)
through Playwright against pytest-django's live server. Screenshots of the main pages go to `.screenshots/` at the
repository root (git ignores it)."""

import os
import shutil
from pathlib import Path

import pytest
from django.conf import settings

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
SCREENSHOTS = Path(settings.BASE_DIR) / ".screenshots"
PASSWORD = "correct horse battery staple"  # tests.factories.UserFactory's


@pytest.fixture(scope="module")
def browser():
    if not shutil.which(CHROMIUM):
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the browser tests: install chromium ({CHROMIUM}); .ci/run does.")
        pytest.skip(f"no Chromium at {CHROMIUM}")
    from playwright.sync_api import sync_playwright

    # Playwright's sync API runs an event loop in this thread while the browser is open, and Django refuses ORM
    # calls from a thread with a running loop; allowed for the browser module only, so that it leaks into no other
    # test (nor into the environment of the processes they start, e.g. `check --deploy` rejects it).
    previous = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with sync_playwright() as playwright:
            chromium = playwright.chromium.launch(
                executable_path=CHROMIUM, args=["--no-sandbox", "--disable-dev-shm-usage"],
            )
            yield chromium
            chromium.close()
    finally:
        if previous is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = previous


@pytest.fixture
def live_requests_close_connections(monkeypatch):
    """The live server answers a kept-alive browser connection in one thread; with CONN_MAX_AGE its database
    connection would outlive the test and keep the test database from being dropped."""
    from django.db import connections

    monkeypatch.setitem(connections.settings["default"], "CONN_MAX_AGE", 0)


@pytest.fixture
def page(browser, live_requests_close_connections):
    context = browser.new_context(viewport={"width": 1200, "height": 900}, accept_downloads=True)
    context.set_default_timeout(30_000)
    page = context.new_page()
    # the panel asks before destructive actions; in tests the answer is yes
    page.on("dialog", lambda dialog: dialog.accept())
    # whatever the Content-Security-Policy refused on a page (Chromium reports it on the console)
    page.csp_violations = []
    page.on("console", lambda message: "Content Security Policy" in message.text
            and page.csp_violations.append(message.text))
    yield page
    context.close()
    assert page.csp_violations == [], "the Content-Security-Policy refused something a page needs"


def screenshot(page, name: str) -> None:
    SCREENSHOTS.mkdir(exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)


def log_in(page, live_server, user, password: str = PASSWORD) -> None:
    page.goto(f"{live_server.url}/")
    page.fill("input[name=username]", user.get_username())
    page.fill("input[name=password]", password)
    page.click("button[type=submit]")
    page.wait_for_url(f"{live_server.url}/")
