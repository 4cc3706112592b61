"""The panel's profile, reminders, consolidation and "what would my agent see?" pages: scoped to the user, writes
through the profiles services."""

import pytest

from memories import services as memory_services
from memories.models import Memory
from profiles.models import ConsolidationRun, ProfileEntry, Reminder


@pytest.fixture
def panel(client, user):
    client.force_login(user)
    return client


def test_the_pages_need_a_login(client, db):
    for url in ("/profile/", "/reminders/", "/consolidation/", "/agent-view/"):
        assert client.get(url).status_code == 302, url


def test_profile_page_shows_entries_with_evidence_and_edits_them(panel, user, other_user):
    memory = memory_services.memory_create(owner=user, content="The user is allergic to peanuts.",
                                           category="restriction").memory
    page = panel.get("/profile/").content.decode()
    assert "Health and restrictions" in page and "allergic to peanuts" in page and str(memory.pk) in page
    entry = ProfileEntry.objects.get(owner=user)
    panel.post(f"/profile/{entry.pk}/", {"action": "edit", "text": "Severe peanut allergy."})
    panel.post(f"/profile/{entry.pk}/", {"action": "pin"})
    entry.refresh_from_db()
    assert entry.text == "Severe peanut allergy." and entry.user_edited and entry.pinned
    assert entry.history.first().history_user == user
    panel.post(f"/profile/{entry.pk}/", {"action": "hide"})
    assert "Severe peanut allergy." not in panel.get("/profile/").context["view"].text
    assert panel.post(f"/profile/{entry.pk}/", {"action": "edit", "text": ""}).status_code == 302
    entry.refresh_from_db()
    assert entry.text == "Severe peanut allergy."  # a blank text is refused, with a message
    theirs = memory_services.memory_create(owner=other_user, content="Their diet is keto.", category="restriction")
    assert theirs and ProfileEntry.objects.filter(owner=other_user).count() == 0


def test_reminders_page_adds_and_closes(panel, user):
    panel.post("/reminders/add/", {"text": "renew my passport next Monday at 10am"})
    reminder = Reminder.objects.get(owner=user)
    assert "renew my passport" in panel.get("/reminders/").content.decode()
    panel.post(f"/reminders/{reminder.pk}/", {"status": "done"})
    reminder.refresh_from_db()
    assert reminder.status == "done" and not Memory.objects.get(pk=reminder.memory_id).is_active


def test_consolidation_page_lists_runs_and_reverts(panel, user, eager, django_capture_on_commit_callbacks):
    for text in ("Caroline loves hiking in the mountains.", "Caroline loves hiking in the mountains!"):
        memory_services.memory_create(owner=user, content=text, subject="Caroline", allow_duplicate=True)
    with django_capture_on_commit_callbacks(execute=True):
        panel.post("/consolidation/run/")
    run = ConsolidationRun.objects.get(owner=user)
    page = panel.get("/consolidation/").content.decode()
    assert f"Run {run.pk}" in page and "merged into" in page
    panel.post(f"/consolidation/{run.pk}/revert/", {"change": "0"})
    assert Memory.objects.filter(owner=user, superseded_by__isnull=False).count() == 0


def test_agent_view_shows_the_context_with_scores_and_tokens(panel, user):
    memory_services.memory_create(owner=user, content="The user is allergic to peanuts.", category="restriction")
    response = panel.get("/agent-view/", {"q": "what snack can I eat?", "budget": "400"})
    context = response.context["context"]
    assert context.used_tokens <= 400 and "peanuts" in context.text
    assert "tokens used" in response.content.decode()


def test_agent_view_reads_a_question_with_a_nul_in_it(panel, user):
    memory_services.memory_create(owner=user, content="The user is allergic to peanuts.", category="restriction")
    response = panel.get("/agent-view/?q=what%00%20snack%20can%20I%20eat%3F")
    assert response.status_code == 200 and "peanuts" in response.context["context"].text


def test_projects_are_created_renamed_and_deleted_in_the_panel(panel, user, other_user):
    from memories.models import Project
    from tests.factories import ProjectFactory

    panel.post("/projects/new/", {"name": "Thesis", "description": "the PhD"})
    project = Project.objects.get(owner=user)
    memory_services.memory_create(owner=user, content="Chapter 2 is due in May.", project=project)
    assert "Thesis" in panel.get("/projects/").content.decode()
    panel.post(f"/projects/{project.pk}/", {"name": "PhD thesis", "description": ""})
    project.refresh_from_db()
    assert project.name == "PhD thesis"
    panel.post("/projects/new/", {"name": ""})
    assert Project.objects.filter(owner=user).count() == 1  # a blank name is refused
    theirs = ProjectFactory(owner=other_user)
    assert panel.post(f"/projects/{theirs.pk}/", {"action": "delete"}).status_code == 404
    panel.post(f"/projects/{project.pk}/", {"action": "delete"})
    assert not Project.objects.filter(owner=user).exists() and not Memory.objects.filter(owner=user).exists()


def test_a_failed_login_keeps_next(client, user):
    page = client.post("/accounts/login/?next=/profile/", {"username": user.get_username(), "password": "wrong",
                                                          "next": "/profile/"}).content.decode()
    assert 'action="/accounts/login/?next=/profile/"' in page and 'name="next" value="/profile/"' in page
