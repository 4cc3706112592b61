"""Import of the export format: any malformed line is a 400 naming the line and the field, nothing is written;
which id an imported memory gets does not tell whether the id exists in another account."""

import json
import uuid

import pytest

from memories import services
from memories.models import Memory
from tests.factories import MemoryFactory


def exported(api) -> list[dict]:
    text = b"".join(api.get("/api/memories/export/").streaming_content).decode()
    return [json.loads(line) for line in text.splitlines()]


def send(api, records) -> object:
    # json.dumps: NaN stays NaN and a lone surrogate becomes its \ud800 escape, as a hostile file would have them
    body = "\n".join(json.dumps(r) if not isinstance(r, str) else r for r in records)
    return api.post("/api/memories/import/", body, content_type="application/jsonl")


@pytest.fixture
def line(api, user):
    """A valid export line of a memory that is then forgotten, so importing it would succeed."""
    memory = services.memory_create(owner=user, content="Plays the cello", key="cello").memory
    services.memory_update(memory=memory, data={"content": "Plays the cello on Sundays"})
    record = exported(api)[0]
    services.memory_forget(memory=memory)
    return record


def changed(record, path, value):
    record = json.loads(json.dumps(record))
    target = record
    for part in path[:-1]:
        target = target[part]
    if value is KeyError:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return record


MALFORMED = [
    (("id",), KeyError, "id"), (("id",), 12, "id"), (("id",), "not-a-uuid", "id"), (("id",), None, "id"),
    (("content",), 123, "content"), (("content",), "x " * 5000, "content"), (("content",), KeyError, "content"),
    (("namespace",), "memories", "namespace"), (("namespace",), ["a", 5], "namespace"),
    (("namespace",), ["x" * 300], "namespace"), (("key",), 5, "key"), (("key",), "k" * 300, "key"),
    (("metadata",), [1, 2], "metadata"), (("metadata",), "text", "metadata"), (("entities",), 5, "entities"),
    (("links",), {"a": "nul \x00"}, "links"), (("source_ref",), {"\ud800": 1}, "source_ref"),
    (("metadata",), {"k": "\ud800"}, "metadata"), (("tags",), "a,b", "tags"), (("tags",), [1], "tags"),
    (("tags",), ["t" * 200], "tags"), (("importance",), "high", "importance"), (("importance",), 7, "importance"),
    (("importance",), True, "importance"), (("confidence",), -1, "confidence"), (("version",), -3, "version"),
    (("version",), 10**30, "version"), (("version",), 1.5, "version"), (("is_active",), "yes", "is_active"),
    (("indexed",), 1, "indexed"), (("source",), "gossip", "source"), (("category",), ["x"], "category"),
    (("subject",), "s" * 300, "subject"), (("agent_id",), {"a": 1}, "agent_id"),
    (("ttl_minutes",), 1e300, "ttl_minutes"), (("ttl_minutes",), -5, "ttl_minutes"),
    (("value",), [1], "value"), (("value",), "v", "value"),
    (("created_at",), "2024-13-45T00:00:00", "created_at"), (("happened_at",), "yesterday", "happened_at"),
    (("expires_at",), 1700000000, "expires_at"), (("updated_at",), "9" * 10000, "updated_at"),
    (("supersedes",), "nope", "supersedes"), (("superseded_by",), 5, "superseded_by"),
    (("conversation",), ["x"], "conversation"), (("message",), {"id": 1}, "message"),
    (("project",), {"name": "p"}, "project"), (("project",), "p" * 300, "project"),
    (("versions",), "abc", "versions"), (("versions",), [1, 2], "versions"),
    (("versions", 0, "content"), 5, "versions[0].content"), (("versions", 0, "at"), "soon", "versions[0].at"),
    (("versions", 0, "type"), "!!", "type"), (("versions", 0, "action"), ["x"], "versions[0]"),
    (("versions", 0, "importance"), 9, "importance"), (("versions", 0, "namespace"), "flat", "namespace"),
    (("versions", 0, "supersedes"), "x", "versions[0].supersedes"), (("versions", 0, "metadata"), [], "metadata"),
    (("versions", 0, "created_at"), "2024-02-30T00:00:00", "versions[0].created_at"),
    # stored by PostgreSQL, unreadable by Python (year 10000 and year 0 in UTC): the owner's reads failed for good
    (("created_at",), "9999-12-31T23:59:59-12:00", "created_at"),
    (("expires_at",), "0001-01-01T00:00:00+14:00", "expires_at"),
    (("happened_at",), "9999-12-31T23:00:00+00:00", "happened_at"),
    (("versions", 0, "at"), "9999-12-31T23:59:59-12:00", "versions[0].at"),
    (("format",), "memento.memory/2", "format"), (("\ud800",), 1, "a field name"),
]


@pytest.mark.parametrize(("path", "value", "field"), MALFORMED,
                         ids=[f"{'.'.join(map(str, p))}={str(v)[:20]!r}" for p, v, _ in MALFORMED])
def test_a_malformed_line_is_a_400_naming_line_and_field(api, line, path, value, field):
    good = changed(line, ("id",), str(uuid.uuid4()))
    good["key"] = "other"
    response = send(api, [good, changed(line, path, value)])
    assert response.status_code == 400, response.content
    message = " ".join(response.json()["records"])
    assert message.startswith("line 2: ") and field in message
    assert not Memory.objects.exists() and not Memory.history.exists()


@pytest.mark.parametrize("body", ["[1, 2]", '["text"]', "[[]]", '{"format": "memento.memory/1"}', "null"])
def test_a_json_body_that_is_not_a_list_of_objects_is_a_400(api, body):
    response = api.post("/api/memories/import/", body, content_type="application/json")
    assert response.status_code == 400


def test_nan_and_a_repeated_id_are_a_400(api, line):
    nan = json.dumps(line).replace('"importance": 0.5', '"importance": NaN')
    assert "NaN" in nan
    assert send(api, [nan]).status_code == 400
    response = send(api, [line, line])
    assert response.status_code == 400 and "line 2: id" in response.json()["records"][0]
    assert not Memory.objects.exists()


def test_another_users_memory_id_gets_the_same_answer_as_an_id_that_exists_nowhere(api, line, other_user):
    theirs = MemoryFactory(owner=other_user)
    answers, ids = [], []
    for given in (str(theirs.pk), str(uuid.uuid4())):
        record = {**changed(line, ("id",), given), "key": f"k-{given}", "signature": None}
        response = send(api, [record])
        answers.append(response.json())
        ids.append(Memory.objects.get(key=f"k-{given}").pk)
        assert str(ids[-1]) != given  # neither keeps the id it was given
    assert answers[0] == answers[1] == {"imported": 1, "skipped": 0, "versions": 2}
    assert Memory.objects.get(pk=theirs.pk).owner == other_user
    # importing the same file again is still a no-op
    again = send(api, [{**changed(line, ("id",), str(theirs.pk)), "key": f"k-{theirs.pk}", "signature": None}])
    assert again.json() == {"imported": 0, "skipped": 1, "versions": 0}


def test_an_exported_id_comes_back_as_itself(api, line):
    assert send(api, [line]).json()["imported"] == 1
    assert Memory.objects.filter(pk=line["id"]).exists()
    forged = {**line, "signature": "0" * 64}
    Memory.objects.all().delete()
    assert send(api, [forged]).json()["imported"] == 1
    assert not Memory.objects.filter(pk=line["id"]).exists()


def test_import_keys_are_normalised_to_nfc(api, line, user):
    nfd = "cafe\u0301"
    record = {**line, "key": nfd, "namespace": ["me", nfd], "versions": []}
    assert send(api, [record]).status_code == 200
    memory = Memory.objects.get()
    assert memory.key == "caf\u00e9" and memory.namespace == ["me", "caf\u00e9"]
