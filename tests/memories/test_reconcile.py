"""Reconciliation end to end: conversations posted through the API, the real local extractor and attribute frames,
the real local embedding model and database; what is current is read back through GET /api/memories/."""

import pytest

from conversations import processing
from conversations.models import Message
from memories import services as memory_services
from memories.models import Memory


def converse(api, turns: list[tuple[str, str]], conversation_id: str | None = None) -> str:
    """Post (sent_at, text) user turns to a conversation and extract them in send order, as the worker does."""
    if conversation_id is None:
        conversation_id = api.post("/api/conversations/", {"title": "chat"}, format="json").json()["id"]
    response = api.post(f"/api/conversations/{conversation_id}/messages/", {"messages": [
        {"role": "user", "content": text, "sent_at": sent_at} for sent_at, text in turns]}, format="json")
    assert response.status_code == 201, response.content
    for message in Message.objects.filter(conversation_id=conversation_id).order_by("sent_at", "sequence"):
        processing.message_extract(message_id=message.pk)
    return conversation_id


def current(api) -> list[str]:
    return [m["content"] for m in api.get("/api/memories/", {"page_size": 200}).json()["results"]]


UPDATES = [  # (old, new, old word, new word)
    ("I'm a library assistant on campus.", "idk if i told u but they made me evening supervisor at the library",
     "assistant", "supervisor"),
    ("My line manager is Harriet Okafor.", "Harriet's on maternity leave, so it's Phil Brennan I report to now.",
     "Harriet Okafor", "Phil Brennan"),
    ("I'm 41 and training for a 10k.", "Birthday yesterday: 42! Cake was wonky.", "41", "42"),
    ("I work for Monzo.", "First day at Revolut tomorrow, wish me luck!", "Monzo", "Revolut"),
    ("Cafes near me? I'm in Shoreditch, London.", "Need a new gym since we moved to Brighton last month.",
     "Shoreditch", "Brighton"),
    ("I'm a software engineer.", "They've made me team lead, finally!", "software", "team"),
    ("I'm 51.", "I'll be honest, at 52 I'm slower than I used to be.", "51", "52"),
    ("You can reach me at ciara.b@gmail.com.", "I've switched to ciara@byrne.ie for everything now.", "gmail", "byrne"),
    ("I'm vegetarian, so lunch ideas please.", "Since March I've been fully vegan, which means no eggs any more.",
     "vegetarian", "vegan"),
    ("You can list my contact address as ana.s@gmail.com on the form.",
     "I've stopped using Gmail. Please put ana.s@fastmail.com on the form instead.", "gmail.com", "fastmail"),
    # typed on a phone
    ("live in tacoma, any good dentists?", "moved to boulder last wk. coffee spots?", "Tacoma", "Boulder"),
    ("fav band = the national. anything similar?", "ok phoebe bridgers is my fav now lol", "national", "bridgers"),
    ("My manager, Fiona Baird, wants my goals by Friday.",
     "I don't report to Fiona anymore, it's Rajesh Menon now, and he's more hands-off.", "Baird", "Rajesh"),
    ("In my work I am junior data analyst.", "From now I am team leader of the data group.", "junior", "leader"),
    ("My manager is Aisha Raman.", "Heads up: I report to Kevin Doyle now since Aisha moved to the Singapore office.",
     "Raman", "Kevin"),
    ("My favourite album of all time is Disintegration.", "My new favourite record is Blue Rev by Alvvays.",
     "Disintegration", "Blue Rev"),
    ("I live in Marseille with my two cats.", "We finally moved up to Rennes, loving the new flat.", "Marseille",
     "Rennes"),
    ("I work for Ubisoft in the tools team.", "Quit Ubisoft last month and I'm with Spotify now.", "Ubisoft",
     "Spotify"),
    ("My cell number is 0611 223 344.", "I changed numbers, my phone number is now 0699 887 766.", "223", "887"),
    ("I drive an old Renault Clio.", "I sold the Clio and now I drive a Kia Niro.", "Renault", "Niro"),
    ("I'm vegetarian.", "I went fully vegan in May.", "vegetarian", "vegan"),
    ("My favourite band is Radiohead.", "My favorite band these days is Phoenix.", "Radiohead", "Phoenix"),
    ("My phone number is 555 123 4567.", "New phone number: 555 888 9999.", "4567", "9999"),  # a label
    ("My work number is 020 7946 0958.", "My office line changed, it's 020 7946 1111 now.", "0958", "1111"),
    ("My office is in Boulder.", "Our office moved to Golden last week.", "Boulder", "Golden"),
    ("My boss is Karin.", "I report to Jan now after the reorg.", "Karin", "Jan"),  # a name, no month
    ("I live in Denver.", "Since last month home is Austin for us.", "Denver", "Austin"),  # no "I" said
    # two facts in one sentence, one of them changed; the new one gives the old value a reason's clause
    ("I'm a teacher at Lincoln High and I live in Denver.", "We moved to Seattle last week, Denver got too expensive.",
     "Denver", "Seattle"),
    ("I'm Sam, my number is 0612 345 678 and my email is sam@mail.com.", "New number: 0698 765 432.", "345", "765"),
    ("Been in Glasgow for about three years now.", "Quick update: the move went fine and Edinburgh is home now.",
     "Glasgow", "Edinburgh"),  # a stay of years is a home; "X is home now"
    ("I'm a staff nurse.", "I was made head nurse of the ward.", "staff", "head"),  # said in the passive
    ("I get around in a Ford Fiesta.", "Traded in the Fiesta for a Tesla Model 3.", "Ford", "Tesla"),
    ("Greta is my manager.", "Greta retired, so my new boss is Henrik.", "is the user's manager", "Henrik"),
    ("These days I work for Siemens Healthineers.", "I handed in my notice at Siemens and signed with Philips.",
     "Healthineers", "Philips"),
    ("My boss is a guy called Henrik.", "Henrik left, so now I report to Sofia.", "a guy called Henrik", "Sofia"),
    ("hey! quick intro: I'm Nadia, living in Lille with my partner.",  # the participle is a statement of its own
     "so we packed up everything and relocated to Nantes, still getting used to the rain lol", "Lille", "Nantes"),
    ("I'm a sous chef at a small bistro.", "They promoted me, I'm head chef at the bistro now!", "sous", "head"),
    ("I'm a 34 year old nurse.", "It was my 35th birthday yesterday, we went out for tapas.", "34", "35th"),
    ("My car is a 2012 Honda Civic.", "The Civic finally died so I bought a used Mazda 3.", "Honda", "Mazda"),
    ("Reach me at priya.r@outlook.com please.", "I've moved over to priya@rao.dev, the outlook one is closed.",
     "outlook.com", "rao.dev"),
    ("My supervisor is Dr. Okafor.", "Dr. Okafor retired and Dr. Lindqvist supervises me now.", "supervisor is Dr",
     "Lindqvist"),
    # two clauses, each with a subject of its own: the one that says what holds now is read apart
    ("I'm a backend developer at Spotify.", "After four years I said goodbye to Spotify, I'm at Klarna now.",
     "developer at Spotify", "Klarna"),
    ("My manager is Pedro.", "Pedro moved to another team, so I report to Aisha these days.", "manager is Pedro",
     "Aisha"),
    ("I'm on a paleo diet.", "I dropped paleo, these days I just follow a Mediterranean diet.", "on a paleo",
     "Mediterranean"),
    ("Radiohead has always been my favourite band.",  # an initialism ends no sentence before "are"
     "Honestly Fontaines D.C. are my favourite band now, they've replaced Radiohead.", "always been", "Fontaines"),
    ("I report to Kwame.", "We got a new head of department, Beatriz, so she's my boss now.", "Kwame", "Beatriz"),
    ("My go-to comfort food is lasagne.", "Lately my favourite comfort food is pho.", "lasagne", "pho"),
    ("I'm a nurse with the NHS.", "I left the NHS in the summer and now I work for a private clinic, Bupa.",
     "nurse with", "Bupa"),
    ("My team lead is Oskar.", "Oskar got promoted so Ingrid leads our team now.", "lead is Oskar", "Ingrid"),
    ("I'm doing keto at the moment.", "Keto wasn't for me, I'm intermittent fasting now.", "at the moment",
     "intermittent"),
    ("My favourite TV show is The Office.", "Severance is my new favourite show.", "Office", "Severance"),
    ("I'm mostly vegan.", "I've started eating fish again, so pescatarian now I guess.", "mostly", "pescatarian"),
    ("You can call me on 0412 555 010.", "New phone, new number: 0412 555 999.", "555 010", "555 999"),
    ("Chess is my favourite game.", "These days my favourite game is Go, not chess.", "Chess is", " Go"),  # near
    ("Work mobile aside, my personal number is 0780 111 2222.", "My personal number changed to 0780 333 4444.",
     "111 2222", "333 4444"),
    ("my boss is called Gary", "gary got sacked, new boss is a woman named Priti", "called Gary", "Priti"),
    ("fav food is pizza", "new fav food is sushi tbh", "pizza", "sushi"),
    # a replacement said outright retires the value it names, of whatever kind that value is
    ("I commute in a Toyota Prius.", "I've swapped the Prius for an electric Polestar 2.", "Toyota", "Polestar"),
    ("My manager is Henrik Larsen.", "There was a reorg and now I report directly to Mette.", "Henrik", "Mette"),
    ("I work in marketing at Unilever.", "I accepted a position at L'Oreal and started on Monday.", "Unilever",
     "Oreal"),
    # what a replacement names is replaced, even where no frame reads it
    ("I have a 2015 Subaru Forester.", "I finally replaced the Subaru with a Rivian R1S.", "Forester", "Rivian"),
    # chat without a subject, a marker word inside, a title given to the speaker
    ("I drive an old Volvo estate.", "sold the volvo, driving a Kia Niro now", "old Volvo", "Kia"),
    ("My number is 07700 900123.", "new number btw: 07700 900456", "900123", "900456"),
    ("My job title is product designer.", "New title as of Monday: design manager.", "product", "design manager"),
    ("I'm a junior designer at a small agency.", "They made me art director last week, still can't believe it",
     "junior", "art director"),
    # said to an agent with a lead ("just so you know", "for your records"), after someone else's name or news
    ("I work at Corbel Analytics.", "Just so you know, I've been at Vantra Health since last month.",
     "Corbel", "Vantra"),
    ("My manager is Ruth Okoro.", "Lewis Grant took over as my manager in May.", "Ruth", "Lewis"),
    ("My husband is Tom Reyes.", "For your records: the divorce is final. My fiancé, Carl Moss, is my plus-one now.",
     "Tom", "Carl"),
    ("I'm seeing Mark.", "after the breakup i wasn't ready for anything but... i'm seeing someone?? her name's Leila",
     "Mark", "Leila"),
    # a car passed on to the speaker, an aside between dashes, a job said as what being one is like
    ("I drive a Nissan Micra.", "scrapped the micra... my cousin sold me her old Ford Fiesta", "Micra", "Fiesta"),
    ("I drive a VW Touran.", "We traded in the Touran - it had done 200k miles - and drove home a Skoda Kodiaq on "
     "Friday.", "Touran", "Kodiaq"),
    ("Being a teaching assistant is exhausting some days.", "I got promoted to class teacher this term.",
     "teaching assistant", "class teacher"),
    ("My email is jo.b@mailbox.org.", "Stopped using jo.b@mailbox.org ages ago, use jo@byrne.ie for everything from "
     "here on.", "mailbox.org", "jo@byrne.ie"),
    ("We live in Ashford.", "We finally finished unpacking after the move to Whitstable.", "Ashford", "Whitstable"),
    ("My favourite album is Blue.", "Listened to Hounds of Love last night. It's my new favourite album.", "Blue",
     "Hounds"),
    ("i'm 29", "it was my birthday on friday so i'm thirty now", "29", "thirty"),
    # an age said first or after the birthday; an address that holds chat shorthand ("rn"); a label with "here"
    ("31 and still can't cook, teach me pasta?", "Birthday party was on Saturday, 32 now and loving it.", "31", "32"),
    ("Drafts go to keira.m@gmail.com please.", "quick fix, its keira.rn@proton.me now not the gmail",
     "gmail", "keira.rn@proton.me"),
    ("pescatarian here, any easy dinners?", "I've gone vegan since April.", "pescatarian", "vegan"),
    # a favourite said with when, and overtaken as "number one"
    ("My favourite show at the moment is Slow Horses.", "Shrinking has overtaken Slow Horses as my number one.",
     "Slow Horses", "Shrinking"),
    # a phone named in passing as the speaker's; a new car said as "the new ..." beside the old one traded in
    ("My Galaxy S21 screen is cracked again.", "Got a Pixel 9 last week, loving it.", "S21", "Pixel"),
    ("I drive a 2012 Ford Focus.", "Finally swapped cars. The new Kia Niro is so quiet.", "Focus", "Niro"),
    # a manager said as "my boss's X"; the new one as "I report to him"
    ("My boss's Hannah Cole, she's great.", "Hannah moved teams, so Marcus Reid leads us now and I report to him.",
     "Hannah Cole", "Marcus"),
    # who the speaker is, said in passing before a remark to the assistant
    ("As a junior accountant I mostly do reconciliations, and your template helped a lot.",
     "I was promoted to senior accountant in May.", "junior", "senior"),
    # a title said outright; a promotion said as a label; a partner named after "someone"; an age said with "years
    # old" first; a number swapped on a form; a job said after a request's colon
    ("My title is Staff Accountant.", "Promotion came through: Finance Manager.", "Staff", "Finance Manager"),
    ("My girlfriend is Clara.", "These days I'm seeing someone new, Jonas, it's early days.", "Clara",
     "Jonas"),
    ("I'm 63.", "Birthday yesterday! 64 years old, and the grandkids baked.", "63", "64"),
    ("My mobile is 0412 555 019.", "Change the number on my profile for 0433 555 872 please.", "0412", "0433"),
    ("I work at Halden Bank.", "fix my bio: I'm at Corvid Labs now, started in June.", "Halden", "Corvid"),
    # a title said alone, from when, without "I"
    ("I'm a junior analyst at the moment.", "Got the news! Senior Analyst from Monday, can't quite believe it.",
     "junior", "Senior Analyst"),
    # a phone named in a question is the speaker's
    ("How do I free up space on my Galaxy S22?", "Switched to a Pixel 8 Pro last week.", "S22", "Pixel"),
    # a favourite said as a "place" takes the one kind of favourite the speaker has
    ("My favourite restaurant is Osteria Nove.", "My new favourite spot is Bar Lume, tiny but perfect.", "Osteria",
     "Lume"),
    # a home said as the reason for something, and as the new place unpacked in
    ("Since we live in Dundee, the winters feel long.", "We've unpacked the last boxes at our new place in Perth.",
     "Dundee", "Perth"),
]
COEXIST = [  # both statements stay current
    ("We live in Ripon.", "We keep talking about moving to Whitby one day, the kids love the beach."),
    ("My phone is an iPhone 13.", "bought my dad a pixel 8 for his birthday, he'll love it"),
    ("I've got a Galaxy A54.", "Just ordered an iPhone 15! It's for Maya's 16th birthday, shh."),
    ("My phone is an iPhone 14.", "My work phone is a Samsung Galaxy."),
    ("I live in Leeds.", "We sold our holiday flat in Whitby last month."),
    ("I drive a Ford Ranger.", "Our son-in-law Pete just bought himself a brand new Dodge Ram, shiny red."),
    ("My phone is a Pixel 8.", "I switched from Spotify to Apple Music."),
    ("My boss is Sarah.", "My old boss Tom called me yesterday about a job."),
    ("I live in Hobart.", "Just back from a fortnight living in a flat in Kyoto, I miss it already."),
    ("I work at Northwind Freight.", "Guess who got a job at Deloitte! My sister Amy, so proud."),
    ("My phone is a Pixel 7.", "Just bought a Galaxy S24 - it's for my son's birthday, he'll be thrilled."),
    ("I work at Halden Bank.", "We're off to Oslo next weekend, any tips?"),
    ("I live in Graz.", "My wife and I are doing a long weekend in Verona in May."),
    ("My phone is a Pixel 7.", "Just ordered a Galaxy S24! It's for my dad's birthday."),
    ("I'm allergic to kiwi.", "I'm also allergic to penicillin."),
    ("My sister works at Airbus.", "I work at Thales."),
    ("Last spring I went to Porto.", "In June I went to Seville."),
    ("I speak Italian.", "I speak some Korean too."),
    ("We have a dog called Pixel.", "We adopted a kitten named Miso."),
    ("I bought a new tent.", "I bought a kayak last weekend."),
    ("My number is 0655 443 322.", "My husband's number is 0611 002 233."),  # someone else's
    ("I drive a Yaris.", "I'm learning to drive a lorry."),  # an intention, not a state
    ("I'm vegetarian.", "I also made a dairy-free chocolate cake the other day!"),  # a dish, not a diet
    ("I'm vegan.", "I tried a vegan cheese at the market."),
    ("I live in Denver.", "I spent the weekend at my parents' place in Aspen."),  # a stay
    ("I'm vegetarian.", "I cooked a beef stew for my in-laws on Sunday."),  # for others
    ("My manager is Sofia.", "My mentor is Raj."),  # another role
    ("My boss is Raj.", "My boss's boss is Priyanka."),  # the boss's
    ("My ex-wife lives in Nice.", "I live in Antibes."),  # hers
    ("My email is me@li.dev.", "Our team inbox is team@li.dev."),  # the team's
    ("I drive a Tesla.", "I swapped my old bike for an e-scooter."),  # a replacement of nothing current
    ("I live in Denver.", "My office is in Boulder, about 40 minutes away."),  # where they work
    ("I live in Denver.", "We're thinking about moving to Portland someday."),  # a thought
    ("I'm a software engineer.", "I'm mentoring a junior designer this quarter."),  # someone else's role
    ("My phone number is 555 123 4567.", "My office line is 555 222 3333."),  # a work number
    ("I live in Ghent.", "We're considering a move to Leuven next year."),
    ("I'm lactose intolerant.", "I made a lactose-free ice cream for the party."),  # an intolerance accumulates
    ("I use a Pixel 8.", "I got my dad an iPhone for Christmas."),  # a gift
    ("I have an iPhone 14.", "I bought my mum a Samsung tablet."),  # parsed as two objects
    ("My number is 0700 123 456.", "My landlord's number is 0711 987 654."),  # whoever's it is
    ("My mum works at IKEA.", "I work at Spotify."),  # a relation the parser found no subject in
    ("I live in Oslo.", "We might move to Bergen one day."),  # a maybe
    ("I live in Leeds.", "My landlord is Ahmed."),  # someone the speaker knows, in a role
    ("My name is Lars.", "My husband is a guy called Pete."),  # his name, not the speaker's
    ("I drive a Golf.", "I'm driving to my mom's place now."),  # a trip, not a car
    ("I live in Paris.", "I left my umbrella in Paris."),  # a thing's whereabouts
    ("I live in Hamburg.", "I grew up in Munich."),  # where they grew up
    ("I live in Seattle.", "We're renting a cabin in Montana for August."),  # a stay
    ("I drive a Golf.", "My work van is a Ford Transit."),  # the work's
    ("my gran lives in Bath", "i live in Bristol"),  # a relation as chat says it
    ("My favourite food is ramen.", "Radiohead is my favourite band now."),  # favourites of two kinds
    ("I use lg@outlook.es for everything.", "Note also the address of my colleague Ander, is ander@navarra.es."),
    ("My mobile is 07912 384 551.", "Keep my dad's number too? It's 07845 226 019 - he's my emergency contact."),
    ("I'm vegetarian.", "My friend Nerea follows the keto diet now, so I need recipes we can both eat."),
    ("I drive a Honda Civic.", "My car is in the shop again, any rental tips?"),  # where it is, not which
    ("My phone is a Pixel 7.", "I ordered a Galaxy S24 for my sister's birthday."),  # for someone's occasion
    ("We live in Didsbury.", "Sometimes I wonder what would happen if we moved to Cornwall."),  # a what-if
    ("My title is Head of Sales.", "Please note that Marta Lopez has been appointed Chief Financial Officer."),
    ("I work at Aldermoor.", "I got an offer from Brightline Group and turned it down."),  # an offer not taken
    ("I live in Sale.", "my best mate Jonno just moved to Leeds for uni"),  # a mate's move
    ("I'm vegetarian.", "my housemate Kit went paleo and ate a whole chicken yesterday"),  # a meal is no diet
    ("I'm on an iPhone 13.", "My eldest got a Pixel 8 for her birthday from her aunt."),
    ("I'm pescatarian.", "I'm not going keto, whatever my brother says."),  # a denial of what never held
]


@pytest.mark.parametrize(("old", "new", "old_word", "new_word"), UPDATES)
def test_a_change_supersedes_the_old_value(api, user, old, new, old_word, new_word):
    converse(api, [("2024-03-01T10:00:00Z", old), ("2024-06-01T10:00:00Z", new)])
    live = current(api)
    assert any(new_word in text for text in live), live
    assert not any(old_word in text and new_word not in text for text in live), live
    retired = Memory.objects.get(owner=user, superseded_by__isnull=False)
    assert old_word in retired.content and retired.valid_to is not None
    successor = Memory.objects.get(pk=retired.superseded_by_id)
    assert successor.metadata["attribute"] and successor.metadata["value"]
    reason = successor.history.earliest("history_date").history_change_reason
    assert "UPDATE (" in reason and "frame cosine" in reason and str(retired.message_id) in reason


@pytest.mark.parametrize(("first", "second"), COEXIST)
def test_things_that_coexist_both_stay_current(api, user, first, second):
    converse(api, [("2024-03-01T10:00:00Z", first), ("2024-06-01T10:00:00Z", second)])
    assert not Memory.objects.filter(owner=user, superseded_by__isnull=False).exists()
    assert len(current(api)) == 2


@pytest.mark.parametrize(("old", "new", "gone", "kept"), [
    ("I'm in accounts at Pennine Freight.", "I've left Pennine Freight; Monday's my first day at Dalesway Housing.",
     "Pennine", "Dalesway"),
    ("I'm on the platform team at Zalando.", "Last Friday was my final day at Zalando; on Monday I start at N26.",
     "Zalando", "N26"),
    ("My girlfriend Lea and I have been together two years.",
     "Lea and I split up in the spring; I've been dating Nora since August.", "Lea", "Nora"),
    ("I work at Deloitte as an auditor.", "Handed in my notice at Deloitte; starting at KPMG on Monday.", "Deloitte",
     "KPMG"),
    ("My girlfriend Aoife and I are off to Spain.", "Aoife and I called it quits. I've been seeing Niamh since May.",
     "Aoife", "Niamh"),
    ("I'm dating Marco.", "Marco and I broke up. I'm with Elena now.", "Marco", "Elena"),
    ("My personal email is lena.h@fastmail.com.", "I've stopped using lena.h@fastmail.com; everything should go to "
     "lh@proton.me now.", "fastmail", "proton"),
    # the ending said after the new value
    ("What tyre pressure should my Toyota Yaris have?",
     "How often should I charge my new Nissan Leaf? Sold the Yaris last week.", "Yaris", "Leaf"),
])
def test_an_end_and_the_new_value_in_one_message_leave_only_the_new_one_current(api, user, old, new, gone, kept):
    # the second statement retires what the first one of the same message wrote
    converse(api, [("2024-02-12T10:00:00Z", old), ("2024-07-03T10:00:00Z", new)])
    live = current(api)
    assert [text for text in live if gone in text] == [] and any(kept in text for text in live), live
    assert Memory.objects.filter(owner=user, content__contains=gone, valid_to__isnull=False).count() == 2


@pytest.mark.parametrize("new", [
    "anyway, I went fully vegan in january. dairy was wrecking my stomach so it was kind of an easy call",
    "anyway, I went fully vegan in january. dairy was wrecking my stomach. oh and the new number is 0687 215 330",
])
def test_a_weaker_reading_later_in_the_same_message_does_not_replace_a_clear_one(api, user, new):
    # "dairy was wrecking my stomach" reads faintly as a diet: it stands beside the veganism the message said
    converse(api, [("2024-02-12T10:00:00Z", "i'm vegetarian, have been for like five years now"),
                   ("2024-07-03T10:00:00Z", new)])
    live = current(api)
    assert "The user went fully vegan in January 2024." in live and not any("vegetarian" in t for t in live), live


def test_splitting_from_one_partner_and_seeing_another_leaves_only_the_new_one_current(api, user):
    converse(api, [("2024-03-01T10:00:00Z", "My girlfriend Chloe and I have been together two years."),
                   ("2024-06-01T10:00:00Z", "Chloe and I split last month. I've started seeing Amira.")])
    live = current(api)
    assert any("Amira" in text for text in live) and not any("Chloe" in text for text in live), live
    assert Memory.objects.filter(owner=user, content__contains="girlfriend Chloe", valid_to__isnull=False).exists()


def test_a_fact_about_someone_else_said_beside_the_users_own_keeps_its_holder(api, user):
    converse(api, [("2024-03-01T10:00:00Z", "I'm a software engineer at Shopify and my wife is a doctor."),
                   ("2024-06-01T10:00:00Z", "My wife got a job at a clinic in town.")])  # where, not what she is
    live = current(api)
    assert "The user is a software engineer at Shopify." in live and "The user's wife is a doctor." in live
    assert not Memory.objects.filter(owner=user, superseded_by__isnull=False).exists()


@pytest.mark.parametrize("earlier", ["I worked at Renault before that.", "I left my old job at Renault in May."])
def test_an_ended_value_beside_the_current_one_is_its_past(api, user, earlier):
    converse(api, [("2024-03-01T10:00:00Z", "I work at Valeo."), ("2024-06-01T10:00:00Z", earlier)])
    assert [text for text in current(api) if "Renault" in text] == []
    past = Memory.objects.get(owner=user, content__contains="Renault")
    valeo = Memory.objects.get(owner=user, content__contains="Valeo")
    assert past.superseded_by_id == valeo.pk and past.valid_to is not None and valeo.superseded_by_id is None


def test_a_hand_written_memory_is_superseded_by_a_later_statement(api, user):
    written = api.post("/api/memories/", {"content": "Lives in Bordeaux"}, format="json").json()
    converse(api, [("2030-01-01T10:00:00Z", "We've relocated to Strasbourg for good.")])
    assert "Lives in Bordeaux" not in current(api)
    old = Memory.objects.get(pk=written["id"])
    assert old.superseded_by.content.startswith("The user") and "Strasbourg" in old.superseded_by.content


def test_an_older_statement_enters_the_chain_as_the_past(api, user):
    conversation = converse(api, [("2024-05-01T10:00:00Z", "I live in Nantes.")])
    converse(api, [("2023-01-10T10:00:00Z", "I live in Toulouse.")], conversation)  # an import, dated earlier
    live = current(api)
    assert any("Nantes" in text for text in live) and not any("Toulouse" in text for text in live)
    past = Memory.objects.get(owner=user, content__contains="Toulouse")
    assert past.valid_to is not None and "Nantes" in past.superseded_by.content


def test_the_same_restriction_said_twice_is_one_memory(api, user):
    converse(api, [("2024-03-01T10:00:00Z", "I'm allergic to sesame."),
                   ("2024-04-01T10:00:00Z", "Just so you know, I am allergic to sesame.")])
    assert len([text for text in current(api) if "sesame" in text]) == 1


def test_reverting_an_automatic_supersession_restores_the_old_memory(api, user):
    converse(api, [("2024-03-01T10:00:00Z", "I work at Decathlon."),
                   ("2024-06-01T10:00:00Z", "I joined Michelin this week.")])
    old = Memory.objects.get(owner=user, content__contains="Decathlon")
    assert old.superseded_by_id is not None
    versions = api.get(f"/api/memories/{old.pk}/history/").json()
    before = next(v for v in versions if v["action"] != "SUPERSEDE")
    response = api.post(f"/api/memories/{old.pk}/revert/", {"version": before["version"]}, format="json")
    assert response.status_code == 200, response.content
    old.refresh_from_db()
    assert old.superseded_by_id is None and old.valid_to is None
    assert any("Decathlon" in text for text in current(api))


def test_another_holder_never_supersedes_the_speaker(user):
    memory_services.memory_create(owner=user, content="The user works at Bosch.", subject="user")
    from extraction import Candidate
    from extraction.attributes import statement_frames
    from memories.reconcile import memories_reconcile

    [decision] = memories_reconcile(
        owner=user, reason="test", frames=statement_frames,
        candidates=[Candidate(content="The user's brother works at Siemens.", category="fact", subject="user")])
    assert decision.action == "ADD" and decision.memory.metadata["frames"][0]["holder"] == "brother"
    assert Memory.objects.filter(owner=user, superseded_by__isnull=True).count() == 2


def test_a_statement_that_ends_the_old_value_joins_the_past(api, user):
    converse(api, [("2024-01-15T10:00:00Z", "I'm a pharmacist at Boots."),
                   ("2024-08-20T10:00:00Z", "I joined Walgreens as a store manager. I quit Boots in June.")])
    live = current(api)
    assert any("Walgreens" in text for text in live), live
    assert not any("Boots" in text and "Walgreens" not in text for text in live), live
    quit_ = Memory.objects.get(owner=user, content__contains="quit")
    assert quit_.superseded_by_id is not None and quit_.valid_to is not None


def test_an_ending_that_names_another_attributes_value_ends_it(api, user):
    """"I've left St Mary's" read as another attribute than "a nurse at St Mary's Hospital" still ends it."""
    converse(api, [("2024-03-01T10:00:00Z", "I'm a nurse at St Mary's Hospital."),
                   ("2024-06-01T10:00:00Z", "I've left St Mary's; I'm at the Royal Free now.")])
    retired = Memory.objects.get(owner=user, superseded_by__isnull=False, content__contains="Hospital")
    assert retired.valid_to is not None
    assert "ended" in Memory.objects.get(pk=retired.superseded_by_id).history.earliest(
        "history_date").history_change_reason
    # the ending is of the employer, so the new employer retires it in turn: no current line names St Mary's
    assert not any("St Mary" in text for text in current(api)), current(api)


def test_an_ending_read_as_another_attribute_is_recorded_as_the_one_it_ends(api, user):
    written = api.post("/api/memories/", {"content": "Lives in Paris"}, format="json").json()
    converse(api, [("2030-01-01T10:00:00Z", "We left Paris in the spring.")])  # its frame alone: a visit ended
    successor = Memory.objects.get(pk=written["id"]).superseded_by
    reason = successor.history.earliest("history_date").history_change_reason
    assert "home: paris ended" in reason and "visit" not in reason, reason


def test_a_new_partner_retires_the_ending_that_names_the_old_one(api, user):
    converse(api, [("2024-03-01T10:00:00Z", "I'm married to Paul."),
                   ("2024-06-01T10:00:00Z", "Paul and I are divorced now, I'm with Kenji")])
    live = current(api)
    assert any("Kenji" in text for text in live) and not any("Paul" in text for text in live), live


def test_what_a_superseded_memory_says_of_another_attribute_still_holds(api, user):
    converse(api, [("2024-03-01T10:00:00Z", "We relocated to Porto for a job at Farfetch."),
                   ("2024-06-01T10:00:00Z", "I work for Critical Software now.")])
    live = current(api)
    assert any("Critical Software" in text for text in live) and not any("Farfetch" in text for text in live), live
    kept = Memory.objects.get(owner=user, content="The user lives in Porto.")
    old = Memory.objects.get(owner=user, superseded_by__isnull=False)
    assert kept.valid_from == old.valid_from and kept.message_id == old.message_id  # as of when it was said
    assert "still holds" in kept.history.earliest("history_date").history_change_reason


def test_a_fact_the_new_statement_ends_is_not_kept(api, user):
    converse(api, [("2024-03-01T10:00:00Z", "I'm a pharmacist at Boots in Leeds."),
                   ("2024-06-01T10:00:00Z", "I quit Boots, I'm a locum pharmacist now.")])
    live = current(api)
    assert "The user quit Boots." in live and not any("works at Boots" in text for text in live), live


def test_the_replaced_value_read_as_another_attribute_too_is_not_kept(api, user):
    converse(api, [("2024-03-01T10:00:00Z", "I'm a student at Trinity College Dublin."),
                   ("2024-06-01T10:00:00Z", "I'm studying at UCD now.")])
    assert not any("Trinity" in text for text in current(api)), current(api)


def test_a_relationship_status_that_changes_with_the_same_partner_is_an_update(api, user):
    converse(api, [("2024-03-01T10:00:00Z", "I'm engaged to Mateo."),
                   ("2024-09-01T10:00:00Z", "Mateo and I got married last weekend!")])
    live = current(api)
    assert any("married" in text for text in live) and not any("engaged" in text for text in live), live


def test_a_favourite_that_overtakes_another_takes_its_place(api, user):
    converse(api, [("2024-03-01T10:00:00Z", "Pho is my favourite food."),
                   ("2024-06-01T10:00:00Z", "Lately tacos have overtaken pho as my favourite.")])
    live = current(api)
    assert any("tacos" in text.lower() for text in live) and not any(
        text.lower().startswith("pho is") for text in live), live


def test_a_thing_replaced_after_what_happened_to_it_is_superseded(api, user):
    converse(api, [("2024-03-01T10:00:00Z", "I drive a Ford Fiesta."),
                   ("2024-06-01T10:00:00Z", "the fiesta got stolen, replaced it with a Kia Picanto")])
    live = current(api)
    assert any("Picanto" in text for text in live) and not any("drives a Ford Fiesta" in text for text in live), live


def test_a_running_count_said_anew_supersedes_the_old_count(api, user):
    converse(api, [("2024-03-01T10:00:00Z", "I've already read four books by Le Guin."),
                   ("2024-06-01T10:00:00Z", "I've read six books by Le Guin so far.")])
    live = current(api)
    assert any("six books" in text for text in live) and not any("four books" in text for text in live), live
    history = Memory.objects.get(owner=user, content__contains="four books").history.first()
    assert "the same count, now six (was four)" in history.history_change_reason


def test_counts_of_events_on_their_own_days_coexist(api, user):
    converse(api, [("2024-03-01T10:00:00Z", "I swam 20 lengths today."),
                   ("2024-03-02T10:00:00Z", "I swam 30 lengths today, so far my best.")])
    assert len(current(api)) == 2, current(api)


def test_running_counts_of_different_things_coexist(api, user):
    converse(api, [("2024-03-01T10:00:00Z", "I've run 3 marathons so far."),
                   ("2024-06-01T10:00:00Z", "I've run 5 half marathons so far.")])
    assert len(current(api)) == 2, current(api)


def test_what_the_speaker_does_not_eat_stands_beside_their_diet(api, user):
    converse(api, [("2024-03-01T10:00:00Z", "I don't eat meat and I don't eat fish, I am vegetarian since long time.")])
    assert not Memory.objects.filter(owner=user, superseded_by__isnull=False).exists()
    assert len(current(api)) == 2


def test_a_sale_said_before_the_new_value_goes_to_the_past_with_the_old_one(api, user):
    converse(api, [("2024-03-01T10:00:00Z", "I drive a 2012 Ford Focus."),
                   ("2024-06-01T10:00:00Z", "Sold the old Focus last month. The new Kia Niro is so quiet.")])
    live = current(api)
    assert any("Niro" in text for text in live) and not any("Focus" in text for text in live), live
    retired = list(Memory.objects.filter(owner=user, superseded_by__isnull=False))
    assert len(retired) == 2 and all(m.valid_to and "Niro" in m.superseded_by.content for m in retired)


def test_a_sale_of_something_else_stays_beside_the_new_value(api, user):
    converse(api, [("2024-03-01T10:00:00Z", "I drive a Honda Jazz."),
                   ("2024-06-01T10:00:00Z", "Sold my old bike to a neighbour. Now I drive a Kia Niro.")])
    live = current(api)
    assert any("bike" in text for text in live) and not any("Jazz" in text for text in live), live


def test_a_number_said_to_be_someone_elses_retires_nothing(api, user):
    converse(api, [("2024-02-01T10:00:00Z", "My number's 085 931 4072."),
                   ("2024-07-01T10:00:00Z", "Number for the rota is 086 447 2210, that's Gary from the mobile team.")])
    assert current(api) == ["The user's phone number is 085 931 4072."]


def test_what_the_speaker_switched_from_is_the_past(api, user):
    converse(api, [("2024-02-01T10:00:00Z", "How do I take a screenshot on my Galaxy S21?"),
                   ("2024-07-01T10:00:00Z", "How do I screenshot on my new iPhone 15? I switched from Android.")])
    assert current(api) == ["The user's phone is an iPhone 15."]


def test_the_name_a_speaker_introduces_themselves_by_is_no_partner(api, user):
    converse(api, [("2024-02-01T10:00:00Z", "Hi! I'm Maya, I live in Denver and love hiking."),
                   ("2024-07-01T10:00:00Z", "My partner Sam is a chef.")])
    assert not Memory.objects.filter(owner=user, superseded_by__isnull=False).exists()
    assert any("Maya" in text for text in current(api))


def test_a_breakup_named_by_first_name_ends_the_partner_named_in_full(api, user):
    converse(api, [("2024-02-01T10:00:00Z", "me and my bf Jonah Reyes have been together 8 months now"),
                   ("2024-07-01T10:00:00Z", "Jonah and I broke up in April, it was mutual.")])
    live = current(api)
    assert any("broke up" in text for text in live) and not any("together" in text for text in live), live


def test_a_new_boss_said_as_it_after_the_old_one_is_the_manager(api, user):
    converse(api, [("2024-03-01T10:00:00Z", "My line manager is Dana Fox."),
                   ("2024-06-01T10:00:00Z",
                    "Dana isn't my manager any more. Since the restructure it's Ms Priya Shah.")])
    live = current(api)
    assert any("Priya Shah" in text for text in live) and not any("Dana" in text for text in live), live
