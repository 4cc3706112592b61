"""The Django admin: every page renders, memory filters and full-text search, history and revert, bulk actions
through the services, and no raw vectors on screen."""

import re

import pytest
from django import forms
from django.contrib import admin
from django.contrib.admin.helpers import ACTION_CHECKBOX_NAME
from django.urls import reverse

from core import rls
from memories import services
from memories.models import Memory, MemoryEvent
from tests.factories import (
    ChunkFactory,
    ConversationFactory,
    DocumentFactory,
    MemoryFactory,
    MessageFactory,
    ProjectFactory,
    UserFactory,
)

OUR_APPS = {"memories", "conversations", "documents"}
READ_ONLY = {"memories.memoryevent"}
FLOAT_LIST = re.compile(r"(-?\d+\.\d+(e-?\d+)?,\s*){20}")


def url(model_or_obj, view: str, *args) -> str:
    opts = model_or_obj._meta
    return reverse(f"admin:{opts.app_label}_{opts.model_name}_{view}", args=args)


def changelist_pks(client, params=None) -> set:
    response = client.get(url(Memory, "changelist"), params or {})
    assert response.status_code == 200
    return {m.pk for m in response.context["cl"].result_list}


def post_data(form) -> dict:
    """What a browser would send back for this (unbound) admin form, unchanged."""
    data = {}
    for bound in form:
        value = bound.value()
        widget = bound.field.widget
        if isinstance(widget, forms.MultiWidget):
            parts = widget.decompress(value) if value else [None] * len(widget.widgets)
            for suffix, part in zip(widget.widgets_names, parts, strict=True):
                data[bound.html_name + suffix] = "" if part is None else str(part)
        elif isinstance(widget, forms.CheckboxInput):
            if value:
                data[bound.html_name] = "on"
        else:
            data[bound.html_name] = "" if value is None else str(value)
    return data


def actions(memory) -> list[str]:
    return [h.history_action for h in memory.history.order_by("history_date", "history_id")]


# --- every page renders ---------------------------------------------------------------------------------------


@pytest.fixture
def one_of_each(db):
    user = UserFactory()
    project = ProjectFactory(owner=user)
    conversation = ConversationFactory(owner=user, project=project)
    message = MessageFactory(conversation=conversation)
    memory = MemoryFactory(owner=user, project=project, conversation=conversation, message=message, tags=["a"])
    event = MemoryEvent.objects.create(owner=user, memory=memory, action="SEARCH", query="anything")
    document = DocumentFactory(owner=user, project=project)
    chunk = ChunkFactory(document=document, page_number=2)
    return {obj._meta.label_lower: obj for obj in (project, memory, event, conversation, message, document, chunk)}


def test_every_model_of_our_apps_is_registered(one_of_each):
    registered = {m._meta.label_lower for m in admin.site._registry if m._meta.app_label in OUR_APPS}
    assert registered == set(one_of_each)


@pytest.mark.parametrize("label", [
    "memories.project", "memories.memory", "memories.memoryevent", "conversations.conversation",
    "conversations.message", "documents.document", "documents.chunk",
])
def test_changelist_add_and_change_pages_render(admin_client, one_of_each, label):
    obj = one_of_each[label]
    assert admin_client.get(url(obj, "changelist")).status_code == 200
    assert admin_client.get(url(obj, "changelist"), {"q": "number"}).status_code == 200
    assert admin_client.get(url(obj, "changelist"), {"q": str(obj.pk)}).status_code == 200
    assert admin_client.get(url(obj, "add")).status_code == (403 if label in READ_ONLY else 200)
    response = admin_client.get(url(obj, "change", obj.pk))
    assert response.status_code == 200
    assert b'name="embedding"' not in response.content


def test_conversation_page_lists_its_messages_and_document_page_its_chunks(admin_client, one_of_each):
    message, chunk = one_of_each["conversations.message"], one_of_each["documents.chunk"]
    page = admin_client.get(url(message.conversation, "change", message.conversation.pk)).content.decode()
    assert message.content in page
    page = admin_client.get(url(chunk.document, "change", chunk.document.pk)).content.decode()
    assert chunk.content in page and "pending" in page


def test_tokens_end_users_and_the_audit_are_in_the_admin_without_any_key(admin_client, user):
    from accounts.models import ApiToken, AuthEvent, EndUser
    from accounts.services import token_create

    issued = token_create(user=user, name="agent")
    assert "API tokens" in admin_client.get(reverse("admin:index")).content.decode()
    for page in (url(ApiToken, "changelist"), url(ApiToken, "change", issued.token.pk),
                 url(ApiToken, "delete", issued.token.pk), url(AuthEvent, "changelist"),
                 url(EndUser, "changelist")):
        response = admin_client.get(page)
        assert response.status_code == 200, page
        html = response.content.decode()
        assert issued.key not in html and issued.token.digest not in html, page
    assert issued.token.prefix in admin_client.get(url(ApiToken, "changelist")).content.decode()
    assert admin_client.get(url(ApiToken, "add")).status_code == 403  # a key is shown once, to its maker


def test_staff_see_every_owner_even_when_the_process_enforces_rls(admin_client, monkeypatch):
    mine, theirs = MemoryFactory(), MemoryFactory()
    monkeypatch.setattr(rls, "_process_default_bypass", False)
    try:
        assert changelist_pks(admin_client) == {mine.pk, theirs.pk}
    finally:
        monkeypatch.undo()
        rls.reset()


# --- filters and search ---------------------------------------------------------------------------------------


@pytest.fixture
def assorted(db):
    alice, bob = UserFactory(), UserFactory()
    project = ProjectFactory(owner=alice)
    flights = MemoryFactory(owner=alice, project=project, content="Prefers window seats on long flights",
                            category="preference", tags=["travel", "comfort"], source="explicit")
    peanuts = MemoryFactory(owner=bob, content="Allergic to peanuts", subject="Bob", category="health",
                            tags=["food"], source="extracted", is_active=False)
    old = MemoryFactory(owner=alice, content="Prefers aisle seats", category="preference", tags=["travel"],
                        superseded_by=flights)
    return {"alice": alice, "bob": bob, "project": project, "flights": flights, "peanuts": peanuts, "old": old}


@pytest.mark.parametrize(("params", "expected"), [
    ({}, {"flights", "peanuts", "old"}),
    ({"owner__id__exact": "<alice>"}, {"flights", "old"}),
    ({"project__id__exact": "<project>"}, {"flights"}),
    ({"source__exact": "extracted"}, {"peanuts"}),
    ({"category": "preference"}, {"flights", "old"}),
    ({"tag": "travel"}, {"flights", "old"}),
    ({"tag": "food"}, {"peanuts"}),
    ({"is_active__exact": "0"}, {"peanuts"}),
    ({"superseded": "yes"}, {"old"}),
    ({"superseded": "no"}, {"flights", "peanuts"}),
    ({"q": "flight"}, {"flights"}),  # stemmed: "flights"
    ({"q": "seats"}, {"flights", "old"}),
    ({"q": '"window seats" -aisle'}, {"flights"}),
    ({"q": "seats -window"}, {"old"}),
    ({"q": "bob"}, {"peanuts"}),  # the subject is searched too
    ({"q": "helicopter"}, set()),
    ({"q": "<peanuts>"}, {"peanuts"}),  # an id
    ({"q": "seats", "tag": "comfort"}, {"flights"}),  # search and filter together
])
def test_memory_changelist_filters_and_search(admin_client, assorted, params, expected):
    def resolve(value):
        return str(assorted[value[1:-1]].pk) if value.startswith("<") else value

    found = changelist_pks(admin_client, {k: resolve(v) for k, v in params.items()})
    assert found == {assorted[name].pk for name in expected}


def test_tag_filter_lists_the_distinct_tags_in_use(admin_client, assorted):
    response = admin_client.get(url(Memory, "changelist"))
    spec = next(s for s in response.context["cl"].filter_specs if s.title == "tag")
    assert spec.lookup_choices == [("comfort", "comfort"), ("food", "food"), ("travel", "travel")]


# --- the embedding is shown as model and size -------------------------------------------------------------------


@pytest.fixture
def embedded(user):
    return services.memory_create(owner=user, content="Runs a marathon every spring", actor=user).memory


def test_change_page_shows_the_embedding_model_and_size_not_the_vector(admin_client, embedded):
    page = admin_client.get(url(embedded, "change", embedded.pk)).content.decode()
    assert "all-MiniLM-L6-v2 · 384 dimensions" in page
    assert not FLOAT_LIST.search(page)
    assert f"{embedded.embedding[0]:.6f}"[:8] not in page
    changelist = admin_client.get(url(Memory, "changelist")).content.decode()
    assert not FLOAT_LIST.search(changelist)


def test_pending_embedding_is_shown_as_pending(admin_client):
    memory = MemoryFactory()
    page = admin_client.get(url(memory, "change", memory.pk)).content.decode()
    assert "pending" in page and "384 dimensions" not in page


# --- history --------------------------------------------------------------------------------------------------


def test_history_page_shows_versions_and_diffs(admin_client, embedded, user):
    services.memory_update(memory=embedded, data={"content": "Runs a marathon every autumn"}, actor=user)
    response = admin_client.get(url(embedded, "history", embedded.pk))
    assert response.status_code == 200
    page = response.content.decode()
    assert "Create" in page and "Update" in page
    assert "Runs a marathon every spring" in page and "Runs a marathon every autumn" in page  # the diff
    assert len(response.context["page_obj"].object_list) == 2


def test_edit_in_admin_goes_through_the_services(admin_client, admin_user, embedded):
    form = admin_client.get(url(embedded, "change", embedded.pk)).context["adminform"].form
    data = {**post_data(form), "content": "Runs a half marathon every spring", "tags": "sport,running"}
    response = admin_client.post(url(embedded, "change", embedded.pk), data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    embedded.refresh_from_db()
    assert embedded.content == "Runs a half marathon every spring" and embedded.tags == ["sport", "running"]
    assert embedded.version == 2 and len(embedded.embedding) == 384  # re-embedded by memory_update
    latest = embedded.history.latest("history_date")
    assert (latest.history_action, latest.history_user, latest.history_change_reason) == (
        "UPDATE", admin_user, "edited in admin")


def test_saving_unchanged_makes_no_version(admin_client, embedded):
    form = admin_client.get(url(embedded, "change", embedded.pk)).context["adminform"].form
    assert admin_client.post(url(embedded, "change", embedded.pk), post_data(form)).status_code == 302
    assert actions(embedded) == ["CREATE"]


def test_edit_refuses_a_project_of_another_owner(admin_client, embedded):
    form = admin_client.get(url(embedded, "change", embedded.pk)).context["adminform"].form
    foreign = ProjectFactory()
    response = admin_client.post(url(embedded, "change", embedded.pk), {**post_data(form), "project": foreign.pk})
    assert response.status_code == 200
    assert "project" in response.context["adminform"].form.errors
    embedded.refresh_from_db()
    assert embedded.project_id is None and embedded.version == 1


def test_add_in_admin_goes_through_the_services(admin_client, admin_user, user):
    form = admin_client.get(url(Memory, "add")).context["adminform"].form
    data = {**post_data(form), "owner": user.pk, "content": "Keeps bees on the roof", "namespace": "memories,hobbies"}
    response = admin_client.post(url(Memory, "add"), data)
    assert response.status_code == 302, response.context["adminform"].form.errors
    memory = Memory.objects.get(content="Keeps bees on the roof")
    assert memory.owner == user and memory.namespace == ["memories", "hobbies"] and memory.key
    assert len(memory.embedding) == 384
    record = memory.history.get()
    assert (record.history_action, record.history_user, record.history_change_reason) == (
        "CREATE", admin_user, "created in admin")


def test_revert_from_the_history_page(admin_client, admin_user, embedded, user):
    first = embedded.history.get()
    services.memory_update(memory=embedded, data={"content": "Runs a marathon every autumn"}, actor=user)
    revert_url = reverse("admin:memories_memory_simple_history", args=[embedded.pk, first.history_id])
    response = admin_client.get(revert_url)
    assert response.status_code == 200
    assert not FLOAT_LIST.search(response.content.decode())
    response = admin_client.post(revert_url, post_data(response.context["adminform"].form))
    assert response.status_code == 302
    embedded.refresh_from_db()
    assert embedded.content == "Runs a marathon every spring" and embedded.version == 3
    assert actions(embedded) == ["CREATE", "UPDATE", "REVERT"]
    assert embedded.history.latest("history_date").history_user == admin_user


# --- bulk actions ---------------------------------------------------------------------------------------------


def run_action(client, action: str, memories):
    """The page the action leads to (with its message)."""
    data = {"action": action, ACTION_CHECKBOX_NAME: [str(m.pk) for m in memories]}
    response = client.post(url(Memory, "changelist"), data)
    assert response.status_code == 302
    return client.get(response["Location"])


def test_soft_delete_and_restore_actions_write_history(admin_client, admin_user):
    memories = [MemoryFactory(), MemoryFactory()]
    untouched = MemoryFactory()
    done = run_action(admin_client, "soft_delete_selected", memories)
    assert "Soft-deleted 2 memories." in done.content.decode()
    for memory in memories:
        memory.refresh_from_db()
        assert not memory.is_active and memory.version == 2
        latest = memory.history.latest("history_date")
        assert (latest.history_action, latest.history_user) == ("DELETE", admin_user)
    untouched.refresh_from_db()
    assert untouched.is_active and actions(untouched) == ["CREATE"]
    done = run_action(admin_client, "restore_selected", memories[:1])
    assert "Restored 1 memory." in done.content.decode()
    run_action(admin_client, "restore_selected", memories[1:])
    for memory in memories:
        memory.refresh_from_db()
        assert memory.is_active and memory.version == 3
        assert actions(memory) == ["CREATE", "DELETE", "RESTORE"]
        assert memory.history.latest("history_date").history_user == admin_user


def test_restore_action_reports_a_key_clash_and_keeps_going(admin_client):
    deleted = MemoryFactory(key="home", is_active=False)
    MemoryFactory(owner=deleted.owner, key="home")
    other = MemoryFactory(is_active=False)
    response = admin_client.post(url(Memory, "changelist"), {
        "action": "restore_selected", ACTION_CHECKBOX_NAME: [str(deleted.pk), str(other.pk)],
    }, follow=True)
    assert "Not restored" in response.content.decode()
    deleted.refresh_from_db()
    other.refresh_from_db()
    assert not deleted.is_active and other.is_active


def test_reembed_action_embeds_with_history(admin_client, admin_user):
    memory = MemoryFactory(content="Speaks Portuguese at home")
    run_action(admin_client, "reembed_selected", [memory])
    memory.refresh_from_db()
    assert len(memory.embedding) == 384 and memory.embedding_model == "all-MiniLM-L6-v2"
    latest = memory.history.latest("history_date")
    assert (latest.history_action, latest.history_user) == ("EMBED", admin_user)


def test_delete_in_admin_forgets_the_memory_and_its_history(admin_client):
    memory = MemoryFactory()
    response = admin_client.post(url(memory, "delete", memory.pk), {"post": "yes"})
    assert response.status_code == 302
    assert not Memory.objects.filter(pk=memory.pk).exists()
    assert not Memory.history.filter(id=memory.pk).exists()


# --- valid time -------------------------------------------------------------------------------------------------


def test_validity_and_supersession_are_shown_with_the_reason(admin_client, user):
    from datetime import UTC, datetime

    old = services.memory_create(owner=user, content="Drives a blue Skoda Octavia",
                                 valid_from=datetime(2021, 4, 1, tzinfo=UTC)).memory
    new = services.memory_create(owner=user, content="Drives a grey Tesla Model 3", supersedes=old.pk,
                                 valid_from=datetime(2024, 2, 10, tzinfo=UTC),
                                 reason="same car attribute, newer value").memory
    old.refresh_from_db()
    page = admin_client.get(url(old, "change", old.pk)).content.decode()
    assert "Valid time" in page and "April 1, 2021" in page and "Feb. 10, 2024" in page
    assert f'<a href="{url(new, "change", new.pk)}">Drives a grey Tesla Model 3</a>' in page
    assert "(why: same car attribute, newer value" in page
    current = admin_client.get(url(new, "change", new.pk)).content.decode()
    assert "— (current)" in current
    listing = admin_client.get(url(Memory, "changelist"), {"superseded": "yes"}).content.decode()
    assert "valid from" in listing.lower() and "valid to" in listing.lower()


def test_every_admin_page_names_the_site(admin_client, client):
    for response in (admin_client.get("/admin/"), client.get("/admin/login/")):
        page = response.content.decode()
        assert '<div id="site-name"><a href="/admin/">Memento administration</a></div>' in page
        assert re.search(r"<title>[^<]* \| Memento administration</title>", page)
        assert "Django administration" not in page and "Django site admin" not in page
        assert 'rel="icon" type="image/svg+xml" href="/static/panel/favicon.svg"' in page
