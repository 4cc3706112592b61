"""Appending history (sent_at, speaker names, 500 turns at once), background embedding, erasure."""

from datetime import UTC, datetime, timedelta

from django.utils import timezone

from conversations import processing, selectors, services, tasks
from conversations.models import Message
from memories import services as memory_services
from memories.models import Memory
from memories.search import memory_search
from tests.factories import ConversationFactory

T0 = datetime(2022, 3, 1, 9, 0, tzinfo=UTC)


def test_history_is_ordered_by_sent_at_and_dates_what_is_extracted(user, eager, django_capture_on_commit_callbacks):
    conversation = ConversationFactory(owner=user)
    with django_capture_on_commit_callbacks(execute=True):
        services.messages_append(conversation=conversation, messages=[
            {"role": "assistant", "content": "Welcome back!", "sent_at": T0 + timedelta(minutes=1)},
            {"role": "user", "name": "Ana", "content": "I'm vegetarian.", "sent_at": T0},
        ])
    first, second = Message.objects.filter(conversation=conversation).order_by("sequence")
    assert (first.content, first.name, first.sent_at) == ("I'm vegetarian.", "Ana", T0)
    assert second.sent_at == T0 + timedelta(minutes=1)
    memory = Memory.objects.get(owner=user)
    assert memory.message_id == first.pk and memory.happened_at == T0


def test_five_hundred_turns_in_one_call_all_become_searchable(user, eager, django_capture_on_commit_callbacks):
    conversation = ConversationFactory(owner=user)
    turns = [{"role": "assistant", "content": f"Note {i}: the code word for day {i} is word{i}.",
              "sent_at": T0 + timedelta(minutes=i), "client_message_id": f"m{i}"} for i in range(500)]
    with django_capture_on_commit_callbacks(execute=True):
        results = services.messages_append(conversation=conversation, messages=turns)
    assert [m.sequence for m, created in results] == list(range(1, 501)) and all(c for _, c in results)
    assert not Message.objects.filter(conversation=conversation, embedding__isnull=True).exists()
    found = selectors.message_search(owner=user, query="word417", mode="keyword").results
    assert [r.passage.client_message_id for r in found] == ["m417"]
    # sending the same history again appends nothing
    again = services.messages_append(conversation=conversation, messages=turns[:3])
    assert [created for _, created in again] == [False] * 3 and conversation.messages.count() == 500


def test_messages_stored_while_the_provider_is_down_are_found_by_words_and_embedded_later(user, settings):
    conversation = ConversationFactory(owner=user)
    services.messages_append(conversation=conversation, messages=[
        {"role": "assistant", "content": "The gate code is 4471."}])  # no task ran: nothing embedded yet
    assert selectors.message_search(owner=user, query="gate code").results
    message = Message.objects.get(conversation=conversation)
    Message.objects.filter(pk=message.pk).update(created_at=message.created_at - timedelta(minutes=5))
    assert processing.messages_embed_pending() == 1
    assert Message.objects.get(pk=message.pk).embedding is not None
    assert processing.messages_embed_pending() == 0


def test_a_deleted_conversation_leaves_no_message_findable(user, eager, django_capture_on_commit_callbacks):
    conversation = ConversationFactory(owner=user)
    with django_capture_on_commit_callbacks(execute=True):
        services.messages_append(conversation=conversation, messages=[
            {"role": "user", "content": "I'm allergic to shellfish."}])
    services.conversation_delete(conversation=conversation)
    for mode in ("semantic", "keyword", "hybrid"):
        assert selectors.message_search(owner=user, query="shellfish allergy", mode=mode, threshold=0).results == []
    # delete keeps what was learnt; forget (below) erases it too
    assert Memory.objects.filter(owner=user).count() == 1


def test_a_forgotten_conversation_leaves_nothing_findable(user, eager, django_capture_on_commit_callbacks):
    conversation = ConversationFactory(owner=user)
    kept = memory_services.memory_create(owner=user, content="Prefers trains to planes").memory
    with django_capture_on_commit_callbacks(execute=True):
        services.messages_append(conversation=conversation, messages=[
            {"role": "user", "content": "I'm allergic to shellfish."},
            {"role": "user", "content": "Actually I moved to Berlin last month."}])
    assert Memory.objects.filter(owner=user, conversation=conversation).count() >= 1
    erased = services.conversation_forget(conversation=conversation, actor=user)
    assert erased >= 1
    assert list(Memory.objects.filter(owner=user)) == [kept]
    assert not Memory.history.filter(owner=user).exclude(id=kept.pk).exists()
    for mode in ("semantic", "keyword", "hybrid"):
        assert selectors.message_search(owner=user, query="shellfish", mode=mode, threshold=0).results == []
        assert [r.memory for r in memory_search(owner=user, query="shellfish", mode=mode, threshold=0).results
                if r.memory.pk != kept.pk] == []


def test_forgetting_a_conversation_erases_the_search_texts_recorded_from_it(user, other_user):
    from memories.models import MemoryEvent

    conversation = ConversationFactory(owner=user)
    services.messages_append(conversation=conversation, messages=[
        {"role": "user", "content": "My sister Ines is getting married in Porto in June."}])
    memory = memory_services.memory_create(owner=user, content="Prefers trains to planes").memory
    others = memory_services.memory_create(owner=other_user, content="Prefers trains to planes").memory
    for query in ("sister Ines married Porto", "Remember: MY SISTER INES IS GETTING MARRIED in Porto in June. When?",
                  "trains or planes"):
        memory_services.memories_touch(memory_ids=[memory.pk], owner_id=user.pk,
                                       action=MemoryEvent.Action.SEARCH, query=query)
    memory_services.memories_touch(memory_ids=[others.pk], owner_id=other_user.pk,
                                   action=MemoryEvent.Action.SEARCH, query="sister Ines married Porto")
    services.conversation_forget(conversation=conversation, actor=user)
    kept = sorted(MemoryEvent.objects.filter(owner=user).values_list("query", flat=True))
    assert kept == ["", "", "trains or planes"]  # the memory's own events stay, without the conversation's words
    assert MemoryEvent.objects.get(owner=other_user).query == "sister Ines married Porto"


def _appended(conversation, count, start=0):
    return services.messages_append(conversation=conversation, messages=[
        {"role": "user", "content": f"I visited city number {i} last year."} for i in range(start, start + count)])


def test_each_owner_has_one_extraction_task_out_and_owners_take_turns(user, other_user, monkeypatch,
                                                                      django_capture_on_commit_callbacks):
    sent = []
    monkeypatch.setattr(tasks.extract_pending, "delay", lambda owner_id: sent.append(owner_id))
    monkeypatch.setattr(tasks.embed_messages, "delay", lambda ids, extract: tasks.embed_messages(ids, extract))
    big, small = ConversationFactory(owner=user), ConversationFactory(owner=other_user)
    with django_capture_on_commit_callbacks(execute=True):
        _appended(big, 20)
        _appended(big, 20, start=20)  # the owner's task is out already: it takes these too
        services.messages_append(conversation=small, messages=[{"role": "user", "content": "I'm vegetarian."}])
    assert sent == [str(user.pk), str(other_user.pk)]  # one task per owner, not one per message

    turns = []
    while sent:  # the broker's order: first in, first out
        owner_id = sent.pop(0)
        with django_capture_on_commit_callbacks(execute=True):
            turns.append((owner_id, tasks.extract_pending.apply(args=[owner_id]).get()))
    a, b = str(user.pk), str(other_user.pk)
    assert turns == [(a, services.EXTRACT_SHARE), (b, 1), (a, services.EXTRACT_SHARE), (a, 8)]
    assert not Message.objects.filter(extraction_status="pending").exists()
    assert Memory.objects.filter(owner=other_user).count() == 1


def test_a_lost_extraction_task_is_sent_again_once(user, other_user, monkeypatch, django_capture_on_commit_callbacks):
    sent = []
    monkeypatch.setattr(tasks.extract_pending, "delay", lambda owner_id: sent.append(owner_id))
    monkeypatch.setattr(tasks.embed_messages, "delay", lambda ids, extract: None)
    with django_capture_on_commit_callbacks(execute=True):
        _appended(ConversationFactory(owner=user), 20)
        _appended(ConversationFactory(owner=other_user), 20)
    long_ago = timezone.now() - timedelta(minutes=10)
    Message.objects.update(extraction_queued_at=long_ago)
    with django_capture_on_commit_callbacks(execute=True):
        tasks.extract_pending.apply(args=[str(other_user.pk)])  # alive: it stamps its next share
    sent.clear()
    with django_capture_on_commit_callbacks(execute=True):
        assert services.messages_requeue_stale() == 1
        assert services.messages_requeue_stale() == 0  # stamped again: not sent once per sweep
    assert sent == [str(user.pk)]


def test_a_message_that_breaks_extraction_fails_alone(user, monkeypatch, django_capture_on_commit_callbacks):
    monkeypatch.setattr(tasks.embed_messages, "delay", lambda ids, extract: None)
    with django_capture_on_commit_callbacks(execute=True):
        _appended(ConversationFactory(owner=user), 3)
    broken = Message.objects.order_by("created_at", "pk")[1]
    real = processing.extraction.extract_local

    def extract(text, **kwargs):
        if text == broken.content:
            raise ValueError("bad data")
        return real(text, **kwargs)

    monkeypatch.setattr(processing.extraction, "extract_local", extract)
    assert processing.messages_extract_share(owner_id=user.pk) == 3
    broken.refresh_from_db()
    assert broken.extraction_status == "failed" and "ValueError: bad data" in broken.extraction_error
    assert Message.objects.filter(extraction_status="done").count() == 2
