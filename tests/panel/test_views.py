"""The panel through Django's test client: access, scoping, CSRF, forms and their errors, and that writes go
through the services (versions with actor and reason)."""

import json
import re
from datetime import UTC, datetime

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from django.urls import reverse

from accounts.models import ApiToken
from core import rls
from memories import services
from memories.models import Memory
from tests.factories import ConversationFactory, DocumentFactory, MemoryFactory, MessageFactory, ProjectFactory


@pytest.fixture
def panel(client, user):
    client.force_login(user)
    return client


def errors_of(response, field: str) -> list[str]:
    """The error messages shown next to `field` (the list the field template renders under it)."""
    html = response.content.decode()
    match = re.search(rf'<ul class="errors" id="id_{field}_errors">(.*?)</ul>', html, re.S)
    return re.findall(r"<li>(.*?)</li>", match.group(1), re.S) if match else []


def test_anonymous_visitors_are_sent_to_the_login_page(client, user):
    memory = MemoryFactory(owner=user)
    for url in ("/", "/memories/", f"/memories/{memory.pk}/", "/documents/", "/conversations/", "/settings/",
                "/settings/export/"):
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"] == f"{reverse('panel:login')}?next={url}"
    assert client.post(f"/memories/{memory.pk}/forget/").status_code == 302
    assert Memory.objects.filter(pk=memory.pk).exists()


def test_log_in_with_the_form_then_log_out(client, user):
    assert client.get(reverse("panel:login")).status_code == 200
    response = client.post(reverse("panel:login"), {"username": user.username, "password": "wrong"})
    assert response.status_code == 200
    assert "Please enter a correct username and password" in response.content.decode()
    response = client.post(reverse("panel:login"), {"username": user.username,
                                                    "password": "correct horse battery staple"})
    assert response["Location"] == "/"
    assert client.get("/").status_code == 200
    assert client.post(reverse("panel:logout"))["Location"] == reverse("panel:login")
    assert client.get("/").status_code == 302


def test_password_change_shows_errors_next_to_the_fields_then_changes_it(panel, user):
    url = reverse("panel:password_change")
    response = panel.post(url, {"old_password": "nope", "new_password1": "a", "new_password2": "b"})
    assert response.status_code == 200
    assert errors_of(response, "old_password")
    assert errors_of(response, "new_password2")
    response = panel.post(url, {"old_password": "correct horse battery staple",
                                "new_password1": "a much longer secret 42", "new_password2": "a much longer secret 42"})
    assert response["Location"] == reverse("panel:password_change_done")
    user.refresh_from_db()
    assert user.check_password("a much longer secret 42")


def test_csrf_protection_is_on(user):
    client = Client(enforce_csrf_checks=True)
    client.force_login(user)
    memory = MemoryFactory(owner=user)
    assert client.post(reverse("panel:memory_create"), {"content": "x"}).status_code == 403
    assert client.post(reverse("panel:memory_delete", args=[memory.pk])).status_code == 403
    assert client.post(reverse("panel:access_tokens"), {"name": "x", "access": "read"}).status_code == 403
    memory.refresh_from_db()
    assert memory.is_active
    assert not ApiToken.objects.filter(user=user).exists()
    page = client.get(reverse("panel:memory_create")).content.decode()
    assert 'name="csrfmiddlewaretoken"' in page


def test_another_users_objects_are_404(panel, other_user):
    memory = MemoryFactory(owner=other_user, content="their secret")
    document = DocumentFactory(owner=other_user)
    conversation = ConversationFactory(owner=other_user)
    for url in (f"/memories/{memory.pk}/", f"/memories/{memory.pk}/edit/", f"/documents/{document.pk}/",
                f"/documents/{document.pk}/status/", f"/conversations/{conversation.pk}/"):
        assert panel.get(url).status_code == 404, url
    for url in (f"/memories/{memory.pk}/delete/", f"/memories/{memory.pk}/restore/", f"/memories/{memory.pk}/forget/",
                f"/memories/{memory.pk}/revert/", f"/documents/{document.pk}/delete/"):
        assert panel.post(url).status_code == 404, url
    memory.refresh_from_db()
    assert memory.is_active and memory.version == 1
    lists = "".join(panel.get(url).content.decode() for url in ("/", "/memories/?status=all", "/documents/",
                                                                "/conversations/"))
    assert "their secret" not in lists
    assert str(document) not in lists and str(conversation) not in lists


def test_lists_show_only_the_users_own_rows(panel, user, other_user):
    MemoryFactory(owner=user, content="mine to see")
    MemoryFactory(owner=other_user, content="theirs to hide")
    page = panel.get("/memories/").content.decode()
    assert "mine to see" in page and "theirs to hide" not in page


def test_pages_work_with_row_level_security_enforced(panel, user, monkeypatch):
    """As in a gunicorn process: outside a request the connection sees no user rows at all."""
    memory = MemoryFactory(owner=user, content="seen through the policy", tags=["x"])
    document = DocumentFactory(owner=user)
    conversation = ConversationFactory(owner=user)
    monkeypatch.setattr(rls, "_process_default_bypass", False)
    try:
        rls.reset()
        assert Memory.objects.count() == 0  # the policy is really on here
        for url in ("/", "/memories/", f"/memories/{memory.pk}/", "/documents/", f"/documents/{document.pk}/",
                    f"/conversations/{conversation.pk}/", "/settings/"):
            response = panel.get(url)
            assert response.status_code == 200, url
        assert "seen through the policy" in panel.get("/memories/").content.decode()
        # the export is streamed after the middleware has reset the connection
        exported = b"".join(panel.get("/settings/export/").streaming_content).decode()
        assert [json.loads(line)["id"] for line in exported.splitlines()] == [str(memory.pk)]
        response = panel.post(f"/memories/{memory.pk}/delete/")
        assert response.status_code == 302
    finally:
        monkeypatch.undo()
        rls.reset()
    memory.refresh_from_db()
    assert not memory.is_active


# --- memories: forms ------------------------------------------------------------------------------------------


def test_create_memory_through_the_service(panel, user):
    project = ProjectFactory(owner=user)
    response = panel.post(reverse("panel:memory_create"), {
        "content": "Prefers green tea", "category": "preference", "tags": "drinks, tea", "project": project.pk,
        "importance": "0.8", "confidence": "1", "namespace": "memories/profile", "key": "",
        "metadata": '{"via": "panel"}',
    })
    memory = Memory.objects.get(owner=user)
    assert response["Location"] == reverse("panel:memory_detail", args=[memory.pk])
    assert (memory.content, memory.tags, memory.namespace, memory.project) == (
        "Prefers green tea", ["drinks", "tea"], ["memories", "profile"], project)
    assert memory.metadata == {"via": "panel"}
    assert memory.embedding is not None  # the service embedded it
    record = memory.history.get()
    assert (record.history_user, record.history_action, record.history_change_reason) == (
        user, "CREATE", "created in the panel")


def test_form_errors_are_shown_next_to_their_fields(panel, user, other_user):
    foreign = ProjectFactory(owner=other_user)
    response = panel.post(reverse("panel:memory_create"), {
        "content": "  ", "importance": "2", "confidence": "1", "namespace": "memories", "project": foreign.pk,
        "metadata": "[1, 2]", "happened_at": "yesterday",
    })
    assert response.status_code == 200
    assert errors_of(response, "content") == ["This field is required."]
    assert errors_of(response, "importance") == ["Ensure this value is less than or equal to 1."]
    assert errors_of(response, "project")  # another user's project is not a choice
    assert errors_of(response, "metadata")
    assert errors_of(response, "happened_at")
    assert errors_of(response, "namespace") == []
    assert not Memory.objects.exists()


def test_service_validation_errors_land_on_the_form_field(panel, settings):
    settings.MEMORY_MAX_TOKENS = 5
    response = panel.post(reverse("panel:memory_create"), {
        "content": "one two three four five six seven eight", "importance": "0.5", "confidence": "1",
        "namespace": "memories",
    })
    assert response.status_code == 200
    assert errors_of(response, "content") == ["Content is 8 tokens long; the limit is 5."]
    assert not Memory.objects.exists()


def test_a_near_duplicate_is_reported_and_can_be_stored_anyway(panel, user):
    first = services.memory_create(owner=user, content="Is allergic to peanuts").memory
    form = {"content": "Is allergic to peanuts", "importance": "0.5", "confidence": "1", "namespace": "memories"}
    response = panel.post(reverse("panel:memory_create"), form)
    assert response.status_code == 200
    assert "near-identical" in errors_of(response, "content")[0]
    assert reverse("panel:memory_detail", args=[first.pk]) in response.content.decode()
    assert Memory.objects.count() == 1
    response = panel.post(reverse("panel:memory_create"), {**form, "allow_duplicate": "on"})
    assert response.status_code == 302
    assert Memory.objects.count() == 2


def test_edit_writes_only_the_changed_fields_as_a_new_version(panel, user):
    memory = services.memory_create(owner=user, content="Lives in Paris", tags=["home"]).memory
    url = reverse("panel:memory_edit", args=[memory.pk])
    page = panel.get(url).content.decode()
    assert "Lives in Paris" in page and 'value="home"' in page
    unchanged = {"content": "Lives in Paris", "tags": "home", "importance": "0.5", "confidence": "1.0",
                 "namespace": "memories", "key": memory.key, "metadata": "{}", "category": "", "subject": ""}
    panel.post(url, unchanged)
    memory.refresh_from_db()
    assert memory.version == 1
    panel.post(url, {**unchanged, "content": "Lives in Berlin"})
    memory.refresh_from_db()
    assert (memory.version, memory.content) == (2, "Lives in Berlin")
    latest = memory.history.latest()
    assert (latest.history_user, latest.history_change_reason) == (user, "edited in the panel")


def test_detail_shows_versions_with_changes_and_revert_makes_a_new_version(panel, user):
    memory = services.memory_create(owner=user, content="Lives in Paris").memory
    services.memory_update(memory=memory, data={"content": "Lives in Berlin", "category": "home"}, actor=user)
    page = panel.get(reverse("panel:memory_detail", args=[memory.pk])).content.decode()
    assert "<del>Paris</del>" in page and "<ins>Berlin</ins>" in page
    assert 'data-field="category"' in page
    first = memory.history.earliest()
    response = panel.post(reverse("panel:memory_revert", args=[memory.pk]), {"history_id": first.history_id})
    assert response.status_code == 302
    memory.refresh_from_db()
    assert (memory.content, memory.category, memory.version) == ("Lives in Paris", "", 3)
    assert memory.history.latest().history_action == "REVERT"
    response = panel.post(reverse("panel:memory_revert", args=[memory.pk]), {"history_id": "999999"}, follow=True)
    assert "No such version of this memory." in response.content.decode()


def test_soft_delete_restore_and_forget(panel, user):
    memory = MemoryFactory(owner=user)
    panel.post(reverse("panel:memory_delete", args=[memory.pk]))
    memory.refresh_from_db()
    assert not memory.is_active
    assert str(memory.pk) not in panel.get("/memories/").content.decode()
    assert str(memory.pk) in panel.get("/memories/?status=deleted").content.decode()
    panel.post(reverse("panel:memory_restore", args=[memory.pk]))
    memory.refresh_from_db()
    assert memory.is_active
    assert [r.history_action for r in memory.history.order_by("history_id")][-2:] == ["DELETE", "RESTORE"]
    panel.post(reverse("panel:memory_forget", args=[memory.pk]))
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert not Memory.history.filter(id=memory.pk).exists()


def test_restore_reports_a_key_clash(panel, user):
    old = MemoryFactory(owner=user, key="job", is_active=False)
    MemoryFactory(owner=user, key="job")
    response = panel.post(reverse("panel:memory_restore", args=[old.pk]), follow=True)
    assert "A live memory already uses key" in response.content.decode()
    old.refresh_from_db()
    assert not old.is_active


def test_detail_shows_the_chain_and_the_source_message(panel, user):
    message = MessageFactory(conversation=ConversationFactory(owner=user, title="Moving"), content="I moved!")
    old = services.memory_create(owner=user, content="Lives in Paris").memory
    new = services.memory_create(owner=user, content="Lives in Berlin", supersedes=old.pk,
                                 conversation=message.conversation, message=message).memory
    page = panel.get(reverse("panel:memory_detail", args=[old.pk])).content.decode()
    assert 'id="chain"' in page and reverse("panel:memory_detail", args=[new.pk]) in page
    page = panel.get(reverse("panel:memory_detail", args=[new.pk])).content.decode()
    assert f"{reverse('panel:conversation_detail', args=[message.conversation_id])}#message-{message.pk}" in page
    assert "I moved!" in page


def test_detail_shows_validity_and_why_it_was_superseded_and_undoes_it(panel, user):
    old = services.memory_create(owner=user, content="Has a Fairphone 4",
                                 valid_from=datetime(2022, 5, 3, 12, 0, tzinfo=UTC)).memory
    new = services.memory_create(owner=user, content="Has a Pixel 8", supersedes=old.pk,
                                 valid_from=datetime(2024, 11, 9, 8, 0, tzinfo=UTC),
                                 reason="switched phones: same phone attribute, newer value").memory
    page = panel.get(reverse("panel:memory_detail", args=[old.pk])).content.decode()
    validity = re.sub(r"\s+", " ", page.split('id="valid-from">')[1].split("</dl>")[0])
    assert validity.startswith("2022-05-03 12:00</dd>") and 'id="valid-to">2024-11-09 08:00' in validity
    notice = re.sub(r"\s+", " ", page.split('id="supersession"')[1].split("</section>")[0])
    assert reverse("panel:memory_detail", args=[new.pk]) in notice and "“Has a Pixel 8”" in notice
    assert 'Why:</strong> <span class="reason-text">switched phones: same phone attribute, newer value' in notice
    assert "Undo this supersession" in notice and "automatically" in notice  # no person made it
    history_id = re.search(r'name="history_id" value="(\d+)"', notice).group(1)
    response = panel.post(reverse("panel:memory_revert", args=[old.pk]),
                          {"history_id": history_id, "undo": "supersession"}, follow=True)
    assert "Supersession undone: this memory is current again." in response.content.decode()
    old.refresh_from_db()
    new.refresh_from_db()
    assert (old.superseded_by_id, old.valid_to, old.content, new.supersedes_id) == (None, None, "Has a Fairphone 4",
                                                                                    None)
    assert 'id="supersession"' not in response.content.decode() and "— (still true)" in response.content.decode()


def test_list_as_of_shows_what_was_true_that_day(panel, user):
    old = services.memory_create(owner=user, content="Works at Bosch in Stuttgart",
                                 valid_from=datetime(2020, 1, 6, tzinfo=UTC)).memory
    services.memory_create(owner=user, content="Works at Siemens in Munich", supersedes=old.pk,
                           valid_from=datetime(2023, 9, 1, tzinfo=UTC))

    def shown(query):
        page = panel.get(f"/memories/?{query}").content.decode()
        return re.findall(r'class="content" href="[^"]*">([^<]*)</a>', page)

    assert shown("") == ["Works at Siemens in Munich"]
    assert shown("as_of=2022-03-15") == ["Works at Bosch in Stuttgart"]
    assert shown("as_of=2023-09-01") == ["Works at Siemens in Munich"]
    assert shown("as_of=2019-12-31") == []
    assert shown("q=employer&as_of=2022-03-15") == ["Works at Bosch in Stuttgart"]


def test_list_filters_and_status(panel, user):
    project = ProjectFactory(owner=user, name="garden")
    MemoryFactory(owner=user, content="tomatoes in the project", project=project, category="plan")
    MemoryFactory(owner=user, content="tagged one", tags=["health"], source="document")
    MemoryFactory(owner=user, content="gone one", is_active=False)

    def shown(query):
        return panel.get(f"/memories/?{query}").content.decode()

    assert "tomatoes" in shown("") and "tagged one" in shown("") and "gone one" not in shown("")
    assert "tagged one" not in shown(f"project={project.pk}") and "tomatoes" in shown(f"project={project.pk}")
    assert "tomatoes" not in shown("project=none")
    assert "tomatoes" not in shown("tags=health") and "tagged one" in shown("tags=health")
    assert "tagged one" not in shown("category=plan")
    assert "tomatoes" not in shown("source=document")
    assert "gone one" in shown("status=deleted") and "tagged one" not in shown("status=deleted")


def test_search_in_each_mode_finds_the_right_memory(panel, user):
    services.memory_create(owner=user, content="Is allergic to peanuts", category="restriction")
    services.memory_create(owner=user, content="Works at Acme as an engineer")
    for mode in ("hybrid", "semantic", "keyword"):
        page = panel.get("/memories/", {"q": "peanut allergy", "mode": mode}).content.decode()
        results = re.findall(r'class="content" href="[^"]*">([^<]*)</a>', page)
        assert results[0] == "Is allergic to peanuts", mode
        if mode != "hybrid":  # hybrid also lists the rest, far below (importance and recency)
            assert results == ["Is allergic to peanuts"], mode


# --- documents, conversations, settings -----------------------------------------------------------------------


def test_upload_errors_are_shown_next_to_the_file_field(panel):
    url = reverse("panel:document_list")
    response = panel.post(url, {"file": SimpleUploadedFile("empty.txt", b"")})
    assert errors_of(response, "file") == ["The file is empty."]
    response = panel.post(url, {"file": SimpleUploadedFile("x.exe", b"MZ\x90\x00binary")})
    assert errors_of(response, "file")[0].startswith("Files of type &#x27;.exe&#x27; are not supported.")
    response = panel.post(url, {})
    assert errors_of(response, "file") == ["This field is required."]


def test_document_status_endpoint_and_delete(panel, user):
    document = DocumentFactory(owner=user, processing_status="processing", chunks_total=4, chunks_done=1)
    status = panel.get(reverse("panel:document_status", args=[document.pk])).json()
    assert (status["status"], status["progress"]) == ("processing", {"done": 1, "total": 4, "percent": 25.0})
    page = panel.get(reverse("panel:document_detail", args=[document.pk])).content.decode()
    assert 'aria-valuenow="25.0"' in page
    response = panel.post(reverse("panel:document_delete", args=[document.pk]))
    assert response["Location"] == reverse("panel:document_list")
    assert not type(document).objects.filter(pk=document.pk).exists()


def test_conversation_transcript_shows_the_memories_each_message_produced(panel, user):
    conversation = ConversationFactory(owner=user, title="Dinner plans")
    said = MessageFactory(conversation=conversation, content="I'm vegetarian", sequence=1)
    MessageFactory(conversation=conversation, content="Noted.", role="assistant", sequence=2)
    MemoryFactory(owner=user, content="Is vegetarian", conversation=conversation, message=said)
    listing = panel.get("/conversations/").content.decode()
    assert "Dinner plans" in listing
    page = panel.get(reverse("panel:conversation_detail", args=[conversation.pk])).content.decode()
    article = page.split(f'id="message-{said.pk}"')[1].split("</article>")[0]
    assert "Is vegetarian" in article
    assert "Is vegetarian" not in page.split("Noted.")[1]


def test_imported_messages_show_when_they_were_said_and_who_said_them(panel, user, eager):
    from conversations import services as conversation_services

    conversation = ConversationFactory(owner=user, title="Imported")
    conversation_services.messages_append(conversation=conversation, messages=[
        {"role": "user", "name": "Ana", "content": "We got the keys today!", "sent_at": "2024-06-20T09:15:00Z"},
        {"role": "assistant", "content": "Congratulations!", "sent_at": "2024-06-20T09:16:00Z"}])
    page = panel.get(reverse("panel:conversation_detail", args=[conversation.pk])).content.decode()
    first, second = page.split('class="message role-')[1:3]
    assert '<span class="speaker">Ana</span>' in first and ">2024-06-20 09:15</time>" in first
    assert '<span class="speaker">Assistant</span>' in second and ">2024-06-20 09:16</time>" in second
    assert "received" in first  # arrival time only as a hint


def test_tokens_are_made_shown_once_replaced_and_revoked_in_the_panel(panel, user):
    from rest_framework.test import APIClient

    project = ProjectFactory(owner=user, name="Garden")
    response = panel.post(reverse("panel:access_tokens"), {"name": "Cursor", "access": "read", "project": project.pk,
                                                           "agent_id": "coder"})
    page = response.content.decode()
    key = re.search(r'id="new-token">([^<]+)<', page).group(1)
    assert f'Bearer {key}' in page and "/mcp" in page  # ready-made MCP snippets
    token = ApiToken.objects.get(user=user)
    assert token.read_only and token.project == project and token.agent_id == "coder"
    listed = panel.get(reverse("panel:access_tokens")).content.decode()
    assert key not in listed and token.prefix in listed and "read-only, project Garden, agent coder" in listed
    assert 'data-confirm="Revoke' in listed and 'data-confirm="Replace' in listed

    page = panel.post(reverse("panel:access_token_replace", args=[token.pk])).content.decode()
    new_key = re.search(r'id="new-token">([^<]+)<', page).group(1)
    assert new_key != key
    assert APIClient(HTTP_AUTHORIZATION=f"Token {key}").get("/api/memories/").status_code == 401
    assert APIClient(HTTP_AUTHORIZATION=f"Token {new_key}").get("/api/memories/").status_code == 200
    replacement = ApiToken.objects.get(user=user, revoked_at__isnull=True)
    assert replacement.read_only and replacement.project == project  # same name and scope
    panel.post(reverse("panel:access_token_revoke", args=[replacement.pk]))
    assert APIClient(HTTP_AUTHORIZATION=f"Token {new_key}").get("/api/memories/").status_code == 401


def test_a_token_form_error_is_shown_next_to_its_field_and_other_users_tokens_are_404(panel, user, other_user):
    from accounts.services import token_create

    response = panel.post(reverse("panel:access_tokens"), {"name": "", "access": "read"})
    assert response.status_code == 400 and errors_of(response, "name")
    others = token_create(user=other_user, name="theirs").token
    assert panel.post(reverse("panel:access_token_revoke", args=[others.pk])).status_code == 404
    assert ApiToken.objects.get(pk=others.pk).revoked_at is None


def test_the_token_list_says_when_each_token_expires(panel, user, settings):
    from datetime import timedelta

    from django.utils import timezone

    settings.API_TOKEN_TTL_DAYS = 30
    response = panel.post(reverse("panel:access_tokens"), {"name": "a", "access": "read_write"})
    expires = ApiToken.objects.get(user=user).expires_at.strftime("%Y-%m-%d %H:%M")
    assert f"expires {expires} UTC" in response.content.decode()
    assert expires in panel.get(reverse("panel:access_tokens")).content.decode()
    ApiToken.objects.filter(user=user).update(expires_at=timezone.now() - timedelta(days=1))
    assert "expired" in panel.get(reverse("panel:access_tokens")).content.decode()
    panel.post(reverse("panel:access_tokens"), {"name": "b", "access": "read", "never_expires": "on"})
    assert ApiToken.objects.get(user=user, name="b").expires_at is None


def test_the_activity_page_shows_sign_ins_and_token_events(client, user):
    client.post(reverse("panel:login"), {"username": user.username, "password": "wrong"})
    client.post(reverse("panel:login"), {"username": user.username, "password": "correct horse battery staple"})
    client.post(reverse("panel:access_tokens"), {"name": "agent", "access": "read"})
    page = client.get(reverse("panel:access_activity")).content.decode()
    assert "sign-in failed" in page and "signed in" in page and "token created" in page


def test_export_then_import_round_trip(panel, user, other_user):
    memory = services.memory_create(owner=user, content="Prefers tea").memory
    services.memory_update(memory=memory, data={"content": "Prefers green tea"})
    MemoryFactory(owner=other_user, content="not mine")
    response = panel.get(reverse("panel:export"))
    assert response["Content-Disposition"] == 'attachment; filename="memories.jsonl"'
    exported = b"".join(response.streaming_content)
    lines = [json.loads(line) for line in exported.decode().splitlines()]
    assert [(line["id"], line["content"], len(line["versions"])) for line in lines] == [
        (str(memory.pk), "Prefers green tea", 2)]
    panel.logout()
    panel.force_login(other_user)
    response = panel.post(reverse("panel:import"), {"file": SimpleUploadedFile("m.jsonl", exported)}, follow=True)
    assert "Imported 1 memory (2 versions); 0 were already here." in response.content.decode()
    assert Memory.objects.filter(owner=other_user, content="Prefers green tea").exists()


def test_import_errors_are_shown_next_to_the_file_field(panel):
    url = reverse("panel:import")
    response = panel.post(url, {"file": SimpleUploadedFile("m.jsonl", b"{not json\n")})
    assert response.status_code == 400
    assert errors_of(response, "file")[0].startswith("Line 1 is not valid JSON")
    response = panel.post(url, {"file": SimpleUploadedFile("m.jsonl", b'{"format": "other"}\n')})
    assert errors_of(response, "file") == ["line 1: format must be &#x27;memento.memory/1&#x27;."]


def test_overview_counts_by_category_tag_and_source(panel, user):
    MemoryFactory(owner=user, category="preference", tags=["food", "tea"])
    MemoryFactory(owner=user, category="preference", tags=["food"], source="document")
    MemoryFactory(owner=user, category="fact", is_active=False, tags=["food"])
    page = panel.get("/").content.decode()
    rows = dict(re.findall(r'<td><a href="[^"]*"[^>]*>([^<]*)</a></td><td class="n">(\d+)</td>', page))
    assert rows["preference"] == "2" and "fact" not in rows
    assert (rows["food"], rows["tea"]) == ("2", "1")
    assert rows["document"] == "1"
    assert page.count("<rect ") == 30
    assert '<strong>2</strong> live memories' in page


def test_rough_edges_empty_list_invites_readable_metadata_and_score_parts(panel, user):
    assert "Add your first memory" in panel.get("/memories/").content.decode()
    assert "Add your first memory" not in panel.get("/memories/", {"category": "x"}).content.decode()
    memory = services.memory_create(owner=user, content="The user lives in Lisbon.",
                                    metadata={"attribute": "home", "value": "Lisbon"},
                                    entities={"places": ["Lisbon"]}).memory
    page = panel.get(f"/memories/{memory.pk}/").content.decode()
    assert "<dt>attribute</dt><dd>home</dd>" in page and "<dt>places</dt><dd>Lisbon</dd>" in page
    assert "{'" not in page
    found = panel.get("/memories/", {"q": "where does the user live", "mode": "hybrid"}).content.decode()
    assert 'class="muted score-parts"' in found
    assert "<strong>1</strong> live memory</a>" in panel.get("/").content.decode()


def test_favicon_ico_is_the_panels_icon(client, db):
    response = client.get("/favicon.ico")
    assert (response.status_code, response["Location"]) == (301, "/static/panel/favicon.svg")
    icon = client.get(response["Location"])
    assert icon.status_code == 200 and icon["Content-Type"] == "image/svg+xml"
    assert b"<svg" in b"".join(icon.streaming_content)


def test_a_count_of_one_is_singular(panel, user):
    from profiles.models import ConsolidationRun

    MemoryFactory(owner=user)
    assert "Your 1 memory, deleted" in panel.get(reverse("panel:settings")).content.decode()
    ConsolidationRun.objects.create(owner=user, trigger="request", memories_seen=1)
    assert "1 memory compared" in panel.get(reverse("panel:consolidation")).content.decode()


def test_a_lockout_page_leads_back_to_the_same_log_in_with_next(client, user, settings):
    login = f"{reverse('panel:login')}?next=/profile/"
    for _ in range(settings.AXES_FAILURE_LIMIT):
        response = client.post(login, {"username": user.username, "password": "wrong", "next": "/profile/"})
    assert response.status_code == 429
    assert '<a href="/accounts/login/?next=/profile/">Back to the log-in page</a>' in response.content.decode()


def test_a_conversation_marks_the_memories_it_produced_that_were_since_superseded(panel, user):
    from tests.factories import ConversationFactory, MessageFactory

    conversation = ConversationFactory(owner=user, title="Moving")
    said = MessageFactory(conversation=conversation, content="I live in Acme.", sequence=1)
    old = services.memory_create(owner=user, content="Lives in Acme", conversation=conversation, message=said).memory
    services.memory_create(owner=user, content="Lives in Lisbon", supersedes=old.pk)
    page = panel.get(reverse("panel:conversation_detail", args=[conversation.pk])).content.decode()
    produced = re.search(r'<ul class="produced">(.*?)</ul>', page, re.S).group(1)
    assert (f'<a href="{reverse("panel:memory_detail", args=[old.pk])}" class="superseded">Lives in Acme</a> '
            f'<span class="badge superseded"' in produced)


def test_settings_holds_access_webhooks_and_import_as_tabs(panel):
    for name in ("settings", "access_tokens", "access_end_users", "access_activity", "webhooks", "import_list"):
        page = panel.get(reverse(f"panel:{name}")).content.decode()
        header = re.search(r'<header class="top">.*?</header>', page, re.S).group(0)
        assert re.search(r'<a href="/settings/" aria-current="page">Settings</a>', header), name
        tabs = re.search(r'<nav class="tabs" id="settings-tabs".*?</nav>', page, re.S).group(0)
        assert len(re.findall(r"<a ", tabs)) == 4 and tabs.count('aria-current="page"') == 1, name
        assert "Access</a>" not in header and "Webhooks</a>" not in header  # the bar fits one line at 1280 px
