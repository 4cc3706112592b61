"""The context an agent gets: memories (current ones; past ones marked, when asked about) and conversation
excerpts under the day they were said, within a token budget (real model, real PostgreSQL; embedding tasks run
eagerly)."""

from datetime import UTC, datetime

import pytest

from conversations import context as ctx
from conversations import excerpts as exc
from conversations import services
from conversations.models import Message
from memories import services as memory_services
from memories.models import Memory
from tests.conversations.test_selectors import converse
from tests.factories import ConversationFactory

PARIS_FROM = datetime(2023, 3, 2, 10, 0, tzinfo=UTC)
MOVED = datetime(2024, 6, 20, 9, 30, tzinfo=UTC)


@pytest.fixture
def said(user, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        return converse(user)


@pytest.fixture
def moved(user):
    """The user lived in Paris from March 2023, then in Grenoble from 20 June 2024 (Paris superseded)."""
    paris = memory_services.memory_create(owner=user, content="The user lives in Paris",
                                          valid_from=PARIS_FROM).memory
    grenoble = memory_services.memory_create(owner=user, content="The user lives in Grenoble", valid_from=MOVED,
                                             supersedes=paris.pk).memory
    paris.refresh_from_db()
    assert paris.valid_to == MOVED and grenoble.valid_to is None
    return paris, grenoble


def memory_lines(context) -> list[str]:
    return [i.text for i in context.items if i.type == "memory"]


def test_context_carries_the_evidence_with_speaker_date_and_source(said, user):
    memory_services.memory_create(owner=user, content="Caroline is thinking about studying counseling")
    context = ctx.context_for(owner=user, query="Where did I go yesterday?", budget=400)
    excerpts = [i for i in context.items if i.type == "excerpt"]
    assert excerpts, context.text
    best = excerpts[0]
    # the matching turn with its neighbours, in order, each with its speaker, under the day it was said
    sequences = [m.sequence for m in best.messages]
    assert sequences == list(range(sequences[0], sequences[-1] + 1)) and {2, 3, 4} <= set(sequences)
    assert best.text.startswith("[8 May 2023")
    assert "Caroline: I went to a support group" in best.text and "\nMelanie: Wow" in best.text
    source = best.source()
    assert source["conversation_id"] == str(said.pk) and len(source["message_ids"]) == len(sequences)
    third = Message.objects.get(conversation=said, sequence=3)
    assert str(third.pk) in source["hit_message_ids"]
    assert context.used_tokens <= 400 and best.text in context.text


def test_context_memories_name_their_origin(said, user):
    memory = memory_services.memory_create(owner=user, content="Caroline went to a counseling workshop",
                                           category="event", conversation=said).memory
    context = ctx.context_for(owner=user, query="what workshop did Caroline go to?", budget=300)
    first = context.items[0]
    assert first.type == "memory" and first.memory.pk == memory.pk
    assert first.source() == {"memory_id": str(memory.pk), "conversation_id": str(said.pk), "message_id": None,
                              "document_id": None, "valid_from": memory.valid_from.isoformat(), "valid_to": None}
    assert context.text.startswith("Memories (most relevant first):\n- Caroline went to a counseling workshop")


def test_a_memory_the_profile_says_is_not_repeated_among_the_memories(said, user):
    memory = memory_services.memory_create(owner=user, content="Caroline is thinking about studying counseling",
                                           conversation=said).memory
    context = ctx.context_for(owner=user, query="what will Caroline study?", budget=300)
    profile = context.items[0]
    assert profile.type == "profile" and str(memory.pk) in profile.source()["memory_ids"]
    assert "studying counseling" in profile.text
    assert memory.pk not in {i.memory.pk for i in context.items if i.type == "memory"}


def test_context_stays_within_the_budget_and_packs_whole_items(said, user):
    for budget in (40, 120, 400):
        context = ctx.context_for(owner=user, query="support group stories", budget=budget)
        assert context.used_tokens <= budget
        for item in context.items:
            assert item.text in context.text


def test_context_can_stay_in_one_conversation(said, user, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        other = converse(user, [("user", "", "My support group meets on Tuesdays at the library.")])
    everywhere = ctx.context_for(owner=user, query="When does the support group meet?")
    assert any(i.type == "excerpt" and i.conversation.pk == other.pk for i in everywhere.items)
    here = ctx.context_for(owner=user, query="When does the support group meet?", conversation=said,
                           stay_in_conversation=True)
    assert all(i.conversation.pk == said.pk for i in here.items if i.type == "excerpt")


def test_context_asks_a_failing_provider_once_and_answers_from_words(openai_embeddings, user):
    conversation = ConversationFactory(owner=user)
    services.messages_append(conversation=conversation, messages=[
        {"role": "assistant", "content": "Your locker at the gym is number 318."}])
    openai_embeddings.reset()
    openai_embeddings.fail(500, times=None)
    context = ctx.context_for(owner=user, query="gym locker")
    assert context.degraded and "locker at the gym is number 318" in context.text
    asked = [r for r in openai_embeddings.requests if r.path.endswith("/embeddings")]
    assert 1 <= len(asked) <= 2  # one question to the provider (its client retries once), not one per search


# --- current and past -------------------------------------------------------------------------------------------


def test_the_present_gets_only_what_is_true_now(user, moved):
    for query in ("Which city is the user's home?", "where does the user live now", "Is the user based in Paris?"):
        context = ctx.context_for(owner=user, query=query, budget=300)
        assert not context.past
        assert memory_lines(context) == ["- The user lives in Grenoble (20 June 2024)"], (query, context.text)


@pytest.mark.parametrize("query", [
    "Where did the user live before Grenoble?",
    "When did the user move to Grenoble?",
    "which city was home previously?",
    "How long has the user been in Grenoble?",
    "Has the user changed cities?",
    "what town did the user use to call home",
])
def test_a_question_about_the_past_gets_the_past_marked_with_its_validity(user, moved, query):
    context = ctx.context_for(owner=user, query=query, budget=300)
    assert context.past
    lines = memory_lines(context)
    assert "- The user lives in Paris [no longer true: 2 March 2023 to 20 June 2024]" in lines, context.text
    assert all(line == "- The user lives in Grenoble (20 June 2024)" for line in lines if "Grenoble" in line)


@pytest.mark.parametrize(("query", "past"), [
    ("Where does she work now?", False),
    ("What should I cook for them tonight?", False),
    ("what's my phone number", False),
    ("Do I have any allergies?", False),
    ("Where was I working in 2021?", True),
    ("Is he still with the same company?", True),
    ("what was my former address", True),
    ("Which phone did I have earlier?", True),
    ("when did she switch jobs", True),
    ("Does he no longer drive a Volvo?", True),
    ("Was there a different email originally?", True),
    ("she relocated at some point, right?", True),
    ("my home address in March 2021", True),
    ("the user's employer in 2019?", True),
])
def test_asks_about_past(query, past):
    assert ctx.asks_about_past(query) is past


def test_as_of_gives_what_was_true_then_and_what_had_been_said(user, moved, eager,
                                                               django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        converse(user, [("user", "Ana", "Our flat in Paris has a view of the canal.")], start=PARIS_FROM)
        converse(user, [("user", "Ana", "The new flat in Grenoble looks at the mountains.")], start=MOVED)
    then = ctx.context_for(owner=user, query="Where does the user live? what does the flat look at?",
                           as_of=datetime(2023, 12, 31, tzinfo=UTC), budget=400)
    assert then.past and then.as_of == datetime(2023, 12, 31, tzinfo=UTC)
    lines = memory_lines(then)
    # true on the day asked about, and said to be no longer true now
    assert "- The user lives in Paris [true then: 2 March 2023 to 20 June 2024; no longer true now]" in lines, then.text
    assert not any("Grenoble" in line for line in lines)
    said_then = " ".join(m.content for i in then.items if i.type == "excerpt" for m in i.messages)
    assert "canal" in said_then and "mountains" not in said_then
    now = ctx.context_for(owner=user, query="Where does the user live? what does the flat look at?", budget=400)
    assert "- The user lives in Grenoble (20 June 2024)" in memory_lines(now)
    assert not any("lives in Paris" in line for line in memory_lines(now))
    assert "mountains" in now.text
    before_both = ctx.context_for(owner=user, query="Where does the user live?",
                                  as_of=datetime(2022, 1, 1, tzinfo=UTC), budget=400)
    assert before_both.items == []


def test_a_memory_line_says_when_it_happened_not_when_it_was_said(user, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        conversation = converse(user, [("user", "Ana", "We adopted a dog.")],
                                start=datetime(2024, 9, 3, 8, 0, tzinfo=UTC))
    message = conversation.messages.get()
    memory_services.memory_create(owner=user, content="Ana adopted a beagle named Biscuit", message=message,
                                  conversation=conversation, happened_at=datetime(2024, 8, 30, tzinfo=UTC))
    memory_services.memory_create(owner=user, content="Ana's beagle Biscuit is afraid of thunder",
                                  message=message, conversation=conversation, valid_from=message.sent_at)
    lines = memory_lines(ctx.context_for(owner=user, query="Tell me about Ana's dog Biscuit", budget=300))
    assert "- Ana adopted a beagle named Biscuit (30 August 2024)" in lines  # the event, not 3 September
    assert "- Ana's beagle Biscuit is afraid of thunder (3 September 2024)" in lines  # said then, not stored today


def test_a_past_line_held_within_one_day_says_only_its_end():
    """"Lives in Paris" written by hand today and replaced by what was said today held no span worth two dates."""
    written = datetime(2026, 11, 28, 9, 0, tzinfo=UTC)
    same_day = Memory(content="Lives in Paris", valid_from=written, valid_to=written.replace(hour=17))
    assert ctx.memory_line(same_day) == "- Lives in Paris [no longer true: until 28 November 2026]"
    longer = Memory(content="Lives in Paris", valid_from=written.replace(month=3), valid_to=written)
    assert ctx.memory_line(longer) == "- Lives in Paris [no longer true: 28 March 2026 to 28 November 2026]"


# --- excerpts ---------------------------------------------------------------------------------------------------


def test_each_excerpt_is_headed_by_its_own_day(user, eager, django_capture_on_commit_callbacks):
    """Adjacent turns said on different days are two excerpts, each under its own day (turns of 20 June were
    shown under a "[2 March 2024, ...]" header)."""
    conversation = ConversationFactory(owner=user, title="Moving")
    days = [datetime(2024, 3, 2, 18, 0, tzinfo=UTC), datetime(2024, 3, 2, 18, 1, tzinfo=UTC),
            datetime(2024, 6, 20, 7, 45, tzinfo=UTC), datetime(2024, 6, 20, 7, 46, tzinfo=UTC)]
    turns = ["I'm packing boxes for the move to Grenoble this weekend.",
             "Good luck with the packing! Label the kitchen boxes.",
             "The removal van to Grenoble finally arrived this morning.",
             "Great, tell me how the unpacking goes."]
    with django_capture_on_commit_callbacks(execute=True):
        services.messages_append(conversation=conversation, messages=[
            {"role": ("user", "assistant")[i % 2], "name": ("Ana", "")[i % 2], "content": text, "sent_at": day}
            for i, (text, day) in enumerate(zip(turns, days, strict=True))])
    context = ctx.context_for(owner=user, query="move to Grenoble boxes removal van", budget=600)
    excerpts = [i for i in context.items if i.type == "excerpt"]
    assert len(excerpts) == 2, context.text
    for excerpt in excerpts:
        header = excerpt.text.splitlines()[0]
        assert {m.sent_at.date() for m in excerpt.messages} == {excerpt.messages[0].sent_at.date()}
        assert header == f'[{excerpt.messages[0].sent_at.day} {excerpt.messages[0].sent_at:%B %Y}, "Moving"]'
    assert {e.text.splitlines()[0] for e in excerpts} == {'[2 March 2024, "Moving"]', '[20 June 2024, "Moving"]'}
    assert sum(len(e.messages) for e in excerpts) == 4
    assert context.used_tokens <= 600


def test_a_weak_match_takes_no_budget(user, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        converse(user, [("user", "Ana", "Our new flat in Grenoble has a balcony facing the mountains.")])
        converse(user, [("assistant", "", "Lovely! Enjoy the view.")], start=datetime(2024, 1, 5, tzinfo=UTC))
    query = "What can Ana see from her balcony?"
    hits = ctx.message_hits(owner=user, query=query, limit=ctx.EXCERPT_HITS)
    weak = [h for h in hits if "Enjoy the view" in Message.objects.get(pk=h.id).content]
    assert weak, "the weak turn is a hit of message search: the floor is what keeps it out"
    assert weak[0] not in ctx.worth_an_excerpt(hits) and hits[0] in ctx.worth_an_excerpt(hits)
    context = ctx.context_for(owner=user, query=query, budget=1000)
    assert "balcony facing the mountains" in context.text and "Enjoy the view" not in context.text


def test_a_long_turn_is_shown_by_its_sentences_nearest_the_query(user, eager, django_capture_on_commit_callbacks):
    filler = " ".join(f"Tip {i}: water the seedlings in the morning and keep the soil loose around them." for i in
                      range(1, 30))
    reply = f"{filler} Your balcony gets the evening sun, so tomatoes will do well there. {filler}"
    with django_capture_on_commit_callbacks(execute=True):
        converse(user, [("user", "Ana", "Which vegetables could grow on my balcony?"), ("assistant", "", reply)])
    line = exc.clipped(reply, exc._lemmas("will tomatoes grow on the balcony"))
    assert exc.count_tokens(line) <= exc.TURN_TOKENS + 2 and "tomatoes will do well there." in line
    assert line.startswith("Tip 1:") and " … Your balcony" in line and line.endswith("…") and "Tip 29" not in line
    assert exc.clipped("Short and whole.", set()) == "Short and whole."
    context = ctx.context_for(owner=user, query="will tomatoes grow on the balcony", budget=400)
    excerpt = next(i for i in context.items if i.type == "excerpt")
    assert "tomatoes will do well there" in excerpt.text and excerpt.tokens < 2 * exc.TURN_TOKENS + 40


def test_a_turn_whose_memories_were_all_superseded_is_marked_in_its_excerpt(user, eager,
                                                                             django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        conversation = converse(user, [("user", "Ana", "I drive a little Toyota Corolla."),
                                       ("user", "Ana", "I switched to a Tesla Model 3 this spring.")],
                                start=datetime(2024, 1, 10, 8, 0, tzinfo=UTC))
    old_turn, new_turn = conversation.messages.order_by("sequence")
    Message.objects.filter(pk=new_turn.pk).update(sent_at=datetime(2024, 6, 1, tzinfo=UTC))
    new_turn.refresh_from_db()
    for memory in user.memories.all():  # what extraction made of them: replaced by two known memories
        memory_services.memory_forget(memory=memory)
    toyota = memory_services.memory_create(owner=user, content="Ana drives a Toyota Corolla", message=old_turn,
                                           conversation=conversation).memory
    memory_services.memory_create(owner=user, content="Ana drives a Tesla Model 3", message=new_turn,
                                  conversation=conversation, supersedes=toyota.pk)
    context = ctx.context_for(owner=user, query="What car does Ana drive?", budget=400)
    turns = [line for item in context.items if item.type == "excerpt" for line in item.text.splitlines()[1:]]
    # since the day the Tesla became true (the memory's valid time ends there)
    assert "Ana: I drive a little Toyota Corolla. [no longer true since 1 June 2024]" in turns
    assert "Ana: I switched to a Tesla Model 3 this spring." in turns


def test_the_no_longer_true_mark_reads_as_a_sentence_with_or_without_a_day():
    may, june = "2024-05-03T09:30:00+00:00", "2024-06-20T00:00:00+00:00"
    assert exc.outdated_note([(1, "Drives a Corolla.", [], june), (2, "Lives in Paris.", None, may)]) == (
        " [no longer true since 3 May 2024]")  # since the first of them stopped being true
    assert exc.outdated_note([(1, "Drives a Corolla.", [], None)]) == " [no longer true: superseded]"
    assert exc.outdated_note([(1, "Drives a Corolla.", [], may), (None, "Plays the cello.", [], None)]) == (
        " [no longer true: Drives a Corolla]")
    assert exc.outdated_note([(None, "Plays the cello.", [], None)]) == ""


def test_a_turn_that_also_said_what_is_still_true_names_what_is_no_longer_true(user, eager,
                                                                               django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        conversation = converse(user, [("user", "Ana", "I drive a Toyota Corolla and I play the cello."),
                                       ("user", "Ana", "I switched to a Tesla Model 3 this spring.")],
                                start=datetime(2024, 1, 10, 8, 0, tzinfo=UTC))
    old_turn, new_turn = conversation.messages.order_by("sequence")
    for memory in user.memories.all():
        memory_services.memory_forget(memory=memory)
    toyota = memory_services.memory_create(owner=user, content="Ana drives a Toyota Corolla.", message=old_turn,
                                           conversation=conversation).memory
    memory_services.memory_create(owner=user, content="Ana plays the cello", message=old_turn,
                                  conversation=conversation)
    memory_services.memory_create(owner=user, content="Ana drives a Tesla Model 3", message=new_turn,
                                  conversation=conversation, supersedes=toyota.pk)
    context = ctx.context_for(owner=user, query="What car does Ana drive?", budget=400)
    excerpt = next(i for i in context.items if i.type == "excerpt" and old_turn in i.messages)
    assert ("Ana: I drive a Toyota Corolla and I play the cello. [no longer true: Ana drives a Toyota Corolla]"
            in excerpt.text.splitlines())
    assert excerpt.outdated == [old_turn.pk]


def test_a_turn_that_ended_something_is_not_marked_as_no_longer_true(user, eager, django_capture_on_commit_callbacks):
    with django_capture_on_commit_callbacks(execute=True):
        conversation = converse(user, [("user", "Ana", "I work at Acme as a data engineer."),
                                       ("user", "Ana", "I joined Doctolib. I left my job at Acme.")],
                                start=datetime(2024, 1, 10, 8, 0, tzinfo=UTC))
    old_turn, new_turn = conversation.messages.order_by("sequence")
    for memory in user.memories.all():
        memory_services.memory_forget(memory=memory)
    acme = memory_services.memory_create(owner=user, content="Ana works at Acme", message=old_turn,
                                         conversation=conversation).memory
    doctolib = memory_services.memory_create(owner=user, content="Ana works at Doctolib", message=new_turn,
                                             conversation=conversation, supersedes=acme.pk).memory
    memory_services.memory_create(owner=user, content="Ana left her job at Acme", message=new_turn,
                                  conversation=conversation, metadata={"frames": [{"attribute": "employer",
                                                                                   "ended": True}]},
                                  supersedes=None)
    Memory.objects.filter(content="Ana left her job at Acme").update(superseded_by=doctolib)
    context = ctx.context_for(owner=user, query="Where does Ana work?", budget=400)
    lines = [line for item in context.items if item.type == "excerpt" for line in item.text.splitlines()[1:]]
    assert "Ana: I work at Acme as a data engineer. [no longer true since 10 January 2024]" in lines
    assert "Ana: I joined Doctolib. I left my job at Acme." in lines


NEW_OWNER = ["Loves Studio Ghibli films", "Lives in Lyon", "Works as a nurse", "Has a cat named Miso"]


def test_a_new_owners_short_list_is_topped_up_with_the_nearly_related(user):
    """Nothing a new owner holds is related to a birthday question outright; the films are the nearest of the kind
    it asks for (memory search's fill), and the context says them after what is related."""
    for content in NEW_OWNER:
        memory_services.memory_create(owner=user, content=content)
    context = ctx.context_for(owner=user, query="what could I get her for her birthday?", budget=400)
    lines = memory_lines(context)
    assert lines and "Loves Studio Ghibli films" in lines[0], context.text
    assert all(i.score == 0 for i in context.items if i.type == "memory")


def test_the_nearly_related_get_only_the_room_nothing_related_wants(user, other_user, eager,
                                                                   django_capture_on_commit_callbacks):
    """Two owners said the same; one also wrote down a film they love (the nearest of the kind a birthday question
    asks for, never related to it). At every budget, what is related is the same for both."""
    for owner in (user, other_user):
        with django_capture_on_commit_callbacks(execute=True):
            converse(owner, [
                ("user", "Ana", "For my birthday I'd love tickets to the Totoro exhibition in Paris. My sister "
                                "went last spring and said the life-size catbus was the best part of the trip."),
                ("assistant", "", "That sounds wonderful. Would you go by train, and would you want to stay a "
                                  "night or two near the exhibition to see the rest of the city as well?"),
                ("user", "Ana", "A weekend would be perfect for my birthday: the exhibition on Saturday, a long "
                                "walk along the Seine on Sunday, and a good bakery breakfast before the train.")],
                     title="Birthday")
    memory_services.memory_create(owner=user, content="Loves Studio Ghibli films")
    query = "what could I get her for her birthday?"
    topped_up = 0
    for budget in range(60, 460, 20):
        mine, theirs = (ctx.context_for(owner=owner, query=query, budget=budget) for owner in (user, other_user))
        related = [[i.text for i in c.items if i.score > 0] for c in (mine, theirs)]
        assert related[0] == related[1], budget
        topped_up += any("Ghibli" in line for line in memory_lines(mine))
    assert topped_up, "the film fills the room left over at the larger budgets"
