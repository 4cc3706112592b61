"""Speech typed as it is said: fillers out, a run of sentences said without stops cut where each starts."""

import pytest

from extraction.spoken import plain, runs


@pytest.mark.parametrize(("text", "without"), [
    ("um so i live in Dunedin", "so i live in Dunedin"),
    ("i got a Pixel 8 like on the weekend", "i got a Pixel 8 on the weekend"),
    ("i report to Declan now like hes my boss", "i report to Declan now hes my boss"),
    ("so like the cover letter can say that", "so the cover letter can say that"),
    ("im 30 now ugh, so redo it", "im 30 now so redo it"),
    ("I would like a coffee", "I would like a coffee"),  # a verb
    ("it looks like rain", "it looks like rain"),  # a comparison
    ("a humble umbrella", "a humble umbrella"),  # the sounds only as words
])
def test_hesitations_and_filler_likes_come_out(text, without):
    assert plain(text) == without


@pytest.mark.parametrize(("sentence", "cut"), [
    ("so it was my birthday yesterday im 30 now", ["so it was my birthday yesterday", "im 30 now"]),
    ("i was at acme for years now im at google", ["i was at acme for years", "now im at google"]),
    ("im on an iPhone 12 so the settings menu might look different",
     ["im on an iPhone 12", "so the settings menu might look different"]),
    ("i got a Pixel 8 on the weekend so give me android steps", ["i got a Pixel 8 on the weekend",
                                                                 "so give me android steps"]),
    ("ok so i got a Pixel 8 on the weekend", ["ok so i got a Pixel 8 on the weekend"]),  # "ok" is no sentence
    # the parse hangs "im Lead Designer" on the later "say": said before it, it is no complement of it
    ("big news they moved me up im Lead Designer as of this month so the bio thing can say that",
     ["big news they moved me up", "im Lead Designer as of this month", "so the bio thing can say that"]),
    ("we sold the flat last spring so now we rent a place in Hove", ["we sold the flat last spring",
                                                                     "so now we rent a place in Hove"]),
])
def test_a_run_of_sentences_said_without_stops_is_cut_where_each_starts(sentence, cut):
    assert runs(sentence) == cut


@pytest.mark.parametrize("sentence", [
    "the car i drive is a mazda and i love it",  # a relative clause, a conjunction
    "i think im 30 now and still counting",  # what is thought
    "When I was young we lived in Paris for years",  # the first clause says when
    "After we married we moved to Leeds in 2019",
    "Wanted to let you know that I'm running for office again.",
    "can you call 0612 345 678 and book a table for me?",
    "Oskar got promoted so Ingrid leads our team now.",
    "I moved to Leeds in March, I love it here",  # punctuated: the writer's own stops
])
def test_a_sentence_said_as_one_stays_whole(sentence):
    assert runs(sentence) == [sentence]
