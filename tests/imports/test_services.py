"""Importing writes through the conversations and memories services: original times, titles and roles, memories
with provenance; a second import of the same file adds nothing; a bad item refuses the whole file (nothing
written) unless bad items are skipped; a share at a time, resumable."""

from datetime import UTC, datetime

import pytest
from django.core.exceptions import ValidationError

from conversations.models import Conversation, Message
from imports import processing, services
from imports.models import Import, ImportItem
from memories.models import Memory
from tests.imports.samples import FILES, data, dumps, raw


def run(user, name, *, content=None, **options) -> Import:
    job = services.import_upload(owner=user, raw=content if content is not None else raw(name),
                                 filename=FILES[name], **options)
    return processing.import_process(import_id=job.pk)


def counts(job):
    from imports.selectors import import_summary

    return import_summary(job)["counts"]


def test_a_chatgpt_export_becomes_conversations_with_their_times_titles_and_roles(user):
    job = run(user, "chatgpt")
    assert job.status == "completed" and job.format == "chatgpt"
    conversations = {c.title: c for c in Conversation.objects.filter(owner=user)}
    assert set(conversations) == {"Weekend trip planning", "Garden question"}
    trip = conversations["Weekend trip planning"]
    assert trip.status == Conversation.Status.COMPLETED  # history: ended, so the pipeline extracts it all
    assert trip.metadata["import"]["original_id"] == "c0ffee00-0000-4000-8000-000000000001"
    turns = list(trip.messages.order_by("sequence").values_list("role", "sent_at", "client_message_id"))
    assert turns[0] == ("user", datetime(2024, 5, 1, 10, 0, 1, tzinfo=UTC), "n-user-1")
    assert [role for role, _, _ in turns] == ["user", "assistant", "user", "assistant"]
    assert not Message.objects.filter(owner=user, content__contains="trombone").exists()
    assert counts(job) == {"conversations": 2, "messages": 6, "memories": 0, "duplicates": 0, "skipped": 0}


def test_the_same_file_twice_adds_nothing(user):
    run(user, "chatgpt")
    run(user, "mem0")
    before = (Conversation.objects.count(), Message.objects.count(), Memory.objects.count())
    again = run(user, "chatgpt")
    mem0_again = run(user, "mem0")
    assert (Conversation.objects.count(), Message.objects.count(), Memory.objects.count()) == before
    assert counts(again)["duplicates"] == 2 and counts(again)["conversations"] == 0
    assert counts(mem0_again)["duplicates"] == 2 and counts(mem0_again)["memories"] == 0
    assert again.status == mem0_again.status == "completed"


def test_mem0_memories_keep_their_provenance_and_times(user):
    job = run(user, "mem0")
    memory = Memory.objects.get(owner=user, key="mem0-7a1b0000-0000-4000-8000-000000000102")
    assert memory.content == "Is vegetarian since 2019" and memory.source == Memory.Source.IMPORT
    assert memory.source_ref == {"import_id": str(job.pk), "source": "mem0",
                                 "original_id": "7a1b0000-0000-4000-8000-000000000102", "position": 2}
    assert memory.created_at == datetime(2024, 8, 1, 15, 0, tzinfo=UTC)
    assert memory.updated_at == datetime(2024, 8, 2, 16, 0, tzinfo=UTC)
    assert memory.tags == ["food"] and memory.namespace == ["memories", "mem0"]
    assert memory.embedding is not None


def test_langgraph_items_are_store_items_afterwards(user, api):
    run(user, "langgraph")
    memory = Memory.objects.get(owner=user, namespace=["users", "ana", "profile"], key="employer")
    assert memory.value == {"content": "Works at a bicycle repair cooperative in Ghent", "source": "onboarding"}
    assert memory.source == Memory.Source.IMPORT and memory.source_ref["original_id"] == "users.ana.profile/employer"
    got = api.get("/api/store/items", {"namespace": "users.ana.profile", "key": "employer"})
    assert got.status_code == 200, got.content
    assert got.json()["value"]["source"] == "onboarding"


def test_json_lines_messages(user):
    job = run(user, "jsonl", content=raw("jsonl"))
    assert job.format == "jsonl"
    printer = Conversation.objects.get(owner=user, title="Printer trouble")
    assert printer.messages.count() == 2


def test_a_bad_item_refuses_the_file_and_writes_nothing(user):
    export = data("claude")
    export[1]["chat_messages"][1]["created_at"] = "9999-12-31T23:00:00-05:00"
    with pytest.raises(ValidationError) as caught:
        services.import_upload(owner=user, raw=dumps(export), filename="conversations.json")
    assert caught.value.message_dict["items"][0] == (
        "item 2: chat_messages[1].created_at: '9999-12-31T23:00:00-05:00' is outside the years 1 to 9999 in UTC.")
    assert not Import.objects.exists() and not Conversation.objects.exists()


def test_skipping_bad_items_writes_the_good_ones_and_lists_the_bad(user):
    export = data("claude")
    export[1]["chat_messages"][0]["sender"] = "robot"
    job = run(user, "claude", content=dumps(export), skip_bad=True)
    assert job.problems == [{"item": 2, "field": "chat_messages[0].sender",
                             "message": "'robot' is not one of human, assistant."}]
    assert list(Conversation.objects.filter(owner=user).values_list("title", flat=True)) == ["Learning Portuguese"]
    assert counts(job)["skipped"] == 1


def test_empty_or_unreadable_files_are_refused(user):
    for content, field in ((b"", "file"), (b"not json", "file"), (b"[]", "file")):
        with pytest.raises(ValidationError) as caught:
            services.import_upload(owner=user, raw=content, filename="x.json")
        assert field in caught.value.message_dict
    assert not Import.objects.exists()


def test_a_file_over_the_limit_is_too_large(user, settings):
    settings.IMPORT_MAX_BYTES = 10
    with pytest.raises(services.FileTooLarge):
        services.import_upload(owner=user, raw=raw("mem0"), filename="x.json")


def test_processing_goes_a_share_at_a_time_and_resumes(user):
    job = services.import_upload(owner=user, raw=raw("chatgpt"), filename="c.json")
    first = processing.import_process(import_id=job.pk, max_weight=1)
    assert first.status == "processing"
    assert list(ImportItem.objects.filter(job=job).values_list("status", flat=True).order_by("position")) == [
        "done", "pending"]
    finished = processing.import_process(import_id=job.pk)
    assert finished.status == "completed" and Conversation.objects.filter(owner=user).count() == 2


def test_an_item_claimed_by_another_import_is_a_duplicate(user):
    """Two uploads of one file before either is processed: the second finds the first's items written."""
    one = services.import_upload(owner=user, raw=raw("claude"), filename="c.json")
    two = services.import_upload(owner=user, raw=raw("claude"), filename="c.json")
    processing.import_process(import_id=one.pk)
    processing.import_process(import_id=two.pk)
    assert Conversation.objects.filter(owner=user).count() == 2
    assert counts(Import.objects.get(pk=two.pk))["duplicates"] == 2


def test_another_users_import_of_the_same_file_is_theirs(user, other_user):
    run(user, "mem0")
    job = run(other_user, "mem0")
    assert counts(job)["memories"] == 2 and Memory.objects.filter(owner=other_user).count() == 2


def test_a_share_embeds_the_messages_it_wrote(user):
    """Searchable by meaning when the share ends, not only once the appends' small embedding tasks have run."""
    job = services.import_upload(owner=user, raw=raw("chatgpt"), filename="c.json")
    processing.import_process(import_id=job.pk, max_weight=1)
    first = Conversation.objects.get(owner=user)
    assert not first.messages.filter(embedding__isnull=True).exists()
    processing.import_process(import_id=job.pk)
    assert Message.objects.filter(owner=user).count() == 6
    assert not Message.objects.filter(owner=user, embedding__isnull=True).exists()


def test_a_duplicate_counts_as_one_in_a_share(user):
    """Importing a file again goes quickly: a share is counted in writes, and a duplicate writes nothing."""
    run(user, "chatgpt")
    again = services.import_upload(owner=user, raw=raw("chatgpt"), filename="c.json")
    processing.import_process(import_id=again.pk, max_weight=2)  # the first conversation alone has 4 messages
    assert list(again.items.values_list("status", flat=True)) == ["duplicate", "duplicate"]
