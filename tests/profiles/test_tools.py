"""get_profile, list_reminders and update_reminder, as agents call them (OpenAI tools and MCP share them)."""

import pytest
from django.core.exceptions import ValidationError

from conversations.tools import openai_tools, tool_call
from memories import services as memory_services


def test_get_profile_answers_text_and_entries_with_evidence(user):
    memory = memory_services.memory_create(owner=user, content="The user is allergic to peanuts.",
                                           category="restriction").memory
    answer = tool_call(user=user, name="get_profile", arguments={"budget": 100})
    assert "allergic to peanuts" in answer["text"] and answer["data"]["tokens"] <= 100
    [section] = answer["data"]["sections"]
    assert section["entries"][0]["memory_ids"] == [str(memory.pk)]
    assert {"get_profile", "list_reminders", "update_reminder"} <= {t["function"]["name"] for t in openai_tools()}


def test_bad_tool_arguments_name_the_field(user):
    with pytest.raises(ValidationError) as raised:
        tool_call(user=user, name="update_reminder", arguments={"reminder_id": 999, "status": "done"})
    assert "reminder_id" in raised.value.message_dict
    with pytest.raises(ValidationError) as raised:
        tool_call(user=user, name="list_reminders", arguments={"due_before": "whenever"})
    assert list(raised.value.message_dict) == ["due_before"]
