"""Reading exports: each format from the samples written for these tests, the kept branch of a ChatGPT tree,
times converted to UTC and checked to years 1..9999, bad items named by position and field, zips refused when
they hold anything unexpected."""

import zipfile

import pytest

from imports import formats
from imports.formats.common import Bad, timestamp
from tests.imports.samples import data, dumps, export_zip, raw


def test_chatgpt_keeps_only_the_branch_the_user_kept():
    parsed = formats.read(raw("chatgpt"))
    assert parsed.format == "chatgpt" and not parsed.problems
    (position, trip), (_, garden) = parsed.items
    assert position == 1 and trip["title"] == "Weekend trip planning"
    said = [m["content"] for m in trip["messages"]]
    assert said == [
        "I'm planning a hiking weekend near Porto with my sister Clara.",
        "That sounds lovely. Do you have any dietary needs I should plan around?",
        "Yes, I'm allergic to peanuts, so no satay please.",
        "Noted: a peanut-free menu for the trip.",
    ]  # the abandoned edit (trombone teacher) and the hidden system turn are left out
    assert [m["role"] for m in trip["messages"]] == ["user", "assistant", "user", "assistant"]
    assert trip["messages"][0]["sent_at"] == "2024-05-01T10:00:01+00:00"
    assert trip["messages"][0]["client_message_id"] == "n-user-1"
    assert trip["created_at"] == "2024-05-01T10:00:00.250000+00:00"
    assert garden["messages"][0]["sent_at"] == "2024-06-01T10:00:01+00:00"


def test_chatgpt_without_current_node_follows_the_last_children():
    export = data("chatgpt")
    del export[0]["current_node"]
    said = [m["content"] for m in formats.read(dumps(export)).items[0][1]["messages"]]
    assert said[-1] == "Noted: a peanut-free menu for the trip."


def test_claude_turns_times_and_empty_chats():
    parsed = formats.read(raw("claude"))
    assert parsed.format == "claude" and not parsed.problems
    assert [position for position, _ in parsed.items] == [1, 2]  # the empty third chat has nothing to import
    desk = parsed.items[1][1]
    assert desk["title"] == "Standing desk"
    assert desk["messages"][0] == {
        "role": "user", "content": "My back hurts after long days, I work as a cartographer for the city.",
        "sent_at": "2024-04-02T22:00:10+00:00", "client_message_id": "m-a2-1", "name": "", "metadata": {},
    }
    assert desk["messages"][1]["role"] == "assistant"


def test_mem0_memories_with_provenance_and_utc_times():
    parsed = formats.read(raw("mem0"))
    assert parsed.format == "mem0"
    first = parsed.items[0][1]
    assert first["content"] == "Prefers window seats on long flights"
    assert first["key"] == "mem0-7a1b0000-0000-4000-8000-000000000101"
    assert first["created_at"] == "2024-07-26T17:29:36.630547+00:00"
    assert first["tags"] == ["travel", "preferences"]
    assert first["metadata"] == {"origin": "travel-bot", "mem0": {"user_id": "ana", "hash": "h-101"}}
    bare_list = formats.read(dumps(data("mem0")["results"]))
    assert bare_list.format == "mem0" and len(bare_list.items) == 2


def test_a_mem0_memory_over_the_memory_limits_is_a_bad_item(settings):
    settings.MEMORY_MAX_CHARS = 40
    export = data("mem0")
    export["results"][1]["memory"] = "x" * 41
    parsed = formats.read(dumps(export))
    assert [str(p) for p in parsed.problems] == [
        "item 2: memory: Content is 41 characters long; the limit is 40."]
    assert [position for position, _ in parsed.items] == [1]


def test_langgraph_items_keep_namespace_key_and_value():
    parsed = formats.read(raw("langgraph"))
    assert parsed.format == "langgraph"
    employer, note = (item for _, item in parsed.items)
    assert employer["namespace"] == ["users", "ana", "profile"] and employer["key"] == "employer"
    assert employer["content"] == "Works at a bicycle repair cooperative in Ghent"
    assert employer["value"]["source"] == "onboarding"
    assert "half marathon" in note["content"]
    assert note["created_at"] == "2024-05-03T05:30:00+00:00"


def test_json_lines_group_messages_into_conversations():
    parsed = formats.read(raw("jsonl"), filename="history.jsonl")
    assert parsed.format == "jsonl" and parsed.unit == "line"
    (first_line, support), (third_line, cat) = parsed.items
    assert (first_line, third_line) == (1, 3)
    assert support["title"] == "Printer trouble" and len(support["messages"]) == 2
    assert cat["title"] == "chat-7" and cat["messages"][0]["sent_at"] == "2024-02-03T08:46:40+00:00"


def test_an_imported_message_is_cut_to_the_message_limit(settings):
    settings.MESSAGE_MAX_CHARS = 50
    line = dumps({"conversation": "long", "role": "user", "content": "x" * 80})
    parsed = formats.read(line + b"\n", format="jsonl")
    assert parsed.items[0][1]["messages"][0]["content"] == "x" * 50


def test_a_bad_line_is_named_by_number_and_field():
    lines = raw("jsonl") + b'{"conversation": "x", "role": "robot", "content": "hi"}\nnot json\n'
    parsed = formats.read(lines, format="jsonl")
    assert [str(p) for p in parsed.problems] == [
        "line 4: role: 'robot' is not one of user, assistant, system, tool.",
        "line 5: $: Not valid JSON: Expecting value.",
    ]


@pytest.mark.parametrize(("value", "expected"), [
    ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00+00:00"),
    ("9999-12-31T23:59:59+00:00", "9999-12-31T23:59:59+00:00"),
    ("2024-01-01T01:00:00+01:00", "2024-01-01T00:00:00+00:00"),
    ("2024-01-01 12:00:00", "2024-01-01T12:00:00+00:00"),
    (0, "1970-01-01T00:00:00+00:00"),
    (None, None),
])
def test_times_in_range(value, expected):
    assert timestamp(value, "t") == expected


@pytest.mark.parametrize("value", [
    "0001-01-01T00:30:00+01:00",  # year 0 in UTC
    "9999-12-31T23:30:00-01:00",  # year 10000 in UTC
    1e20, float("nan"), -1e15, "yesterday", True, [2024],
])
def test_times_out_of_range_or_malformed(value):
    with pytest.raises(Bad) as caught:
        timestamp(value, "chat_messages[0].created_at")
    assert caught.value.field == "chat_messages[0].created_at"


def test_a_bad_item_is_named_by_position_and_field():
    export = data("claude")
    export[1]["chat_messages"][0]["created_at"] = "0000-12-31T23:00:00Z"
    export[0]["chat_messages"][1]["sender"] = "robot"
    parsed = formats.read(dumps(export))
    assert [p.as_dict() for p in parsed.problems] == [
        {"item": 1, "field": "chat_messages[1].sender", "message": "'robot' is not one of human, assistant."},
        {"item": 2, "field": "chat_messages[0].created_at",
         "message": "'0000-12-31T23:00:00Z' is not an ISO 8601 time."},
    ]
    assert parsed.items == []  # both bad; the empty third has nothing to import


def test_an_offset_that_leaves_the_years_is_named():
    export = data("chatgpt")
    export[1]["mapping"]["g-user"]["message"]["create_time"] = -62135600000  # before year 1
    parsed = formats.read(dumps(export))
    assert [str(p) for p in parsed.problems] == [
        "item 2: mapping.g-user.message.create_time: -62135600000 seconds is outside the years 1 to 9999."]
    assert [position for position, _ in parsed.items] == [1]


def test_the_wrong_shape_or_format_is_unreadable():
    with pytest.raises(formats.Unreadable, match="could not be told"):
        formats.read(b'[{"hello": 1}]')
    with pytest.raises(formats.Unreadable, match="not valid JSON"):
        formats.read(b"{")
    with pytest.raises(formats.Unreadable, match="Not a mem0 export"):
        formats.read(b'"text"', format="mem0")
    with pytest.raises(formats.Unreadable, match="Unknown format 'csv'; choose one of auto, chatgpt"):
        formats.read(raw("mem0"), format="csv")


def test_an_export_zip_is_read():
    archive = export_zip({"conversations.json": raw("chatgpt"), "chat.html": b"<html></html>",
                          "user.json": b"{}", "dalle-generations/file-1.webp": b"RIFF"})
    assert formats.read(archive).format == "chatgpt"
    nested = export_zip({"data-2024/conversations.json": raw("claude"), "data-2024/users.json": b"[]"})
    assert formats.read(nested).format == "claude"


@pytest.mark.parametrize(("members", "message"), [
    ({"conversations.json": b"[]", "../evil.json": b"{}"}, "leaves the archive"),
    ({"conversations.json": b"[]", "/etc/cron.d/x.json": b"{}"}, "leaves the archive"),
    ({"conversations.json": b"[]", "run.exe": b"MZ"}, "not a kind of file an export holds"),
    ({"chat.html": b"<html></html>"}, "holds no conversations.json"),
    ({"conversations.json": b"[" + b" " * (3 * 1024 * 1024) + b"]"}, "zip bomb"),
])
def test_a_zip_with_unexpected_members_is_refused(members, message):
    with pytest.raises(formats.Unreadable, match=message):
        formats.read(export_zip(members))


def test_a_zip_over_the_unpacked_limit_is_refused(settings):
    settings.IMPORT_MAX_UNPACKED_BYTES = 1000
    archive = export_zip({"conversations.json": raw("chatgpt")}, compression=zipfile.ZIP_STORED)
    with pytest.raises(formats.Unreadable, match="unpacks to"):
        formats.read(archive)


def test_limits_on_items_and_messages(settings):
    settings.IMPORT_MAX_ITEMS = 1
    with pytest.raises(formats.Unreadable, match="holds 2 items; the most one import may hold is 1"):
        formats.read(raw("mem0"))
    settings.IMPORT_MAX_ITEMS = 100
    settings.IMPORT_MAX_MESSAGES = 5
    with pytest.raises(formats.Unreadable, match="holds 6 messages"):
        formats.read(raw("chatgpt"))
