"""The local dialogue extractor as a specification: a statement the speaker makes about themselves comes out as a
memory in clean third person (with a stable slot when there is an obvious one); questions, greetings, thanks,
compliments and small talk come out as nothing. Pure functions: no database."""

from datetime import datetime

import pytest

from extraction.dialogue import extract_local

SENT = datetime(2023, 5, 8, 13, 56)  # a Monday


def contents(text: str, **kwargs) -> list[str]:
    return [c.content for c in extract_local(text, **kwargs)]


def only(text: str, **kwargs):
    candidates = extract_local(text, **kwargs)
    assert len(candidates) == 1, candidates
    return candidates[0]


# --- statements in, memories out ------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "content"), [
    ("remember that my flight to Tokyo leaves on June 3rd", "The user's flight to Tokyo leaves on June 3rd."),
    ("I prefer my code reviews to be blunt and short", "The user prefers their code reviews to be blunt and short."),
    ("We're vegan at home", "The user is vegan at home."),  # the conversation named nobody "we" could add
    ("I run a candle shop from my garage", "The user runs a candle shop from their garage."),
    ("Our anniversary is on the 12th of October", "The user's anniversary is on the 12th of October."),
    ("Please call me Bob", "The user's preferred name is Bob."),
    ("I'm planning a trip to Peru in December", "The user is planning a trip to Peru in December."),
])
def test_plain_statements_become_third_person_memories(text, content):
    assert contents(text) == [content]


@pytest.mark.parametrize(("text", "memories"), [
    ("My daughter Lily just turned seven and she loves horses",
     ["The user's daughter Lily just turned seven.", "The user's daughter Lily loves horses."]),
    ("I'm a teacher at Lincoln High and I live in Denver",  # the small model parses two roots here
     ["The user is a teacher at Lincoln High.", "The user lives in Denver."]),
    ("I'm a software engineer at Shopify and my wife is a doctor",
     ["The user is a software engineer at Shopify.", "The user's wife is a doctor."]),
    ("My sister lives in Paris and she works at Chanel",
     ["The user's sister lives in Paris.", "The user's sister works at Chanel."]),
])
def test_clauses_with_subjects_of_their_own_become_memories_of_their_own(text, memories):
    assert contents(text) == memories


@pytest.mark.parametrize("text", [
    "I love horses and I ride them every weekend",  # the second half needs the first
    "I bought a bike and it was worth every penny",
    "I met Ana at the fair and she was lovely",  # "she" is nobody the first half named as the speaker's
    "I dropped keto and I eat Mediterranean now",  # one subject, no slot: one change, read as a whole
])
def test_a_clause_that_points_back_stays_with_the_one_it_needs(text):
    assert len(contents(text)) == 1


@pytest.mark.parametrize(("text", "memories"), [
    ("Last Friday was my final day at Zalando.", ["Friday, 5 May 2023 was the user's final day at Zalando."]),
    ("I was promoted to head nurse.", ["The user was promoted to head nurse."]),  # done to them: no opinion
    ("I get around in a Ford Fiesta.", ["The user gets around in a Ford Fiesta."]),
    ("I get what you mean.", []),
    ("Edinburgh is home now.", ["The user lives in Edinburgh."]),
    ("Paris is home to the Louvre.", []),
    # a time said first is not the subject: "these" here points at nothing
    ("These days Arctic Monkeys are my absolute favourite band.",
     ["These days Arctic Monkeys are the user's absolute favourite band."]),
    ("Nowadays, pizza is my favourite food.", ["Pizza is the user's favourite food."]),
    ("These past weeks Arctic Monkeys are my favourite band.",
     ["These past weeks Arctic Monkeys are the user's favourite band."]),
    ("These days are hard.", []),
])
def test_statements_that_looked_like_remarks(text, memories):
    assert contents(text, when=SENT) == memories


def test_a_name_saying_how_it_is_after_a_comma_is_a_remark_of_its_own():
    assert contents("We moved to Seattle last week, Denver got too expensive.", when=SENT) == [
        "The user moved to Seattle in the week before 8 May 2023."]


@pytest.mark.parametrize(("text", "content"), [
    ("I went to an LGBTQ support group yesterday.", "Caroline went to an LGBTQ support group on 7 May 2023."),
    ("The support group has made me feel accepted and given me courage to embrace myself.",
     "The support group has made Caroline feel accepted and given them courage to embrace themselves."),
    ("Gonna continue my studies and look at careers in counseling, which is pretty exciting!",
     "Caroline is going to continue their studies and look at careers in counseling."),
    ("Just got back from a week of hiking in the Rockies with my brother.",
     "Caroline just got back from a week of hiking in the Rockies with their brother."),
    ("Last Saturday my kids and I painted a sunset over the lake.",
     "On Saturday, 6 May 2023 Caroline and their kids painted a sunset over the lake."),
    ("I've been running every morning since last year.", "Caroline has been running every morning since 2022."),
    ("I'd never seen the ocean before that trip.", "Caroline had never seen the ocean before that trip."),
    ("I'd love to adopt a child someday.", "Caroline would love to adopt a child someday."),
    ("When I was a kid, I loved horses.", "When Caroline was a kid, they loved horses."),
    ("I do pottery on weekends and I really love it.", "Caroline does pottery on weekends and they really love it."),
    ("I'm starting a new job at the hospital next month.",
     "Caroline is starting a new job at the hospital in June 2023."),
])
def test_dialogue_turns_are_rewritten_with_the_speakers_name_and_absolute_dates(text, content):
    assert contents(text, speaker="Caroline", when=SENT) == [content]


def test_each_salient_sentence_of_a_turn_is_its_own_memory_and_the_chatter_around_it_is_dropped():
    turn = ("Hey Mel! Good to see you! I went to a pottery class last week and it was so relaxing. "
            "How have you been? My husband bought me a new wheel for our anniversary. That's awesome, right?")
    assert contents(turn, speaker="Melanie", when=SENT) == [
        "Melanie went to a pottery class in the week before 8 May 2023 and it was so relaxing.",
        "Melanie's husband bought them a new wheel for their anniversary.",
    ]


def test_a_statement_after_a_dash_stands_alone_and_a_question_after_it_is_dropped():
    assert contents("FYI, I finished another pottery project - want to see a pic?", speaker="Mel") == [
        "Mel finished another pottery project."]
    assert contents("I'm keen on counseling - I'd love to support people with similar issues.", speaker="Cam") == [
        "Cam is keen on counseling.", "Cam would love to support people with similar issues."]


def test_two_statements_joined_by_a_comma_stand_alone_unless_the_first_is_subordinate():
    assert contents("Hey! I'm Ines, we just relocated to Graz with my husband Piet.", speaker="Ines") == [
        "Ines just relocated to Graz with their husband Piet."]  # her own name says nothing new
    assert contents("My sister Uma is a dentist, she lives in Leeds.", speaker="Kai") == [
        "Kai's sister Uma is a dentist.", "Kai's sister Uma lives in Leeds."]
    assert contents("While I was at uni, I lived in Bristol.", speaker="Kai") == [
        "While Kai was at uni, they lived in Bristol."]


@pytest.mark.parametrize(("text", "content"), [
    ("I stumbled upon this super cool book from the 1900s.", "Sam stumbled upon this super cool book from the 1900s."),
    ("Still working on opening a dance studio.", "Sam is still working on opening a dance studio."),
    ("Got the tattoo a few years ago, it stands for freedom.",
     "Sam got the tattoo a few years ago, it stands for freedom."),
    ("Family's super important to me.", "Family's super important to Sam."),
    ("Creativity and family keep me at peace.", "Creativity and family keep Sam at peace."),
    ("Wanted to let you know that I'm running for office again.", "Sam is running for office again."),
    ("Always been interested in other cultures.", "Sam has always been interested in other cultures."),
    ("Driving on winding roads with my friends recharged me.",
     "Driving on winding roads with Sam's friends recharged them."),
])
def test_more_ways_of_saying_something_about_oneself(text, content):
    assert contents(text, speaker="Sam") == [content]


def test_a_message_to_the_listener_keeps_only_what_the_speaker_says_about_themselves():
    text = "I'm so excited to tell you that I started a weekend yoga class with a colleague!"
    assert contents(text, speaker="John") == ["John started a weekend yoga class with a colleague."]


@pytest.mark.parametrize(("text", "content"), [
    ("Well I also baked a lemon tart on Sunday, maybe you'd like the recipe!",
     "Ana also baked a lemon tart on Sunday, 7 May 2023."),
    ("You told me about your volunteering, so I just signed up at the food bank.",
     "Ana just signed up at the food bank."),
    ("That sounds fun, I used to row with my cousin in Ghent.", "Ana used to row with their cousin in Ghent."),
    ("It was a long week, I finally finished my thesis on Friday.",
     "Ana finally finished their thesis on Friday, 5 May 2023."),
    ("I was in Marseille, it was gorgeous!", "Ana was in Marseille."),
])
def test_the_speakers_own_statement_is_kept_from_a_remark_around_it(text, content):
    assert contents(text, speaker="Ana", when=SENT) == [content]


def test_a_remark_whose_parts_do_not_stand_alone_gives_nothing():
    assert extract_local("If you want, I can send you the recipe.") == []
    assert extract_local("Good luck tomorrow, I'm rooting for you!") == []
    assert extract_local("That's awesome, I'm so happy for you!") == []


def test_a_place_named_earlier_in_the_sentence_is_where_there_is():
    assert contents("Got the keys to our flat in Utrecht, we're living there since Saturday.", when=SENT)[-1] == (
        "The user is living in Utrecht since Saturday.")


def test_a_noun_ending_in_ly_is_a_content_word():
    assert contents("My family is always there for me.", speaker="Ana") == ["Ana's family is always there for them."]


# --- chatter in, nothing out ----------------------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "That's awesome!", "Wow, love that painting!", "How have you been?", "Thanks so much!", "Haha yes",
    "I'm so happy for you!", "Good to see you!", "Hey Mel! Good to see you! How have you been?",
    "What's the weather like?", "Am I allergic to peanuts?", "Hi there!", "Thanks, that's all!", "How are you?",
    "Can you help me with my code?", "lol ok", "", "   ", "I know, right?", "I think so too.", "I love it!",
    "I couldn't agree more!", "We can do it!", "Congrats on the new job, you deserve it!", "See ya!",
    "Take care, talk soon!", "Let's keep spreading kindness.", "I'm doing OK, thanks for asking.",
    "It was so much fun.", "Sounds like a plan!", "You're such a great friend.", "Your paintings are amazing!",
    "I get what you mean.", "I'm here for you.", "Keep it up!", "Glad you had a great time!",
    "Check out this pic of my dog!", "I hope you like it.", "I'll keep you posted.", "Me too!",
    "I'll let you know when I'm in Boston.", "I'm so glad it all worked out.", "I would've loved to see that!",
    "We won't lose focus on our goals.", "Check the photo of us on stage.", "Don't worry, I won't let it get me down.",
    "I feel the same way about my team.", "Expression of myself and a way to relax.", "We make a great team!",
    "I'm sure it made a big impact.", "I'd recommend visiting some castles.", "I'm stoked!", "I 100% agree.",
    "Been hectic for me lately.", "Even though I haven't been successful before.",
    "Just something nice to take my mind off things.", "Oh no, I'm so sorry about Max.", "I have some awesome news!",
    "Something cool happened to me recently.", "My week's been good.", "I'm on cloud nine!",
    "A lot's been going on in my life.", "I'll definitely reach out if I need any help.", "I have to go, bye!",
])
def test_questions_greetings_thanks_and_small_talk_give_nothing(text):
    assert extract_local(text) == []


@pytest.mark.parametrize("role", ["assistant", "system", "tool"])
def test_only_the_users_own_turns_are_read(role):
    assert extract_local("I'm allergic to peanuts. Remember that I live in Paris.", role=role) == []


# --- explicit requests ----------------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "content"), [
    ("Remember that my passport expires in March 2027.", "The user's passport expires in March 2027."),
    ("Please remember I take my coffee black.", "The user takes their coffee black."),
    ("remember that i'm allergic to peanuts", "The user is allergic to peanuts."),
    ("Note that the meeting moved to Friday.", "The meeting moved to Friday."),
])
def test_explicit_requests_are_kept_and_marked(text, content):
    candidate = only(text)
    assert candidate.content == content
    assert candidate.explicit is True and candidate.importance >= 0.8


def test_explicit_requests_about_something_of_mine_name_it_as_the_attribute():
    assert only("Remember that my locker code is 4411.").attribute == "locker code"
    assert only("Please remember: my wifi password is hunter2").attribute == "wifi password"
    assert only("Remember that the meeting moved to Friday.").attribute == ""


# --- slots, categories, entities ------------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "attribute", "category"), [
    ("I live in Paris.", "location", "fact"),
    ("I moved to Berlin last month.", "location", "fact"),
    ("We live in Lisbon now.", "location", "fact"),
    ("I work at Acme Corp as a nurse.", "employer", "fact"),
    ("I just joined Stripe.", "employer", "fact"),
    ("I'm a nurse.", "occupation", "fact"),
    ("My name is Dana.", "name", "fact"),
    ("Please call me Bob.", "preferred name", "preference"),
    ("I'm vegetarian.", "diet", "restriction"),
    ("We're vegan at home.", "diet", "restriction"),
    ("I'm allergic to peanuts.", "allergy:peanuts", "restriction"),
    ("I'm 34 years old.", "age", "fact"),
    ("I got married last year.", "marital status", "relationship"),
    ("My wife is called Ana.", "relation:wife", "relationship"),
    ("I have a dog named Rex.", "relation:dog:rex", "relationship"),
    ("My favourite colour is green.", "favourite:colour", "preference"),
    ("I speak Portuguese.", "language:portuguese", "skill"),
])
def test_obvious_slots_so_that_a_new_value_updates_the_old(text, attribute, category):
    candidate = only(text)
    assert (candidate.attribute, candidate.category) == (attribute, category)


def test_a_move_after_a_home_is_the_same_slot():
    assert only("I live in Paris.").attribute == only("I moved to Berlin last month.").attribute == "location"
    assert only("I moved to Berlin last month.", when=SENT).content == "The user moved to Berlin in April 2023."


def test_several_allergies_are_one_memory_each():
    found = extract_local("I'm allergic to peanuts, shellfish and kiwi.")
    assert [(c.content, c.attribute) for c in found] == [
        ("The user is allergic to peanuts.", "allergy:peanuts"), ("The user is allergic to shellfish.",
                                                                  "allergy:shellfish"),
        ("The user is allergic to kiwi.", "allergy:kiwi")]
    assert all(c.importance >= 0.9 and "health" in c.tags for c in found)


@pytest.mark.parametrize(("text", "category"), [
    ("I love spicy Thai food.", "preference"),
    ("I can't eat gluten.", "restriction"),
    ("I'm planning to run a marathon next year.", "goal"),
    ("I went to Japan with my sister.", "history"),
    ("I'm learning the violin.", "skill"),
])
def test_categories(text, category):
    assert only(text).category == category


def test_statements_carry_entities_and_topic_tags():
    candidate = only("I moved to Lisbon to work at Feedzai.")
    assert candidate.entities["places"] == ["Lisbon"]
    assert "Feedzai" in candidate.entities["organizations"]
    assert "work" in candidate.tags
    assert only("My daughter Emma starts school in May.").entities["people"] == ["Emma"]


def test_a_statement_about_a_named_person_in_the_users_life_is_about_them():
    candidate = only("My daughter Emma starts school in May.")
    assert candidate.content == "The user's daughter Emma starts school in May."
    assert candidate.subject == "Emma" and "family" in candidate.tags
    assert only("I'm allergic to peanuts.").subject == "user"


def test_the_last_word_on_a_slot_wins_within_one_message():
    found = extract_local("I live in Paris. Actually, I live in Lyon. I'm allergic to peanuts.")
    assert [c.content for c in found] == ["The user lives in Lyon.", "The user is allergic to peanuts."]


def test_strict_reading_for_document_text_keeps_only_what_the_writer_says_of_themselves():
    text = ("We decided to use PostgreSQL. Founded in 1999, Acme builds rockets. I'm allergic to peanuts. "
            "Our office moved to Berlin.")
    assert contents(text, strict=True) == ["The user is allergic to peanuts."]
    assert len(extract_local(text)) == 3  # in a conversation "we" is the speaker (and whom they named)


# --- cleaner memories: chatter, dates, places, people, "we" ---------------------------------------------------

JUNE = datetime(2024, 6, 20, 10, 30)  # a Thursday


@pytest.mark.parametrize(("text", "content"), [
    ("Yes, I'm allergic to shellfish, which is tricky in Portugal haha.", "The user is allergic to shellfish."),
    ("FYI: I got promoted to team lead lol", "The user got promoted to team lead."),
    ("Quick update - I switched to a Samsung :)", "The user switched to a Samsung."),
    ("Small update: I'm vegetarian again, which is hard with my job haha", "The user is vegetarian again."),
    ("Big news!! I adopted a greyhound lmao", "The user adopted a greyhound."),
])
def test_discourse_markers_and_chatter_tails_are_not_kept(text, content):
    assert contents(text, when=JUNE) == [content]


@pytest.mark.parametrize(("text", "content"), [
    ("Update: we moved again, now living in Porto since May.", "The user is now living in Porto since May 2024."),
    ("I moved to Lyon in March for a new job.", "The user moved to Lyon in March 2024 for a new job."),
    ("My daughter starts school in September.", "The user's daughter starts school in September 2024."),
    ("I've worked at Bosch since January.", "The user has worked at Bosch since January 2024."),
    ("I'm going to Rome next Friday.", "The user is going to Rome on Friday, 21 June 2024."),
    ("I got engaged on May 4th!", "The user got engaged on 4 May 2024."),
])
def test_partial_and_relative_dates_are_resolved_against_the_send_time(text, content):
    assert content in contents(text, when=JUNE)


@pytest.mark.parametrize(("text", "content"), [
    ("They bumped me up to senior accountant.", "The user got bumped up to senior accountant."),
    ("She hired me on Monday!", "The user got hired on Monday, 17 June 2024."),
    ("They made me art director last week.", "The user was made art director in the week before 20 June 2024."),
    ("My boss named me team lead.", "The user was named team lead."),
    ("They've made me shift supervisor, finally!", "The user was made shift supervisor, finally."),
    ("They made me a claims adjuster at Brightwell.", "The user was made a claims adjuster at Brightwell."),
])
def test_what_someone_did_to_the_speaker_is_said_of_the_speaker(text, content):
    assert contents(text, when=JUNE) == [content]


@pytest.mark.parametrize(("text", "content"), [
    ("My car's a Mini Cooper.", "The user's car is a Mini Cooper."),  # no possessive before an article
    ("These days I'm fully plant-based.", "These days the user is fully plant-based."),  # a time, no reference
    ("Everyone calls me Liz.", "The user goes by Liz."),
    ("Jake's my ex now.", "Jake is the user's ex now."),
    ("I was at Sainsbury's the whole day.", "The user was at Sainsbury's the whole day."),  # a shop's name
    ("Working at Tesco now.", "The user is working at Tesco now."),  # an "-ing" phrase that names something
    ("New title as of Monday: design manager.", "The user's new title is design manager as of Monday."),  # a label
    ("Home is a little flat in Glasgow.", "The user's home is a little flat in Glasgow."),
    ("Home for me is a tiny studio in Bristol.", "The user's home is a tiny studio in Bristol."),
    ("I'm seeing someone new, her name is Noor.", "The user is seeing someone new named Noor."),  # the name after
    ("We adopted a rescue greyhound - his name's Bolt.", "The user adopted a rescue greyhound named Bolt."),
    ("Home for the two of us is Leeds now.", "The user lives in Leeds."),
    ("Cardiff's home these days.", "The user lives in Cardiff these days."),
    ("Santa Fe is where we live now.", "The user lives in Santa Fe."),
    ("gone full veggie now", "The user has gone full veggie now."),  # a participle: "I've gone"
    ("emails to ravi.k@gmail.com from now on please", "The user's email address is ravi.k@gmail.com."),
])
def test_chat_ways_of_saying_what_holds(text, content):
    assert contents(text, when=JUNE) == [content]


@pytest.mark.parametrize("text", ["Sending hugs to Mel!", "Looking forward to it!", "Thinking of you, Caroline.",
                                  "Home's where the heart is.", "The barn is home to owls.",
                                  "Gone are the days of cheap rent."])
def test_a_wish_in_an_ing_phrase_is_no_statement(text):
    assert contents(text, when=JUNE) == []


def test_being_made_to_do_something_is_no_title():
    assert contents("They made me laugh so hard.", when=JUNE) == []
    assert contents("She made me a cake for my birthday.", when=JUNE) == []


@pytest.mark.parametrize(("text", "content"), [
    ("It was my 35th birthday yesterday!", "It was the user's 35th birthday on 19 June 2024."),
    ("It's my first week at Accenture.", "It's the user's first week at Accenture."),
])
def test_it_with_the_speakers_numbered_day_is_a_statement_not_a_remark(text, content):
    assert contents(text, when=JUNE) == [content]
    assert contents("It was my pleasure.", when=JUNE) == contents("It's my fault.", when=JUNE) == []


@pytest.mark.parametrize(("text", "valid_from"), [
    ("I moved to Lyon in March.", datetime(2024, 3, 1)),
    ("Update: we moved again, now living in Porto since May.", datetime(2024, 5, 1)),
    ("Last week we moved to Grenoble.", datetime(2024, 6, 13, 10, 30)),
    ("I'm 41 since yesterday.", datetime(2024, 6, 19)),
    ("I switched to a Pixel three days ago.", datetime(2024, 6, 17, 10, 30)),
])
def test_valid_from_is_when_the_statement_says_it_became_true(text, valid_from):
    assert extract_local(text, when=JUNE)[-1].valid_from == valid_from


def test_a_state_said_to_hold_now_starts_when_the_change_the_message_dated():
    found = extract_local("Last week we moved again. We live in Grenoble now.", when=JUNE)
    assert [(c.content, c.valid_from) for c in found] == [
        ("In the week before 20 June 2024 the user moved again.", datetime(2024, 6, 13, 10, 30)),
        ("The user lives in Grenoble now.", datetime(2024, 6, 13, 10, 30))]


@pytest.mark.parametrize("text", ["I live in Grenoble.", "I'm flying to Oslo next week.", "I love sushi."])
def test_valid_from_is_empty_when_the_statement_gives_no_start(text):
    assert all(c.valid_from is None for c in extract_local(text, when=JUNE))


def test_a_pronoun_led_clause_about_the_person_just_named_is_kept():
    found = extract_local("My daughter Mia starts school here in September; she turns 7 on June 14.", when=JUNE,
                          context=["User: We just moved to Porto.", "Assistant: Welcome to Porto!"])
    assert [(c.content, c.subject) for c in found] == [
        ("The user's daughter Mia starts school in Porto in September 2024.", "Mia"),
        ("The user's daughter Mia turns 7 on 14 June.", "Mia")]


@pytest.mark.parametrize(("text", "content"), [
    ("My son Leo got into Oxford. He starts in October.", "The user's son Leo starts in October 2024."),
    ("My mum retired last month - she's moving to Faro.", "The user's mum is moving to Faro."),
])
def test_a_sentence_led_by_he_or_she_is_about_the_person_the_message_named(text, content):
    assert content in contents(text, when=JUNE)


def test_here_without_a_place_named_is_dropped():
    assert contents("My daughter starts school here in September.", when=JUNE) == [
        "The user's daughter starts school in September 2024."]


@pytest.mark.parametrize(("context", "content"), [
    ([], "Sam moved again."),
    (["User: My wife Ana and I love Lisbon."], "Sam and Ana moved again."),
    (["Sam: my husband got a job offer up north", "Assistant: Congratulations to him!"],
     "Sam and their husband moved again."),
    (["Jo: my husband got a job offer up north"], "Sam moved again."),  # Jo's husband is not Sam's
])
def test_we_is_the_user_and_whom_the_conversation_named(context, content):
    assert contents("Update: we moved again.", speaker="Sam", when=JUNE, context=context) == [content]


@pytest.mark.parametrize(("text", "content"), [
    ("We live in Grenoble now.", "The user lives in Grenoble now."),
    ("We've got two cats.", "The user has got two cats."),
    ("We're renting a flat in Ghent.", "The user is renting a flat in Ghent."),
    ("We were in Kyoto last spring.", "The user was in Kyoto in spring 2024."),
])
def test_we_alone_is_the_user_with_the_verb_agreeing(text, content):
    assert contents(text, when=JUNE) == [content]


@pytest.mark.parametrize(("text", "expected"), [
    ("I'm allergic to nuts and have to carry an EpiPen.",
     ["The user is allergic to nuts.", "The user has to carry an EpiPen."]),
    ("I'm allergic to bee stings and always carry antihistamines.",
     ["The user is allergic to bee stings.", "The user always carries antihistamines."]),
    ("I live in Lyon and work at Doctolib.", ["The user lives in Lyon.", "The user works at Doctolib."]),
    ("I am allergic to peanuts and carry an EpiPen.",  # once "allergic to carry an EpiPen"
     ["The user is allergic to peanuts.", "The user carries an EpiPen."]),
    ("I am allergic to sesame, and I always keep an EpiPen in my bag.",
     ["The user is allergic to sesame.", "The user always keeps an EpiPen in their bag."]),
])
def test_coordinated_verb_phrases_are_separate_memories(text, expected):
    assert contents(text) == expected
    assert contents(text, strict=True) == expected  # the document path reads first-person lines the same way


@pytest.mark.parametrize(("context", "text", "content"), [
    (["User: I'm in Lisbon with my girlfriend Inês."], "We adopted a cat here last week haha",
     "The user and Inês adopted a cat in Lisbon in the week before 20 June 2024."),
    (["User: We live in Munich."], "Just a heads-up, we're moving out of here in August.",
     "The user is moving out of Munich in August 2024."),
    (["User: I grew up in Dublin."], "I went back there for Christmas.", "The user went back to Dublin for Christmas."),
])
def test_unseen_phrasings_of_here_there_we_and_chatter(context, text, content):
    assert contents(text, when=JUNE, context=context) == [content]


@pytest.mark.parametrize(("text", "content"), [
    ("I have a brother, Tom. He lives in Toronto.", "The user's brother Tom lives in Toronto."),
    ("My girlfriend's name is Priya. She's a dentist.", "The user's girlfriend Priya is a dentist."),
    ("Our daughter Zoe graduated in May \u2014 she's a nurse now.", "The user's daughter Zoe is a nurse now."),
])
def test_the_person_a_pronoun_stands_for_is_named_however_they_were_introduced(text, content):
    assert content in contents(text, when=JUNE)


@pytest.mark.parametrize(("said", "kept"), [
    ("I am now a product manager at Doctolib.", "The user is now a product manager at Doctolib."),
    ("I am currently learning Portuguese.", "The user is currently learning Portuguese."),
])
def test_i_am_uncontracted_is_kept_like_i_m(said, kept):
    assert [c.content for c in extract_local(said)] == [kept]


def test_i_am_with_a_feeling_about_the_other_is_still_chatter():
    assert extract_local("I am so happy for you!") == []


@pytest.mark.parametrize(("text", "content"), [
    # a name after a place said with an article names the place, it calls nobody
    ("I left the NHS and now I work for a private clinic, Bupa.",
     "The user left the NHS and now they work for a private clinic, Bupa."),
    # the speaker in a later clause: after a remark, or as the owner of what another person leads
    ("Keto wasn't for me, I'm intermittent fasting now.",
     "Keto wasn't for the user, they're intermittent fasting now."),
    ("Oskar got promoted so Ingrid leads our team now.", "Oskar got promoted so Ingrid leads the user's team now."),
])
def test_a_statement_the_speaker_makes_in_a_later_clause_is_kept_whole(text, content):
    assert contents(text) == [content]


def test_a_trailing_name_called_is_still_dropped():
    assert contents("I loved the book, Anna.") == ["The user loved the book."]
    assert contents("Thanks so much, Anna.") == []


@pytest.mark.parametrize(("text", "content"), [
    ("fav food is pizza", "The user's fav food is pizza."),  # chat leaves out whose
    ("gary got sacked, new boss is a woman named Priti",
     "Gary got sacked, the user's new boss is a woman named Priti."),
])
def test_a_thing_of_ones_own_said_bare_is_the_speakers(text, content):
    assert contents(text) == [content]


def test_a_bare_subject_that_is_not_ones_own_is_no_statement():
    assert contents("Hard work is key.") == [] == contents("Great weather is rare here.")


def test_the_speakers_clause_after_and_now_stands_alone():
    assert contents("There was a reorg and now I report directly to Mette.") == [
        "Now the user reports directly to Mette."]


@pytest.mark.parametrize(("text", "content"), [
    ("on a Galaxy now, the old phone died", "The user is on a Galaxy now, the old phone died."),
    ("back to eating fish, veganism wasn't for me", "The user is back to eating fish, veganism wasn't for them."),
    ("still at Siemens", "The user is still at Siemens."),
    ("52 now", "The user is 52 years old."),
    ("currently a trainee solicitor", "The user is currently a trainee solicitor."),
    ("no longer vegetarian, eating meat again", "The user is no longer vegetarian, eating meat again."),
    ("renting in bristol atm", "The user is renting in Bristol at the moment."),
])
def test_a_fragment_saying_where_or_what_the_speaker_is_has_an_implied_im(text, content):
    assert contents(text) == [content]


def test_what_is_done_to_the_speaker_is_said_with_got():
    assert contents("hired as a barista at the new cafe") == ["The user got hired as a barista at the new cafe."]


def test_someone_new_named_after_a_comma_is_named_not_called():
    assert contents("dating someone new, Priya") == ["The user is dating someone new named Priya."]
    assert contents("Looking forward to the weekend now") == []  # a feeling, with no place or person


def test_a_fragment_that_says_nothing_of_the_speaker_stays_dropped():
    assert contents("in the morning, mostly") == [] == contents("3 cats, 2 dogs") == contents("On it!")


def test_a_new_subject_said_bare_at_the_front_is_the_speakers():
    assert contents("new manager joining tomorrow, his name is Ravi") == [
        "The user's new manager joining tomorrow, his name is Ravi."]
    assert contents("new year, new me") == []


@pytest.mark.parametrize(("text", "content"), [
    ("bye bye Golf, hello Polestar 2", "The user swapped their Golf for Polestar 2."),
    ("goodbye Madrid, hello Valencia!", "The user moved from Madrid to Valencia."),
])
def test_goodbye_one_thing_hello_another_is_a_swap(text, content):
    assert contents(text) == [content]


def test_a_new_number_said_as_no_is_the_speakers_phone():
    assert contents("new no. +44 7700 900123") == ["The user's phone number is +44 7700 900123."]


def test_the_new_number_or_email_said_as_the_new_one_is_the_speakers():
    assert contents("Heads up, the new number is 0687 215 330, the old one's been cut off.") == [
        "The user's phone number is 0687 215 330."]
    assert contents("the new email is nadia@kerrstudio.io") == ["The user's email address is nadia@kerrstudio.io."]
    assert contents("The new iPhone is amazing.") == [] and contents("The current price is 40 pounds.") == []


def test_a_number_offered_for_use_is_the_speakers_unless_it_is_someone_elses():
    assert contents("you can use 0612 448 907 if the reminders need a number") == [
        "The user's phone number is 0612 448 907."]
    assert contents("you can use Anna's number, 0612 448 907") == []
    assert contents("new email ana.b@posteo.de") == ["The user's email address is ana.b@posteo.de."]


def test_a_leading_past_tense_before_a_comma_is_the_speakers():
    assert contents("upgraded to a Fairphone, the Pixel broke") == [
        "The user upgraded to a Fairphone, the Pixel broke."]
    assert contents("Founded in 1999, the bakery still thrives.") == []


def test_a_remark_before_a_comma_splice_leaves_every_statement():
    assert contents("Aww that's sweet, I have a Kindle and I'm 38, my email is jo@mail.de") == [
        "The user has a Kindle.", "The user is 38 years old.", "The user's email address is jo@mail.de."]


def test_a_short_implied_statement_naming_someone_is_kept_but_a_feeling_is_not():
    assert contents("seeing Priya these days") == ["The user is seeing Priya these days."]
    assert contents("Missing Tom") == [] == contents("Loving Lisbon!")


def test_a_diet_or_status_fragment_with_a_time_is_the_speakers():
    assert contents("totally vegan since june") == ["The user is vegan since June."]
    assert contents("divorced as of last month") != []


def test_an_age_said_with_today_is_a_birthday():
    assert contents("61 today!", when=SENT) == ["The user turned 61 on 8 May 2023."]


def test_what_the_speaker_did_about_a_thing_is_theirs_with_the_thing():
    assert contents("the kettle broke, replaced it with a Smeg") == [
        "The kettle broke, the user replaced it with a Smeg."]


def test_an_age_said_with_a_remark_is_the_age():
    assert contents("I'm 34, so not exactly a spring chicken for marathon training haha") == [
        "The user is 34 years old."]
    assert contents("I'm 10 minutes away") != ["The user is 10 years old."]


@pytest.mark.parametrize(("text", "memory"), [
    ("is it normal that as a junior data analyst i spend like 80% of my day cleaning spreadsheets? asking for me",
     "The user is a junior data analyst."),
    ("as a vegetarian, how do i get enough protein?", "The user is a vegetarian."),
    ("being 29 and still having no clue how taxes work is embarrassing lol", "The user is 29 years old."),
])
def test_what_the_speaker_says_they_are_inside_a_question_is_kept(text, memory):
    assert contents(text) == [memory]


def test_a_past_or_a_thing_said_with_as_is_no_self_description():
    assert contents("As a kid I loved horses.") == ["As a kid the user loved horses."]
    assert contents("what should I get as a gift for a nurse?") == []


@pytest.mark.parametrize(("text", "memory"), [
    ("can u format this for my email signature: Tom Reyes | Sales | mobile 07700 900 412",
     "The user's phone number is 07700 900 412."),
    ("send the weekly summary to marek.h@fastpost.cz please", "The user's email address is marek.h@fastpost.cz."),
    ("I've stopped using lena@fastmail.com; everything should go to lena.h@proton.me now.",
     "The user's email address is lena.h@proton.me."),
])
def test_a_contact_detail_given_in_a_request_is_the_speakers(text, memory):
    assert memory in contents(text)


@pytest.mark.parametrize("text", ["can you call 0612 345 678 and book a table for me?",
                                  "send the invoice to my boss at karl@acme.com",
                                  "Send the invoices to billing@acme.com."])
def test_a_number_or_address_for_someone_else_is_not(text):
    assert not [c for c in contents(text) if "phone number is" in c or "email address is" in c]


def test_an_emoji_between_two_sentences_ends_the_first():
    assert contents("been fully vegan since january, so cheese is out too :( any dairy free snacks?") == [
        "The user has been fully vegan since January, so cheese is out too."]
    assert contents("guess who got promoted to team lead today 🎉 still processing it") == [
        "The user got promoted to team lead today."]


def test_a_request_after_a_statement_is_dropped():
    assert contents("im vegetarian so give me a high protein lunch idea pls") == ["The user is vegetarian."]
    assert contents("I've been vegetarian since college, so please don't suggest meat dishes.") == [
        "The user has been vegetarian since college."]
    assert contents("I'm 34, if that matters for the insurance quote.") == ["The user is 34 years old."]


@pytest.mark.parametrize(("text", "memory"), [
    ("we've been in Haarlem since the spring (utrecht rents were insane lol) and i still haven't found a decent "
     "bakery, any tips?", "The user has been in Haarlem since spring 2023."),
    ("mireille and i have our third date on friday, where should we go in lyon??",
     "Mireille and the user have their third date on Friday."),
    ("can you help me plan meals for the week, i'm pescatarian btw so fish is fine",
     "The user is pescatarian so fish is fine."),
    ("Please address me as Katherine in the drafts.", "The user's preferred name is Katherine."),
])
def test_a_statement_before_or_after_a_question_is_kept(text, memory):
    assert memory in contents(text, when=SENT)


def test_a_request_to_the_assistant_is_no_memory():
    assert contents("I just signed my contract with Adyen. Please help me write a farewell message to my team.") == [
        "The user just signed their contract with Adyen."]
    assert contents("I go by Kit these days, so please sign the cover letter as Kit Alvarez.") == [
        "The user goes by Kit these days."]


@pytest.mark.parametrize(("text", "memories"), [
    ("Actually use priya@nairstudio.co for everything from now on, I've stopped checking priya.nair88@gmail.com.",
     ["The user's email address is priya@nairstudio.co."]),
    ("Quick fix for the letter template - it's 07700 900987 now, the old line got cut off.",
     ["The user's phone number is 07700 900987."]),
    ("The new flat in Gdansk has a tiny kitchen - can you suggest some one-pan dinners?",
     ["The user's new flat in Gdansk has a tiny kitchen."]),
    ("First week at Monzo done! Honestly way less bureaucracy.", ["The user finished their first week at Monzo."]),
    ("Things ended with Marcus back in March.", ["The user broke up with Marcus back in March."]),
    ("Dear assistant, I am a nurse in Leeds.", ["The user is a nurse in Leeds."]),
    ("As a junior copywriter I mostly write product descriptions, so help me make this one punchier.",
     ["The user mostly writes product descriptions.", "The user is a junior copywriter."]),
])
def test_a_change_said_in_passing_or_by_implication(text, memories):
    assert contents(text) == memories


def test_the_new_thing_of_someone_else_stays_theirs():
    assert contents("The new iPhone is amazing") == []


@pytest.mark.parametrize(("text", "memory"), [
    ("Quick context: I'm based in Tampere.", "The user is based in Tampere."),
    ("Heads up for team lunches: I'm vegetarian.", "The user is vegetarian."),
    ("role: Associate Product Manager.", "The user's role is Associate Product Manager."),
    ("Work mobile for escalations: +44 7700 900412.", "The user's work phone number is +44 7700 900412."),
    ("I ought to mention that I have since left Ludlow.", "The user has since left Ludlow."),
    ("Having spent forty years in the Midlands, we settled in Ludlow.",
     "The user has spent forty years in the Midlands."),
    ("I have now 43 years, but still I run every week.",
     "The user is now 43 years old, but still they run every week."),
    ("my sons favourite book is the one about the lost penguin",
     "The user's son's favourite book is the one about the lost penguin."),
])
def test_a_heading_or_an_announcement_is_no_part_of_the_statement(text, memory):
    assert contents(text)[0] == memory


@pytest.mark.parametrize(("text", "memory"), [
    ("help me plan a bday surprise for my husband marco on a tight budget", "The user's husband is Marco."),
    ("what should I get my wife Anna for her birthday?", "The user's wife is Anna."),
    ("can you write a card for my boss, Tom Hardy?", "The user's boss is Tom Hardy."),
])
def test_a_partner_or_manager_named_in_a_request_is_kept(text, memory):
    assert contents(text) == [memory]


@pytest.mark.parametrize(("text", "memories"), [
    # dictated: fillers, no stops, the request to the assistant said in the same breath
    ("uh so yeah i work at Halden Foods like three days a week so if you could plan my gym days around that thats "
     "ideal", ["The user works at Halden Foods three days a week."]),
    ("so it was a big week um we got the keys on friday we live in Harrogate now so like update my address",
     ["The user got the keys on Friday, 5 May 2023.", "The user lives in Harrogate now."]),
])
def test_a_dictated_message_gives_the_statements_said_in_it(text, memories):
    assert contents(text, when=SENT) == memories


def test_a_new_number_said_as_it_after_a_change_of_numbers_is_the_speakers():
    assert "The user's phone number is 07700 900 333." in contents(
        "Had to change numbers after my phone was stolen. It's 07700 900 333 now.", when=SENT)


def test_a_statement_said_with_surprise_is_a_statement_and_a_question_still_asks():
    assert "Priya is the user's manager now." in contents(
        "so Priya is my manager now and she answers emails at midnight??", when=SENT)
    assert contents("is that even allowed??", when=SENT) == []
    assert contents("where should we go for dinner??", when=SENT) == []


@pytest.mark.parametrize(("text", "memories"), [
    # typed on a phone: no "I", shorthand, a value given as an equation, a request in the same breath
    ("live in tacoma, any good dentists?", ["The user lives in Tacoma."]),
    ("work at Ferro Logistics - help me with my timesheet?", ["The user works at Ferro Logistics."]),
    ("new mgr = dana ortiz", ["The user's new manager is Dana Ortiz."]),
    ("boss is Rui Santos, can you draft a leave request to him", ["The user's boss is Rui Santos."]),
    ("title's senior buyer now, fix my bio pls", ["The user's title is senior buyer now."]),
    ("doing paleo rn. lunch ideas?", ["The user is doing paleo now."]),
    ("mobile 0412 555 019, add it to the form", ["The user's phone number is 0412 555 019."]),
    ("quit zalando, now at Delivery Hero", ["The user quit zalando, now at Delivery Hero."]),  # a past tense
    # an order stays an order
    ("Work on the budget for me", []),
])
def test_a_terse_message_gives_the_statements_said_in_it(text, memories):
    assert contents(text, when=SENT) == memories


@pytest.mark.parametrize(("text", "memory"), [
    ("Please put ana.silva@fastmail.com on the signup form instead.",
     "The user's email address is ana.silva@fastmail.com."),
    ("swap the number to (415) 555-0143 on my card", "The user's phone number is (415) 555-0143."),
])
def test_a_contact_detail_the_speaker_asks_to_be_filled_in_anew_is_theirs(text, memory):
    assert contents(text, when=SENT) == [memory]


@pytest.mark.parametrize(("text", "memories"), [
    # told to an agent as something to keep, with what it is for
    ("remember that I live in Leslieville, Toronto. Use that as my default location for the weather.",
     ["The user lives in Leslieville."]),
    ("note: my car is a grey Mazda3, in case you need it for parking.", ["The user's car is a grey Mazda3."]),
    ("My email's cal.r@gmail.com if you need it for the letter.", ["The user's email address is cal.r@gmail.com."]),
    ("Personal email for receipts: t.r@gmail.com.", ["The user's email address is t.r@gmail.com."]),
    ("Please forget t.r@gmail.com, it's tomas@reyes.ca now.", ["The user's email address is tomas@reyes.ca."]),
    ("Please jot down my new landline: 01943 608215.", ["The user's phone number is 01943 608215."]),
    # a relation's number is theirs, unless the speaker says it is theirs
    ("Add my brother Diego as emergency contact: (647) 555-0192.", []),
    ("My grandson set me up with an email address, b.hollis@talktalk.net.",
     ["The user's email address is b.hollis@talktalk.net."]),
    ("Rather to my astonishment, the hospice has made me deputy shop manager.",
     ["The user was made deputy shop manager."]),
])
def test_what_an_agent_is_told_to_keep_is_kept_and_what_it_is_asked_to_do_is_not(text, memories):
    assert contents(text, when=SENT) == memories


@pytest.mark.parametrize(("text", "memories"), [
    # a lead an agent is given before what it should keep
    ("For your records, my home address is in Kendal now.", ["The user's home address is in Kendal now."]),
    ("Kindly amend my residential address on all travel profiles.", []),  # an order, however courteous
    # someone else's number, however many words name them
    ("Save my head of department's number, 07700 900222, as a backup contact.", []),
    # what being one is like says the speaker is one
    ("being a night porter is so dull, nothing ever happens", ["The user is a night porter."]),
    # a run-on said aloud keeps "anymore" with the clause it ends
    ("In my capacity as head of finance, I will chair the budget review.",
     ["The user is head of finance.", "The user will chair the budget review."]),
    ("Sorry you had it wrong: I'm on a Pixel 8 these days.", ["The user is on a Pixel 8 these days."]),
    ("So today I set up ana.costa@lanternmail.com and started telling people.",
     ["The user's email address is ana.costa@lanternmail.com.", "The user started telling people."]),
    ("i'm not at the bakery anymore i started at Hollis Print in march so yeah",
     ["The user is not at the bakery anymore.", "The user started at Hollis Print in March 2023."]),
])
def test_leads_asides_and_runs_are_read_as_what_they_say(text, memories):
    assert contents(text, when=SENT) == memories
