"""Chatter off a kept sentence: discourse markers in front, laughter and emoticons at the end, and a trailing
remark that only comments ("which is tricky ... haha"); a trailing clause that adds a fact stays."""

import pytest

from extraction.cleanup import strip_chatter, strip_discourse


@pytest.mark.parametrize(("sentence", "cleaned"), [
    ("Correction: favourite band is Low these days.", "favourite band is Low these days."),
    ("Bit of news: Tom and I split up.", "Tom and I split up."),
    ("Update: we moved again", "we moved again"),
    ("Quick update - I switched to a Samsung", "I switched to a Samsung"),
    ("FYI: I'm vegetarian now", "I'm vegetarian now"),
    ("Small update on my end: I got the job", "I got the job"),
    ("Big news! We adopted a puppy", "We adopted a puppy"),
    ("PS - my new number ends in 42", "my new number ends in 42"),
    ("Heads up: I'm away in August", "I'm away in August"),
    ("Life update \u2014 I started a PhD", "I started a PhD"),
    ("PSA: I changed jobs", "I changed jobs"),
    ("Quick note: my new email is ana@example.com", "my new email is ana@example.com"),
    ("quick intro: I'm Nadia and I live in Lille", "I'm Nadia and I live in Lille"),
    # what the speaker says before the news
    ("Quick one before I forget - I'm vegan now", "I'm vegan now"),
    ("Hot take incoming: jazz is my favourite genre", "jazz is my favourite genre"),
    ("I have to admit, tea has overtaken coffee as my favourite", "tea has overtaken coffee as my favourite"),
    ("Funnily enough, I live in Derby now", "I live in Derby now"),
    ("Long story short, I left Nordwind in May", "I left Nordwind in May"),
    ("long story but Ines and I split up", "Ines and I split up"),
])
def test_discourse_markers_come_off_the_front(sentence, cleaned):
    assert strip_discourse(sentence) == cleaned


@pytest.mark.parametrize(("sentence", "cleaned"), [
    ("new number btw: 07700 900456", "new number: 07700 900456"),
    ("I'm vegan now, fyi.", "I'm vegan now."),
    ("Moved to Leeds tbh", "Moved to Leeds"),
    ("Rosalía is my favourite now fr, her voice is unreal", "Rosalía is my favourite now, her voice is unreal"),
])
def test_marker_words_come_out_inside_a_sentence(sentence, cleaned):
    assert strip_discourse(sentence) == cleaned


@pytest.mark.parametrize("sentence", ["Updates are slow at my job", "News travels fast", "Edit the file first"])
def test_a_marker_word_that_is_the_subject_stays(sentence):
    assert strip_discourse(sentence) == sentence


@pytest.mark.parametrize(("sentence", "cleaned"), [
    ("I'm allergic to shellfish, which is tricky in Portugal haha.", "I'm allergic to shellfish"),
    ("I got promoted to team lead lol", "I got promoted to team lead"),
    ("I switched to a Samsung :)", "I switched to a Samsung"),
    ("I adopted a cat, which is so annoying lol", "I adopted a cat"),
    ("I started running at 6am, which is brutal.", "I started running at 6am"),
    ("Bought a Tesla hahaha!!", "Bought a Tesla"),
    ("I sold my bike, lmao", "I sold my bike"),
    ("I moved to Leeds xD", "I moved to Leeds"),
    ("I'm learning Dutch, which has been a nightmare", "I'm learning Dutch"),
    ("I'm learning Korean hehe, it's so hard", "I'm learning Korean"),
    ("I moved to Oslo (lol) in March", "I moved to Oslo in March"),
    ("I'm allergic to kiwi haha, which is awkward at brunch", "I'm allergic to kiwi"),
    # a last remark with no subject that only reacts
    ("They made me art director last week, still can't believe it", "They made me art director last week"),
    ("We moved to Porto, loving it so far!", "We moved to Porto"),
    ("I started at Google, so excited.", "I started at Google"),
    # a comfort or an instruction to the assistant after the fact
    ("My girlfriend is Ana, a nurse, so at least someone cooks.", "My girlfriend is Ana, a nurse"),
    ("I'm coeliac, so when you plan the menu leave out bread.", "I'm coeliac"),
    ("I moved to Selby, so the drive is a bit longer now.", "I moved to Selby"),
    # what it means for them, and how new it is
    ("I'm a shift supervisor so I end up covering every sick day", "I'm a shift supervisor"),
    ("Dating someone new, Kofi, early days but he's sweet", "Dating someone new, Kofi"),
])
def test_laughter_and_evaluative_remarks_come_off_the_end(sentence, cleaned):
    assert strip_chatter(sentence) == cleaned


@pytest.mark.parametrize("sentence", [
    "I work at Acme, which is a bank in Lisbon.",
    "I moved to Porto, which is where my wife grew up.",
    "My brother is called Hal.",
    "I met Lola in Lolland.",
    "I moved to Leeds, happy to be back near Yorkshire.",  # a name in it: more than a reaction
])
def test_a_trailing_clause_that_adds_a_fact_stays(sentence):
    assert strip_chatter(sentence) == sentence


def test_a_label_in_front_is_discourse():
    assert strip_discourse("hot take but ramen beats sushi") == "ramen beats sushi"
    assert strip_discourse("unpopular opinion: I love Mondays") == "I love Mondays"
    assert strip_discourse("I'll be honest, I miss York") == "I miss York"
    assert strip_discourse("I'll be honest with you") == "I'll be honest with you"
