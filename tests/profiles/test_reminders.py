"""Reminders: read from messages against their send time in the user's time zone, closed by a later message, the
API and the tools; due ones in the context."""

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from django.utils import timezone

from conversations.context import context_for
from conversations.tools import tool_call
from memories.models import Memory
from profiles import reminders, services
from profiles.models import Reminder

THURSDAY = datetime(2026, 11, 26, 13, 0, tzinfo=ZoneInfo("UTC"))


@pytest.mark.parametrize(("text", "task", "due"), [
    ("Remind me to call mom on Friday.", "call mom", datetime(2026, 11, 27, 9, 0)),
    ("My dentist appointment is on 3 March at 10.", "dentist appointment", datetime(2027, 3, 3, 10, 0)),
    ("Please remind me to buy milk tomorrow at 9pm", "buy milk", datetime(2026, 11, 27, 21, 0)),
    ("remind me in 2 hours to stretch", "stretch", datetime(2026, 11, 26, 16, 0)),
    ("I have a job interview next Monday at 2pm.", "job interview", datetime(2026, 11, 30, 14, 0)),
    ("Remind me on the 5th to pay the bill", "pay the bill", datetime(2026, 12, 5, 9, 0)),
    ("Remind me to email Bob at 4.", "email Bob", datetime(2026, 11, 26, 16, 0)),  # 4 in the morning is past
    ("remind me to stretch at 7:00", "stretch", datetime(2026, 11, 27, 7, 0)),
    ("Don't let me forget to buy flowers for Mother's Day on May 10.", "buy flowers for Mother's Day",
     datetime(2027, 5, 10, 9, 0)),
    ("Remind me to pay rent in 3 days.", "pay rent", datetime(2026, 11, 29, 14, 0)),
    ("I have to collect the parcel on Saturday at 11, could you remind me?", "collect the parcel",
     datetime(2026, 11, 28, 11, 0)),
    ("The school play is this Friday at 5.", "school play", None),  # a play is no appointment word
    ("The team meeting is this Friday at 5.", "team meeting", datetime(2026, 11, 27, 17, 0)),  # not today 17:00
])
def test_due_times_are_read_against_the_send_time_in_the_users_zone(text, task, due):
    found = reminders.reminder_in(text, said_at=THURSDAY, zone="Europe/Paris")
    if due is None:
        assert found is None
        return
    assert found.task == task and found.due_at == due.replace(tzinfo=ZoneInfo("Europe/Paris"))


@pytest.mark.parametrize("text", ["My meeting went well.", "I love my dentist.", "What should I cook?",
                                  "I walk by the sea to remind me how small my worries are.",
                                  "also pls remind me what a p value is", "Remind me how a loan works?"])
def test_no_reminder_in_plain_statements(text):
    assert reminders.reminder_in(text, said_at=THURSDAY) is None


@pytest.mark.parametrize(("text", "expected"), [
    ("I called mom.", "done"), ("I need to call mom.", None), ("Did I call mom?", None),
    ("Mom's call is cancelled, I'll call mom next week.", None), ("Cancel the call with mom", "cancelled"),
])
def test_a_later_message_closes_a_reminder(text, expected):
    assert reminders.closes(text, "call mom") == expected


def test_reminder_from_a_message_then_done_by_a_later_one(user, said):
    services.settings_update(owner=user, data={"time_zone": "Europe/Paris"})
    [asked] = said(user, "Remind me to call mom on Friday.", sent_at=THURSDAY.isoformat())
    reminder = Reminder.objects.get(owner=user)
    assert reminder.task == "call mom" and reminder.status == "open" and reminder.source_message_id == asked.pk
    assert reminder.due_at == datetime(2026, 11, 27, 9, 0, tzinfo=ZoneInfo("Europe/Paris"))
    assert reminder.memory.category == "reminder" and reminder.memory.message_id == asked.pk
    said(user, "I called mom.", sent_at=(THURSDAY + timedelta(days=1)).isoformat())
    reminder.refresh_from_db()
    assert reminder.status == "done" and "I called mom." in reminder.closed_reason
    memory = Memory.objects.get(pk=reminder.memory_id)
    assert memory.is_active is False and memory.history.first().history_change_reason.startswith("reminder done")


def test_an_appointment_links_the_extracted_memory(user, said):
    said(user, "My dentist appointment is on 3 March at 10.", sent_at=THURSDAY.isoformat())
    reminder = Reminder.objects.get(owner=user)
    assert reminder.task == "dentist appointment"
    assert Memory.objects.filter(owner=user).count() == 1 and reminder.memory.category == "reminder"


def test_reminders_api_and_tools(api, other_api, user):
    created = api.post("/api/reminders/", {"text": "water the plants tomorrow at 8am"}, format="json")
    assert created.status_code == 201 and created.json()["task"] == "water the plants"
    rid = created.json()["id"]
    later = (timezone.now() + timedelta(days=3)).isoformat()
    assert [r["id"] for r in api.get("/api/reminders/", {"due_before": later}).json()["results"]] == [rid]
    assert api.get("/api/reminders/", {"due_before": timezone.now().isoformat()}).json()["results"] == []
    assert api.get("/api/reminders/", {"due_before": "soon"}).status_code == 400
    assert other_api.patch(f"/api/reminders/{rid}/", {"status": "done"}, format="json").status_code == 404
    listed = tool_call(user=user, name="list_reminders", arguments={})
    assert "water the plants" in listed["text"]
    done = tool_call(user=user, name="update_reminder", arguments={"reminder_id": rid, "status": "cancelled"})
    assert done["data"]["status"] == "cancelled"
    assert api.patch(f"/api/reminders/{rid}/", {"status": "open"}, format="json").json()["status"] == "open"
    assert Memory.objects.get(pk=Reminder.objects.get(pk=rid).memory_id).is_active
    assert api.post("/api/reminders/", {"text": ""}, format="json").status_code == 400


def test_due_and_overdue_reminders_and_the_profile_open_the_context(user, said):
    said(user, "I'm allergic to peanuts.", "Remind me to renew my passport yesterday.")
    context = context_for(owner=user, query="what snack should I buy?", budget=1000)
    assert context.text.startswith("About the user (profile):")
    assert "renew my passport (overdue since" in context.text and "peanuts" in context.text.split("Memories")[0]
    assert context.used_tokens <= 1000


@pytest.mark.slow
def test_end_to_end_on_the_real_worker(celery_worker):
    from tests.factories import UserFactory, api_client
    from tests.worker import wait_for

    user = UserFactory()
    api = api_client(user)
    api.patch("/api/profile/settings/", {"time_zone": "Europe/Paris"}, format="json")
    cid = api.post("/api/conversations/", {"title": "chat"}, format="json").json()["id"]
    api.post(f"/api/conversations/{cid}/messages/", {"messages": [
        {"role": "user", "content": "I'm allergic to peanuts.", "sent_at": THURSDAY.isoformat()},
        {"role": "user", "content": "Remind me to call mom on Friday.", "sent_at": THURSDAY.isoformat()},
    ]}, format="json")
    wait_for(lambda: api.get("/api/reminders/").json()["results"], worker=celery_worker)
    [reminder] = api.get("/api/reminders/").json()["results"]
    assert reminder["task"] == "call mom" and reminder["due_at"].startswith("2026-11-27T08:00:00")  # 9:00 Paris
    assert "peanuts" in api.get("/api/profile/").json()["text"]
    api.post(f"/api/conversations/{cid}/messages/", {"messages": [
        {"role": "user", "content": "I called mom.", "sent_at": (THURSDAY + timedelta(days=1)).isoformat()}]},
        format="json")
    wait_for(lambda: api.get("/api/reminders/", {"status": "done"}).json()["results"], worker=celery_worker)
