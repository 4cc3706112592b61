"""GET /api/profile/, entries edited through the API, settings; bad input is a 400 naming the field."""

from memories import services as memory_services
from tests.factories import ProjectFactory


def test_get_profile_returns_sections_text_and_evidence(api, user):
    memory = memory_services.memory_create(owner=user, content="The user is allergic to peanuts.",
                                           category="restriction", importance=0.9).memory
    body = api.get("/api/profile/").json()
    health = next(s for s in body["sections"] if s["section"] == "health")
    entry = health["entries"][0]
    assert health["title"] == "Health and restrictions" and entry["memory_ids"] == [str(memory.pk)]
    assert entry["evidence_count"] == 1 and entry["shown"] is True
    assert "allergic to peanuts" in body["text"] and body["tokens"] <= body["budget"] == 300


def test_patch_entry_edits_pins_and_hides(api, other_api, user):
    memory_services.memory_create(owner=user, content="The user is vegetarian.", category="restriction")
    entry_id = api.get("/api/profile/").json()["sections"][0]["entries"][0]["id"]
    edited = api.patch(f"/api/profile/entries/{entry_id}/", {"text": "Vegetarian, eats fish."}, format="json")
    assert edited.status_code == 200 and edited.json()["user_edited"] is True
    assert "Vegetarian, eats fish." in api.get("/api/profile/").json()["text"]
    assert other_api.patch(f"/api/profile/entries/{entry_id}/", {"pinned": True}, format="json").status_code == 404
    assert api.patch(f"/api/profile/entries/{entry_id}/", {"hidden": True}, format="json").status_code == 200
    assert api.get("/api/profile/").json()["text"] == ""


def test_bad_input_is_a_400_naming_the_field(api, other_user):
    project = ProjectFactory(owner=other_user)
    assert "project" in api.get(f"/api/profile/?project={project.pk}").json()
    assert "budget" in api.get("/api/profile/?budget=5").json()
    created = api.post("/api/profile/entries/", {"text": "Goes by Sam.", "section": "identity"}, format="json")
    entry_id = created.json()["id"]
    for body, field in (({"section": "nowhere"}, "section"), ({"colour": 1}, "colour"), ({"text": " "}, "text")):
        response = api.patch(f"/api/profile/entries/{entry_id}/", body, format="json")
        assert response.status_code == 400 and field in response.json(), body
    response = api.patch("/api/profile/settings/", {"time_zone": "Mars/Olympus"}, format="json")
    assert response.status_code == 400 and "time_zone" in response.json()


def test_settings_round_trip(api):
    assert api.get("/api/profile/settings/").json() == {"time_zone": "UTC", "profile_budget": 300}
    assert api.patch("/api/profile/settings/", {"time_zone": "Europe/Paris"}, format="json").json()[
        "time_zone"] == "Europe/Paris"
