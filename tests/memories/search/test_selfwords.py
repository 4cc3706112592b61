"""The words that name whom an owner's memories are about (memories.search.selfwords): no keyword weight against
them, "the user" embedded as "someone"; real PostgreSQL and the real local model."""

from django.db import connection

from memories import batch
from memories.search import memory_search
from memories.search.selfwords import embedded_text, speaker_name


def store(user, contents, **extra):
    items = [{"content": content, "allow_duplicate": True, **extra} for content in contents]
    return [w.memory for w in batch.memory_batch_create(owner=user, items=items, actor=user)]


def contents(result, k=5):
    return [r.memory.content for r in result.results[:k]]


EXTRACTED = [
    "The user is allergic to shellfish.",
    "The user has a cat named Miso.",
    "The user works as a nurse at the hospital.",
    "The user lives in Lyon.",
]


def test_the_word_user_carries_no_keyword_weight(user):
    store(user, EXTRACTED, subject="user")
    result = memory_search(owner=user, query="what pet does the user have?", limit=5)
    assert contents(result)[0] == "The user has a cat named Miso."
    assert all(r.parts["keyword"] == 0 for r in result.results)  # no memory says "pet": none matched by "user"
    assert not memory_search(owner=user, query="user", mode="keyword").results
    # the memory texts keep the word: a memory about "users" written by hand is still found by it
    store(user, ["Manages the user accounts of the clinic's booking system"])
    assert contents(memory_search(owner=user, query="accounts of users", mode="keyword")) == [
        "Manages the user accounts of the clinic's booking system"]


def test_the_owners_own_name_carries_no_keyword_weight(user):
    user.first_name, user.last_name = "Dana", "Whitfield"
    user.save()
    store(user, [c.replace("The user", "Dana") for c in EXTRACTED])
    query = "what pet does Dana Whitfield have?"
    result = memory_search(owner=user, query=query, limit=5)
    assert len(result.results) == len(EXTRACTED) and all(r.parts["keyword"] == 0 for r in result.results)
    # searched by id (no name known), the name is an ordinary word, and every memory matched it
    by_id = memory_search(owner=user.pk, query=query, limit=5)
    assert len(by_id.results) == len(EXTRACTED) and all(r.parts["keyword"] > 0 for r in by_id.results)


def test_the_name_the_owner_speaks_under_carries_no_keyword_weight(user):
    # memories extracted from what "Ana" said in a conversation: about the owner (subject "user"), opening with her name
    store(user, [c.replace("The user", "Ana") for c in EXTRACTED], subject="user")
    store(user, ["Ana's sister Bea is a pilot."], subject="Bea")
    with connection.cursor() as cursor:
        assert speaker_name(cursor, user.pk) == "Ana"
    result = memory_search(owner=user, query="what pet does Ana have?", limit=5)
    assert all(r.parts["keyword"] == 0 for r in result.results)
    assert contents(memory_search(owner=user, query="Bea", mode="keyword")) == ["Ana's sister Bea is a pilot."]


def test_an_account_of_two_speakers_keeps_both_names_as_words(user):
    store(user, ["Ana lives in Porto.", "Ana has a cat.", "Tom lives in Leeds.", "Tom plays chess.",
                 "The user likes tea."], subject="user")
    with connection.cursor() as cursor:
        assert speaker_name(cursor, user.pk) == ""
    assert contents(memory_search(owner=user, query="Tom", mode="keyword")) != []


def test_the_user_is_embedded_as_someone():
    assert embedded_text("What does the user like? The User's job?") == "What does someone like? someone's job?"
    assert embedded_text("users of the app") == "users of the app"


def test_a_gendered_pronoun_is_embedded_as_they():
    assert embedded_text("What could I get her for her birthday?") == "What could I get them for their birthday?"
    assert embedded_text("Is he OK with his sister's dog? Ask him.") == "Is they OK with their sister's dog? Ask them."
    assert embedded_text("Should I lend her a novel?") == "Should I lend them a novel?"
    assert embedded_text("Where does Sheila live? The shed.") == "Where does Sheila live? The shed."


def test_a_pronoun_in_the_question_does_not_draw_the_memories_that_say_it(user):
    # a small model finds "she" and "her" alike, whatever they say: "What is she training for?" was 0.37 from the
    # allotment and 0.16 from the marathon
    store(user, ["Grows tomatoes and herbs on her allotment", "Took up pottery classes this year",
                 "Her brother Tom is a firefighter in Glasgow", "Wants to run the Berlin marathon next year"])
    ranked = contents(memory_search(owner=user, query="What is she training for?", limit=5))
    assert "Wants to run the Berlin marathon next year" in ranked
    assert "Grows tomatoes and herbs on her allotment" not in ranked[:ranked.index(
        "Wants to run the Berlin marathon next year")]


def test_the_word_of_an_idiom_carries_no_keyword_weight(user):
    store(user, ["Lives in Paris", "Loves live jazz", "Works as an architect in Bristol"])
    result = memory_search(owner=user, query="What does she do for a living?", limit=5)
    assert contents(result)[0] == "Works as an architect in Bristol"
    assert all(r.parts["keyword"] == 0 for r in result.results)  # "living" is no "live" here
    # said alone, the word is a word
    assert set(contents(memory_search(owner=user, query="living", mode="keyword"))) == {"Lives in Paris",
                                                                                      "Loves live jazz"}


def test_the_speakers_name_is_embedded_as_someone():
    assert embedded_text("A bottle of wine for Imogen? Imogen's kid?", "Imogen") == (
        "A bottle of wine for someone? someone's kid?")
    assert embedded_text("Imogene's book for Imogen", "Imogen") == "Imogene's book for someone"


IMOGEN = [
    "Imogen went on a trip to Lisbon in March with Declan.",
    "Imogen's mother Ingrid lives in Cork, Ireland.",
    "Imogen's son Rory is 7 and obsessed with dinosaurs.",
    "Imogen's husband Declan is afraid of flying.",
    "Imogen dislikes large crowds and packed venues.",
    "Imogen's flat is in Bristol.",
]


def test_the_speakers_name_draws_no_memory_that_says_it(user):
    store(user, IMOGEN, subject="user")
    store(user, ["Doesn't drink alcohol", "Big fan of Studio Ghibli films", "Plays cello in an orchestra"])
    with connection.cursor() as cursor:
        assert speaker_name(cursor, user.pk) == "Imogen"  # four of six open with "Imogen's"
    assert contents(memory_search(owner=user, query="Should I bring a bottle of wine for Imogen?"), 1) == [
        "Doesn't drink alcohol"]
    assert contents(memory_search(owner=user, query="Movie night: what should we put on for Imogen?"), 1) == [
        "Big fan of Studio Ghibli films"]
