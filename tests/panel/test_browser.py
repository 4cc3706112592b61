"""The panel in a real browser (headless Chromium driven by Playwright) against the live test server. Each test
saves screenshots of the pages it visits under `.screenshots/`."""

import json
from pathlib import Path

import pytest
import requests

from accounts.models import ApiToken
from documents.models import Document
from memories import services
from memories.models import Memory
from tests.factories import ConversationFactory, DocumentFactory, MessageFactory, ProjectFactory, UserFactory
from tests.panel.conftest import log_in, screenshot
from tests.worker import running_worker

pytestmark = pytest.mark.slow


def demo_memories(user) -> dict[str, Memory]:
    project = ProjectFactory(owner=user, name="kitchen renovation")
    items = [
        dict(content="Is allergic to peanuts", category="restriction", tags=["health", "food"], importance=0.9),
        dict(content="Prefers green tea in the morning", category="preference", tags=["food"]),
        dict(content="Works at Acme as a data engineer", category="fact", tags=["work"], subject="user"),
        dict(content="Daughter Emma starts school in September", category="event", tags=["family"], subject="Emma"),
        dict(content="Wants oak worktops, not granite", category="preference", tags=["home"], project=project),
    ]
    return {item["content"]: services.memory_create(owner=user, actor=user, **item).memory for item in items}


@pytest.fixture
def someone(transactional_db):
    return UserFactory(username="alice")


def test_log_in_search_edit_history_and_revert(page, live_server, someone):
    memories = demo_memories(someone)
    conversation = ConversationFactory(owner=someone, title="Planning dinner", agent_id="assistant")
    said = MessageFactory(conversation=conversation, content="Remember that I can't eat peanuts.", sequence=1)
    MessageFactory(conversation=conversation, role="assistant", content="Noted: no peanuts.", sequence=2)
    peanuts = memories["Is allergic to peanuts"]
    services.memory_update(memory=peanuts, data={"conversation": conversation, "message": said},
                           reason="linked to its conversation")

    page.goto(f"{live_server.url}/memories/")
    assert page.url.startswith(f"{live_server.url}/accounts/login/")  # anonymous: sent to log in
    screenshot(page, "login")
    log_in(page, live_server, someone)
    assert page.locator(".stat strong").first.inner_text() == "5"
    screenshot(page, "overview")

    page.click("nav >> text=Memories")
    page.fill("input[name=q]", "what can't they eat? nuts")
    page.press("input[name=q]", "Enter")
    page.wait_for_selector("#search-summary")
    assert page.locator("#memory-results .content").first.inner_text() == "Is allergic to peanuts"
    screenshot(page, "memories-search")
    page.select_option("select[name=mode]", "keyword")
    page.fill("input[name=q]", "tea")
    page.click("button:has-text('Search')")
    page.wait_for_url("**mode=keyword**")
    assert page.locator("#memory-results .content").all_inner_texts() == ["Prefers green tea in the morning"]

    page.goto(f"{live_server.url}/memories/{peanuts.pk}/")
    assert "Remember that I can't eat peanuts." in page.locator("#source").inner_text()
    page.click("a:has-text('Edit')")
    page.fill("textarea[name=content]", "Is severely allergic to peanuts and tree nuts")
    page.fill("input[name=tags]", "health, food, allergy")
    page.click("button:has-text('Save')")
    page.wait_for_url(f"{live_server.url}/memories/{peanuts.pk}/")
    assert page.inner_text("#memory-content") == "Is severely allergic to peanuts and tree nuts"
    newest = page.locator("#history .version").first
    assert newest.locator("ins").all_inner_texts()[:2] == ["severely", "and tree nuts"]
    assert newest.locator("[data-field=tags]").count() == 1
    screenshot(page, "memory-detail")

    page.click("#version-1 button:has-text('Revert to v1')")
    page.wait_for_selector(".messages")
    assert page.inner_text("#memory-content") == "Is allergic to peanuts"
    peanuts.refresh_from_db()
    assert (peanuts.content, peanuts.tags, peanuts.version) == ("Is allergic to peanuts", ["health", "food"], 4)
    assert peanuts.history.latest().history_action == "REVERT"

    page.click("nav >> text=Conversations")
    page.click("text=Planning dinner")
    assert "Is allergic to peanuts" in page.locator(f"#message-{said.pk}").inner_text()
    screenshot(page, "conversation")

    page.click("button:has-text('Log out')")
    page.wait_for_url(f"{live_server.url}/accounts/login/")
    page.goto(f"{live_server.url}/")
    assert page.url.startswith(f"{live_server.url}/accounts/login/")


def test_pages_fit_a_phone_screen(browser, live_server, someone, live_requests_close_connections):
    demo_memories(someone)
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True)
    page = context.new_page()
    try:
        log_in(page, live_server, someone)
        for path, name in (("/", "overview-phone"), ("/memories/", "memories-phone"),
                           ("/documents/", "documents-phone"), ("/settings/", "settings-phone"),
                           ("/profile/", "profile-phone")):
            page.goto(f"{live_server.url}{path}")
            assert page.evaluate("document.documentElement.scrollWidth") <= 375, path
            screenshot(page, name)
    finally:
        context.close()


@pytest.fixture
def worker(transactional_db):
    """A real Celery worker on the PostgreSQL broker (the test database), as `./dev.sh serve` runs one."""
    with running_worker("postgres") as process:
        yield process


def test_upload_follows_processing_to_completed(page, live_server, someone, worker, tmp_path):
    sections = [f"## Part {i}\n\n" + " ".join(
        f"Section {i} sentence {j} explains how the garden irrigation schedule works in dry summers." for j in range(40)
    ) for i in range(8)]
    path = tmp_path / "garden-notes.md"
    path.write_text("# Garden notes\n\nMy favourite flower is the blue iris.\n\n" + "\n\n".join(sections))
    log_in(page, live_server, someone)
    page.click("nav >> text=Documents")
    page.set_input_files("input[name=file]", str(path))
    page.fill("input[name=title]", "Garden notes")
    page.click("button:has-text('Upload')")
    page.wait_for_url(f"{live_server.url}/documents/*/")
    # the bar follows the status endpoint until processing is done, then the page reloads with the results
    # (data-rendered-status is the server's: it says "completed" only on a page rendered after processing)
    page.wait_for_selector(".progress[data-rendered-status=completed]", timeout=180_000)
    bar = page.locator(".progress .bar")
    assert bar.get_attribute("aria-valuenow") == "100.0"
    assert page.locator("[data-role=status]").text_content() == "completed"
    document = Document.objects.get(owner=someone)
    assert document.processing_status == "completed" and document.chunks_total > 1
    page.wait_for_selector("#chunks .chunk")
    assert page.locator("#chunks .chunk").count() == min(document.chunks_total, 20)
    screenshot(page, "document-detail")
    page.click("nav >> text=Documents")
    assert "Garden notes" in page.inner_text("table")
    screenshot(page, "documents")


def test_create_a_token_and_download_the_export(page, live_server, someone):
    demo_memories(someone)
    log_in(page, live_server, someone)
    page.click("header nav >> text=Settings")  # access, webhooks and imports are its tabs
    page.click("#settings-tabs >> text=Access")
    page.fill("#id_name", "browser test")
    page.click("button:has-text('Create token')")
    key = page.inner_text("#new-token")
    assert ApiToken.objects.get(user=someone).prefix == key[:12]
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    page.click("button[data-copy]")
    page.wait_for_selector("button[data-copy]:has-text('Copied')")
    assert page.evaluate("navigator.clipboard.readText()") == key
    response = requests.get(f"{live_server.url}/api/memories/?all_projects=true",
                            headers={"Authorization": f"Token {key}"}, timeout=30)
    assert response.status_code == 200 and response.json()["count"] == 5
    screenshot(page, "tokens")
    page.click("button:has-text('Revoke')")  # the confirmation dialog is accepted (conftest)
    page.wait_for_selector(".messages")
    assert ApiToken.objects.get(user=someone).revoked_at is not None
    assert requests.get(f"{live_server.url}/api/memories/", headers={"Authorization": f"Token {key}"},
                        timeout=30).status_code == 401

    page.click("header nav >> text=Settings")
    screenshot(page, "settings")
    with page.expect_download() as download:
        page.click("text=Download memories.jsonl")
    assert download.value.suggested_filename == "memories.jsonl"
    lines = [json.loads(line) for line in Path(download.value.path()).read_text().splitlines()]
    assert sorted(line["content"] for line in lines) == sorted(
        Memory.objects.filter(owner=someone).values_list("content", flat=True))
    assert all(line["versions"] for line in lines)


def test_a_user_never_sees_another_users_data(page, live_server, someone):
    mine = services.memory_create(owner=someone, content="Alice keeps bees").memory
    bob = UserFactory(username="bob")
    theirs = services.memory_create(owner=bob, content="Bob's bank PIN hint is his cat").memory
    document = DocumentFactory(owner=bob, title="Bob's tax return")
    conversation = ConversationFactory(owner=bob, title="Bob's private chat")
    log_in(page, live_server, someone)
    for path in (f"/memories/{theirs.pk}/", f"/memories/{theirs.pk}/edit/", f"/documents/{document.pk}/",
                 f"/documents/{document.pk}/status/", f"/conversations/{conversation.pk}/"):
        assert page.goto(f"{live_server.url}{path}").status == 404, path
    assert page.goto(f"{live_server.url}/memories/{mine.pk}/").status == 200
    seen = ""
    for path in ("/", "/memories/?status=all", "/memories/?q=bank+PIN+cat", "/documents/", "/conversations/"):
        page.goto(f"{live_server.url}{path}")
        seen += page.inner_text("main")
    assert "Alice keeps bees" in seen
    assert "Bob" not in seen


def test_admin_and_api_docs_work_under_the_content_security_policy_and_inline_script_does_not_run(
        page, live_server, transactional_db):
    admin = UserFactory(username="root", is_staff=True, is_superuser=True)
    log_in(page, live_server, admin)
    page.goto(f"{live_server.url}/admin/memories/memory/add/")
    page.wait_for_selector("#memory_form")
    page.goto(f"{live_server.url}/api/docs/")
    page.wait_for_selector(".swagger-ui .info .title")  # drawn by Swagger UI's scripts
    page.wait_for_selector(".opblock")  # the schema was fetched and rendered
    screenshot(page, "api-docs")
    page.goto(f"{live_server.url}/memories/")
    # what an injection would add: an inline script and an inline handler; neither runs
    page.evaluate("""() => {
        const script = document.createElement("script");
        script.textContent = "window.injected = true";
        document.body.appendChild(script);
        const img = document.createElement("img");
        img.setAttribute("onerror", "window.injected = true");
        img.src = "/no-such-image";
        document.body.appendChild(img);
    }""")
    page.wait_for_timeout(500)
    assert page.evaluate("window.injected === undefined")
    assert any("script-src" in violation for violation in page.csp_violations)
    page.csp_violations.clear()  # the refusals this test caused on purpose


def test_an_import_is_followed_to_completed(page, live_server, someone, worker):
    from tests.imports.samples import SAMPLES

    log_in(page, live_server, someone)
    page.click("header nav >> text=Settings")  # access, webhooks and imports are its tabs
    page.click("#settings-tabs >> text=Import")
    page.set_input_files("input[name=file]", str(SAMPLES / "claude_conversations.json"))
    page.click("button:has-text('Import')")
    page.wait_for_url(f"{live_server.url}/imports/*/")
    # the bar follows the status endpoint until the import is written, then the page reloads with the counts
    page.wait_for_selector(".progress[data-rendered-status=completed]", timeout=180_000)
    assert page.locator(".progress .bar").get_attribute("aria-valuenow") == "100.0"
    assert page.locator("[data-role=counts]").text_content() == "2 / 2 items"
    assert "2 (4 messages)" in page.inner_text(".meta-grid")
    screenshot(page, "import-detail")
    page.click("nav >> text=Conversations")
    assert "Learning Portuguese" in page.inner_text("table")


def test_a_new_user_adds_a_memory_in_one_box_and_browses_by_namespace(page, live_server, someone):
    from store import ops
    from store import services as store_services

    store_services.store_batch(owner=someone, batch=[
        ops.Put(namespace=("users", "alice", "prefs"), key="drink", value={"content": "likes oolong tea"})])
    log_in(page, live_server, someone)
    page.click("nav >> text=Memories")
    page.click("a:has-text('New memory')")
    assert page.locator("details.more").get_attribute("open") is None
    assert not page.is_visible("input[name=category]")  # the rest waits under "More"
    page.fill("textarea[name=content]", "Prefers green tea in the morning")
    page.click("button:has-text('Save')")
    page.wait_for_selector("#memory-content")
    assert Memory.objects.get(owner=someone, content="Prefers green tea in the morning").importance == 0.5

    page.click("nav >> text=Memories")
    page.fill("input[name=q]", "tea")
    page.press("input[name=q]", "Enter")
    page.wait_for_selector("#search-summary")
    assert page.locator("#filters").get_attribute("open") is None  # a search leaves the filters closed
    assert page.locator("#memory-results .score-parts .part").count() >= 2
    screenshot(page, "memories-search-parts")
    page.click("a.pill.namespace")
    page.wait_for_url("**namespace=**")
    assert page.locator("#memory-results .content").all_inner_texts() == ["likes oolong tea"]
    assert page.locator("select[name=namespace] option:checked").inner_text() == "users/alice/prefs (1)"


def test_the_wide_layout_nav_on_one_line_aligned_actions_and_superseded_marks(
        browser, live_server, someone, live_requests_close_connections):
    from conversations import processing
    from conversations import services as conversation_services
    from profiles import selectors as profile_selectors
    from profiles import services as profile_services

    conversation = ConversationFactory(owner=someone, title="Moving")
    for text in ("I live in Acme.", "I work at Bosch now.", "My brother works at Siemens.",
                 "I moved to Lisbon last month."):
        (message, _), = conversation_services.messages_append(conversation=conversation,
                                                              messages=[{"role": "user", "content": text}])
        processing.message_extract(message_id=message.pk)
    services.memory_create(owner=someone, content="Is allergic to peanuts", category="restriction")
    entries = [e for _, es in profile_selectors.profile_view(owner=someone).sections for e in es]
    profile_services.entry_update(entry=entries[0], data={"text": "Lives in sunny Lisbon", "pinned": True})
    profile_services.entry_update(entry=entries[-1], data={"hidden": True})
    old = Memory.objects.get(owner=someone, content__contains="Acme")
    assert old.superseded_by_id is not None

    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    try:
        log_in(page, live_server, someone)
        for path, name in (("/", "overview-1280"), ("/profile/", "profile-1280"),
                           (f"/conversations/{conversation.pk}/", "conversation-1280"),
                           (f"/memories/{old.pk}/", "memory-superseded-1280"), ("/reminders/", "reminders-1280"),
                           ("/access/tokens/", "tokens-1280"), ("/webhooks/", "webhooks-1280")):
            page.goto(f"{live_server.url}{path}")
            screenshot(page, name)
            tops = page.eval_on_selector_all("header.top nav a", "as => as.map(a => a.getBoundingClientRect().top)")
            assert len(tops) >= 11 and max(tops) - min(tops) < 4, (path, tops)  # one line
            assert page.evaluate("document.documentElement.scrollWidth") <= 1280, path

        page.goto(f"{live_server.url}/profile/")
        rows = page.eval_on_selector_all("tr[id^=entry-]", """rows => rows.map(row => {
            const cells = [...row.children].filter(td => getComputedStyle(td).display !== 'none');
            return cells.map(td => [getComputedStyle(td).display, Math.round(td.getBoundingClientRect().top),
                                    Math.round(td.getBoundingClientRect().height)]);
        })""")
        assert len(rows) >= 3
        for cells in rows:  # every cell of a row, the actions too, is a table cell spanning the row
            assert {display for display, _, _ in cells} == {"table-cell"}, cells
            assert len({(top, height) for _, top, height in cells}) == 1, cells
        lefts = page.eval_on_selector_all("td.actions", "cells => cells.map(td => td.getBoundingClientRect().x)")
        assert len(set(lefts)) == 1, lefts  # the sections' tables keep their Actions column under one another

        page.goto(f"{live_server.url}/conversations/{conversation.pk}/")
        acme = page.locator(".produced li", has_text="Acme")
        assert acme.locator(".badge.superseded").inner_text() == "superseded"
        assert acme.locator("a").evaluate("a => getComputedStyle(a).textDecorationLine") == "line-through"
        lisbon = page.locator(".produced li", has_text="Lisbon")
        assert lisbon.locator(".badge").count() == 0
    finally:
        context.close()
