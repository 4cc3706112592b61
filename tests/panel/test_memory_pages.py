"""The memory list and the new-memory form as a new user meets them: one text box with the rest under "More",
namespaces (store items) shown and filtered, the filter panel closed after a plain search."""

import re

import pytest

from memories import services
from memories.models import Memory
from store import ops
from store import services as store_services


@pytest.fixture
def panel(client, user):
    client.force_login(user)
    return client


def more_section(page: str) -> tuple[str, str]:
    """The <details class="more"> opening tag and what it holds."""
    match = re.search(r'(<details class="more"[^>]*>)(.*?)</details>', page, re.S)
    assert match, "no More section"
    return match.group(1), match.group(2)


def test_the_new_memory_form_is_one_text_box_with_the_rest_under_more(panel):
    page = panel.get("/memories/new/").content.decode()
    tag, inside = more_section(page)
    assert " open" not in tag
    outside = page.replace(inside, "")
    assert re.search(r'<textarea name="content"[^>]*autofocus', outside)
    for name in ("category", "subject", "tags", "project", "importance", "confidence", "namespace", "key",
                 "happened_at", "expires_at", "metadata", "allow_duplicate"):
        assert f'name="{name}"' in inside and f'name="{name}"' not in outside, name
    assert 'href="/projects/"' in inside  # projects are made on their own page


def test_the_text_alone_makes_a_memory_with_the_defaults(panel, user):
    response = panel.post("/memories/new/", {"content": "My sister Ana lives in Porto"})
    assert response.status_code == 302
    memory = Memory.objects.get(owner=user)
    assert (memory.content, memory.namespace, memory.importance, memory.confidence, memory.metadata) == (
        "My sister Ana lives in Porto", ["memories"], 0.5, 1.0, {})


def test_more_opens_when_a_field_in_it_has_an_error_and_when_editing(panel, user):
    page = panel.post("/memories/new/", {"content": "Likes tea", "importance": "7"}).content.decode()
    tag, inside = more_section(page)
    assert " open" in tag and 'id="id_importance_errors"' in inside
    memory = services.memory_create(owner=user, content="Likes tea").memory
    tag, _ = more_section(panel.get(f"/memories/{memory.pk}/edit/").content.decode())
    assert " open" in tag


def test_a_reported_duplicate_shows_its_checkbox_outside_more(panel, user):
    services.memory_create(owner=user, content="The user drinks green tea every morning.")
    page = panel.post("/memories/new/", {"content": "The user drinks green tea every morning."}).content.decode()
    _, inside = more_section(page)
    assert 'name="allow_duplicate"' in page and 'name="allow_duplicate"' not in inside


def test_an_empty_list_invites_adding_a_memory_or_connecting_an_agent(panel):
    invite = re.search(r'<p class="notice" id="no-memories-yet">(.*?)</p>', panel.get("/memories/").content.decode(),
                       re.S).group(1)
    assert re.findall(r'<a href="([^"]+)">', invite) == ["/memories/new/", "/access/tokens/"]


FILTERS_OPEN = re.compile(r'<details id="filters"[^>]*\bopen\b')


def test_the_filter_panel_stays_closed_after_a_search(panel, user):
    services.memory_create(owner=user, content="Prefers green tea in the morning")
    # what the browser sends on pressing Enter in the search box: every filter, blank or at its default
    searched = panel.get("/memories/", {"q": "tea", "mode": "hybrid", "project": "", "namespace": "", "tags": "",
                                        "category": "", "source": "", "status": "active", "as_of": ""})
    assert 'id="search-summary"' in searched.content.decode()
    assert not FILTERS_OPEN.search(searched.content.decode())
    for narrowed in ({"status": "deleted"}, {"tags": "food"}, {"as_of": "2026-01-01"}, {"as_of": "not a day"},
                     {"namespace": '["memories"]'}):
        assert FILTERS_OPEN.search(panel.get("/memories/", {"q": "tea", **narrowed}).content.decode()), narrowed


def put_item(user, namespace: tuple, key: str, value: dict) -> None:
    store_services.store_batch(owner=user, batch=[ops.Put(namespace=namespace, key=key, value=value)])


def test_the_list_shows_namespaces_and_filters_by_them(panel, user, other_user):
    services.memory_create(owner=user, content="Prefers green tea in the morning")
    put_item(user, ("users", "alice", "prefs"), "drink", {"content": "likes oolong tea"})
    put_item(user, ("users", "bob"), "food", {"content": "likes ramen"})
    put_item(other_user, ("secret", "place"), "x", {"content": "not yours"})

    page = panel.get("/memories/").content.decode()
    options = re.findall(r'<option value="([^"]*)"[^>]*>([^<]*)</option>',
                         re.search(r'<select name="namespace".*?</select>', page, re.S).group(0))
    assert [label for _, label in options] == ["All namespaces", "memories (1)", "users/alice/prefs (1)",
                                               "users/bob (1)"]
    # a store item's row names its namespace and key, linked to the namespace's list; plain memories say nothing
    assert re.search(r'<a class="pill namespace"[^>]*href="/memories/\?namespace=%5B%22users%22%2C%22alice%22'
                     r'%2C%22prefs%22%5D">users/alice/prefs / drink</a>', page)
    assert page.count('class="pill namespace"') == 2

    def contents(params):
        html = panel.get("/memories/", params).content.decode()
        return sorted(re.findall(r'<a class="content" href="[^"]+">([^<]+)</a>', html))

    assert contents({"namespace": '["users"]'}) == ["likes oolong tea", "likes ramen"]  # and those below it
    assert contents({"namespace": '["users","alice","prefs"]'}) == ["likes oolong tea"]
    assert contents({"namespace": '["memories"]'}) == ["Prefers green tea in the morning"]
    assert contents({"namespace": '["secret"]'}) == []
    assert contents({"q": "tea", "mode": "keyword", "namespace": '["users"]'}) == ["likes oolong tea"]


def test_a_bad_namespace_is_named_next_to_the_field(panel):
    response = panel.get("/memories/", {"namespace": "{not json"})
    assert response.status_code == 200
    assert 'id="id_namespace_errors"' in response.content.decode()


def test_a_store_items_detail_shows_its_value_as_fields(panel, user):
    put_item(user, ("users", "alice", "prefs"), "drink", {"content": "likes oolong tea", "rating": 5})
    memory = Memory.objects.get(owner=user)
    page = panel.get(f"/memories/{memory.pk}/").content.decode()
    shown = re.search(r'<dl class="readable" id="memory-value">(.*?)</dl>', page).group(1)
    assert sorted(re.findall(r"<dt>(.*?)</dt><dd>(.*?)</dd>", shown)) == [("content", "likes oolong tea"),
                                                                          ("rating", "5")]


PART = re.compile(r'<span class="part" title="([^"]+)">(\w+) (\d+\.\d\d)</span>')


def test_search_results_explain_their_score_by_its_parts(panel, user):
    from django.utils.html import escape

    from memories.search.ranking import RANKINGS

    services.memory_create(owner=user, content="Prefers green tea in the morning", importance=0.8)
    page = panel.get("/memories/", {"q": "green tea", "mode": "hybrid"}).content.decode()
    score = float(re.search(r'<span class="score"[^>]*>(\d+\.\d+)</span>', page).group(1))
    parts = PART.findall(page)
    assert {name for _, name, _ in parts} >= {"semantic", "keyword", "importance"}
    assert abs(sum(float(value) for _, _, value in parts) - score) < 0.03  # the parts add up to the score
    assert ("importance: how much the memory matters", "importance", "0.08") in parts
    assert escape(RANKINGS["fused"]) in re.search(r'<details class="how-scored".*?</details>', page, re.S).group(0)


def test_the_agent_view_shows_each_memorys_score_parts_and_the_profile_once(panel, user):
    services.memory_create(owner=user, content="The user is allergic to peanuts.", category="restriction")
    # an event is no profile fact: it is listed among the memories, with its score's parts
    services.memory_create(owner=user, content="The user had a peanut reaction at a wedding.", category="event")
    page = panel.get("/agent-view/", {"q": "is the user allergic to peanuts?"}).content.decode()
    assert {name for _, name, _ in PART.findall(page)} >= {"semantic", "keyword"}
    items = re.search(r"<tbody>(.*?)</tbody>", page, re.S).group(1)
    assert items.count("<td>profile</td>") == 1 and items.count("About the user") == 1


def test_the_versions_show_a_metadata_change_as_readable_pairs(panel, user):
    memory = services.memory_create(owner=user, content="Lives in Lisbon", metadata={"attribute": "home"}).memory
    services.memory_update(memory=memory, data={"metadata": {"attribute": "home", "since": 2019}}, actor=user)
    page = panel.get(f"/memories/{memory.pk}/").content.decode()
    change = re.search(r'<tr class="change" data-field="metadata">(.*?)</tr>', page, re.S).group(1)
    old, new = re.search(r"<del>(.*?)</del> → <ins>(.*?)</ins>", change, re.S).groups()
    assert (old.strip(), sorted(new.strip().split("; "))) == ("attribute: home", ["attribute: home", "since: 2019"])


def test_the_versions_name_fields_and_related_things_as_people_read_them(panel, user):
    from tests.factories import ConversationFactory

    memory = services.memory_create(owner=user, content="Cannot eat peanuts").memory
    conversation = ConversationFactory(owner=user, title="Planning dinner")
    services.memory_update(memory=memory, data={"conversation": conversation, "happened_at": memory.created_at},
                           actor=user)
    page = panel.get(f"/memories/{memory.pk}/").content.decode()
    rows = dict(re.findall(r'<tr class="change" data-field="(\w+)">\s*<th>(.*?)</th>', page))
    assert rows["conversation"] == "Conversation" and rows["happened_at"] == "Happened at"
    conversation_row = re.search(r'data-field="conversation">.*?</tr>', page, re.S).group(0)
    assert "Planning dinner" in conversation_row and str(conversation.pk) not in conversation_row


def _change(page: str, field: str) -> tuple[str, str]:
    row = re.search(rf'<tr class="change" data-field="{field}">(.*?)</tr>', page, re.S).group(1)
    old, new = re.search(r"<del>(.*?)</del> → <ins>(.*?)</ins>", row, re.S).groups()
    return old.strip(), new.strip()


def test_the_versions_show_a_link_set_or_emptied_as_none_and_the_linked_memory(panel, user):
    from django.utils import timezone

    old = services.memory_create(owner=user, content="Lives in Lisbon").memory
    new = services.memory_create(owner=user, content="Lives in Porto", supersedes=old.pk).memory
    page = panel.get(f"/memories/{old.pk}/").content.decode()
    assert "Deleted memory" not in page and "pk=None" not in page
    none = '<span class="muted" title="none">—</span>'
    assert _change(page, "superseded_by") == (none, f'<a href="/memories/{new.pk}/">Lives in Porto</a>')
    # a moment as the page writes it elsewhere (2026-11-27 14:14), not Django's default "Nov. 27, 2026, 2:14 p.m."
    old.refresh_from_db()
    assert _change(page, "valid_to") == (none, timezone.localtime(old.valid_to).strftime("%Y-%m-%d %H:%M"))
    # the supersession undone: the link emptied again
    record = old.history.filter(superseded_by__isnull=True).order_by("-history_date").first()
    services.memory_revert(memory=old, history_id=record.history_id, actor=user)
    page = panel.get(f"/memories/{old.pk}/").content.decode()
    newest = re.search(r'<li class="version".*?</li>', page, re.S).group(0)
    assert _change(newest, "superseded_by") == (f'<a href="/memories/{new.pk}/">Lives in Porto</a>', none)
    # a linked memory since erased is named by its id
    services.memory_forget(memory=new, actor=user)
    page = panel.get(f"/memories/{old.pk}/").content.decode()
    assert f"memory {new.pk} (no longer exists)" in page and "pk=" not in page
