"""A chat message as the parser reads it best: shorthand spelt out (never inside an address), labels and pronouns
read as what they stand for, who a "guess who" names."""

import pytest

from extraction.chat_text import normalise


@pytest.mark.parametrize(("text", "read"), [
    # shorthand, but not inside an e-mail address
    ("doing keto rn", "doing keto now"),
    ("its jo.rn@fastmail.com now", "its jo.rn@fastmail.com now"),
    # who the speaker is, said as a label
    ("pescatarian here, any quick dinners?", "I'm pescatarian, any quick dinners?"),
    ("Paramedic here - what should I pack?", "I'm a paramedic - what should I pack?"),
    ("Sarah here, hi!", "Sarah here, hi!"),
    ("It's cold here.", "It's cold here."),
    # an age said after the birthday
    ("Birthday was on Sunday, 40 now and fine with it.", "Birthday was on Sunday. I'm 40 now and fine with it."),
    # a favourite said with when, or as "number one"
    ("My favourite game right now is Go.", "My favourite game is Go."),
    ("Go has overtaken chess as my number one.", "Go has overtaken chess as my favourite."),
    ("Sleep is my number one priority.", "Sleep is my number one priority."),
    # to whom "him" or "her" is, the last one named before
    ("Ana left, so Tom Reyes runs the team and I report to him.",
     "Ana left, so Tom Reyes runs the team and I report to Tom Reyes."),
    # a reason said first is a statement of its own
    ("Since I live in Oulu, winters are long.", "I live in Oulu. winters are long."),
    ("Since I was a kid, I've loved jazz.", "Since I was a kid, I've loved jazz."),
    # "my manager's Priya": is, before a name said alone; a possessive before anything else
    ("My manager's Priya Nair, she's lovely.", "My manager is Priya Nair, she's lovely."),
    ("My manager's Tesla is red.", "My manager's Tesla is red."),
    # a first week said done
    ("First week done at Kestrel Labs, so tired.", "I finished my first week at Kestrel Labs, so tired."),
    # the new one of a change the message speaks of
    ("Sold the old Golf. The new Kia Niro is quiet.", "Sold the old Golf. My new Kia Niro is quiet."),
    ("The new Kia Niro looks nice.", "The new Kia Niro looks nice."),
    # an aside in which the speaker says something of their own stands alone; any other stays
    ("Tips please (I'm in Turku, by the sea).", "Tips please. I'm in Turku, by the sea. "),
    ("Tips please (the old ones failed).", "Tips please (the old ones failed)."),
    # a gift said after a dash; a value said after a dash or a colon; a promotion said as a label
    ("Bought a Pixel 9 - it's for my dad.", "Bought a Pixel 9 for my dad."),
    ("Use my new title - Head of Data.", "Use my new title. My title is now Head of Data."),
    ("Promotion on Monday: Lead Engineer.", "I was promoted on Monday to Lead Engineer."),
    # an address said as the one the speaker uses
    ("Put jo@posteo.de as the contact - that's the address I use for work.",
     "Put jo@posteo.de as the contact - that's the address I use for work. My email is jo@posteo.de."),
    # who "we" are, said after
    ("We split up in June, Ana and I.", "Ana and I split up in June."),
    # a gift said in the next sentence; the new boss said as "it" after the old one
    ("Just bought a kettle! It's for my sister.", "Just bought a kettle for my sister."),
    ("Ana isn't my boss anymore. Now it's Mr Tom Reyes.", "Ana isn't my boss anymore. Now my boss is Mr Tom Reyes."),
    ("Depute head from August!", "I'm depute head from August!"),
    # a title said alone, from when; a place so is no title
    ("Senior Buyer from Monday, wow.", "I'm Senior Buyer from Monday, wow."),
    ("Paris from Tuesday!", "Paris from Tuesday!"),
    # someone, named after a comma
    ("I'm seeing someone now, Mira, and she's lovely.", "I'm seeing someone now named Mira, and she's lovely."),
    # fragments and idioms of a change
    ("Home is Melbourne for me.", "Home is Melbourne."),
    ("Top film for me is Heat.", "my favourite film is Heat."),
    ("Thirty-three today!", "I'm Thirty-three today!"),
    ("I got promoted - Lead UX Researcher now!", "I got promoted to Lead UX Researcher now!"),
    ("Caved and bought an iPhone 15, bye Samsung.", "Caved and bought an iPhone 15."),
    ("The Mazda got written off, so now it's a Hyundai i30.",
     "The Mazda got written off, so now my car is a Hyundai i30."),
    # a move given as the reason for a request
    ("Need a gym recommendation since we moved to Brighton.", "Need a gym recommendation. we moved to Brighton."),
    # what "it" is, said before: a favourite
    ("Recommend something like The Office - it's my favourite show.",
     "Recommend something like The Office - The Office is my favourite show."),
    # a diet said after a dash is a fragment of its own
    ("I don't eat meat - vegetarian since college.", "I don't eat meat. vegetarian since college."),
    ("Cooking tonight - vegan recipes please", "Cooking tonight - vegan recipes please"),
    # an age said as "as a N-year-old" about now; a new title or manager said as a change
    ("As a 27-year-old I should know how to cook.", "I'm 27 years old and I should know how to cook."),
    ("As a 5-year-old I loved trains.", "As a 5-year-old I loved trains."),
    ("My title changed to Analytics Manager.", "my title is now Analytics Manager."),
    ("We got a new manager this week, Grace Kim, so Oliver is out.",
     "my new manager is Grace Kim this week, so Oliver is out."),
    # a first day said with when
    ("First day at Revolut tomorrow, wish me luck!", "I start at Revolut tomorrow, wish me luck!"),
    ("First day at school today", "First day at school today"),
    # an address said as "I'm ... now"; an age after "so"
    ("I'm ray.h@gmail.com now, use that.", "my email is ray.h@gmail.com now, use that."),
    ("Birthday was Tuesday, so 33 now.", "Birthday was Tuesday. I'm 33 now."),
    # a couple's ending, said as an idiom
    ("Ciarán and I called it a day in April.", "Ciarán and I broke up in April."),
    ("Aoife and I called it quits in May.", "Aoife and I broke up in May."),
    ("We went our separate ways.", "We broke up."),
    # texting shorthand; a doubt about having said it before goes
    ("idk if i told u but im a dad now", "I'm a dad now"),
    ("pls call me tmrw", "please call me tomorrow"),
    # a month typed in lower case after "since"/"in"; "may" as a verb stays
    ("vegan since may, no regrets", "I'm vegan since May, no regrets"),
    ("I may be vegan", "I may be vegan"),
    # ages said at a birthday: after a colon, "officially", "the big ..."
    ("Birthday yesterday: 51! Cake was great.", "Birthday yesterday. I'm 51 now! Cake was great."),
    ("birthday was friday, officially 30", "birthday was Friday. I'm 30 now"),
    ("they took me out for the big fifty", "they took me out for my birthday. I'm fifty now"),
    ("big 5-0 on sunday, send help", "I turned 50 on Sunday, send help"),
    ("Feliz aniversário to me, 45 years old today!", "Feliz aniversário to me, I'm 45 years old today!"),
    ("Birthday party on Saturday: 3 pm start", "Birthday party on Saturday: 3 pm start"),
    ("Honestly, at 52 I'm slower.", "Honestly, I'm 52 now and I'm slower."),
    ("at 10 I'm off to bed", "at 10 I'm off to bed"),
    # what someone helped the speaker get is theirs
    ("my uncle helped me get a used Fiat Panda", "I got a used Fiat Panda"),
    # what a change was to, said in the next sentence
    ("Finally upgraded! Pixel 9 from the outlet.", "Finally upgraded to Pixel 9 from the outlet."),
    # a department at an employer; whom they report to, said as a cleft; a number after what came with it
    ("I'm in payroll at Dunmore Foods.", "I work in payroll at Dunmore Foods."),
    ("Since June it's Omar Haddad I report to.", "Since June I report to Omar Haddad."),
    ("New SIM, new number: 0871 223 9090.", "new number: 0871 223 9090."),
    # "it's" an address or a number once the message calls one theirs, unless someone else's came first
    ("Fix my email please - its kai.b@posteo.de now.", "Fix my email please - my email is kai.b@posteo.de now."),
    ("Note my number? It's 0871 555 1234.", "Note my number? my number is 0871 555 1234."),
    ("Save my sister's number. It's 0871 555 1234.", "Save my sister's number. It's 0871 555 1234."),
    # "here in X" in news of a move is the new home
    ("We've unpacked at last, the garden here in Malton is huge.",
     "We've unpacked at last, the garden here in Malton is huge. I live in Malton now."),
    # ... and "we're in X now", "it's X now instead of Y" after one
    ("Moved out of Ripon at last, we're in Thirsk now.", "Moved out of Ripon at last, we live in Thirsk now."),
    ("The move is done, so it's Bonn now instead of Cologne.", "The move is done, so I moved from Cologne to Bonn."),
    ("We're in Bonn now for the match.", "We're in Bonn now for the match."),
    # moved, said as "shifted"; chat's "outta"; "RN" is a nurse, "rn" is now
    ("I shifted to Mysuru in March.", "I moved to Mysuru in March."),
    ("The meeting shifted to Monday.", "The meeting shifted to Monday."),
    ("Finally moved outta Hull.", "Finally moved out of Hull."),
    ("I'm an RN on nights rn", "I'm an RN on nights now"),
    # a correction's preamble and a request after a comma come apart from the news
    ("A quick correction to what I told you last week: pescatarian now, not vegan.", "I'm pescatarian now, not vegan."),
    ("I live in Tralee, so pls plan routes from there.", "I live in Tralee. So please plan routes from there."),
    # a couple that ended things, a first week that went well, a team one is part of, "my X now is"
    ("Dev and I ended things in May.", "Dev and I broke up in May."),
    ("First week at Halden Bank went great!", "I finished my first week at Halden Bank!"),
    ("I'm officially part of the Corran Health team now.", "I work at Corran Health now."),
    ("My girlfriend now is Ivy.", "My girlfriend is now Ivy."),
    ("From Monday I'm on the staff at Brook Lane Academy.", "From Monday I work at Brook Lane Academy."),
    ("Since May my weekend work is with Hartley Events.", "Since May I work at Hartley Events."),
    # a car chosen or taken is got
    ("The Fiesta died, so I've gone for a used Kia Picanto.", "The Fiesta died, so I got a used Kia Picanto."),
    ("We sold the Clio and took a Dacia Sandero.", "We sold the Clio and got a Dacia Sandero."),
    ("Took a new Kia EV6 out for a spin today.", "Took a new Kia EV6 out for a spin today."),
    # a household's favourite is not the speaker's alone; an apology to the old favourite says which it replaced
    ("Favourite song in this house is Tiny Dancer.", "our family's favourite song is Tiny Dancer."),
    ("Since the trip my favourite is Gruyère, sorry Cheddar.",
     "Since the trip Gruyère has overtaken Cheddar as my favourite."),
    # where the speaker is based and how old they are, each a statement of its own
    ("I'm a data analyst, based in Leeds, mostly on dashboards.",
     "I'm a data analyst. I'm based in Leeds, mostly on dashboards."),
    ("Doing the life insurance form, I'm 44 if they ask.", "Doing the life insurance form. I'm 44 if they ask."),
    ("Things with Rory fizzled out in June.", "I broke up with Rory in June."),
    ("Mark me down as vegetarian for the dinner.", "I'm vegetarian for the dinner."),
    # a diet said as what the household or "it" is now
    ("No more milk, no more honey, so it's fully vegan now.",
     "No more milk, no more honey. So I'm fully vegan now."),
    ("GP's advice after my bloods: vegetarian from now on.",
     "GP's advice after my bloods: I'm vegetarian from now on."),
    # what the speaker has now, said alone after what they traded
    ("Sold the old Polo. A second-hand Skoda Fabia now, cheaper to run.",
     "Sold the old Polo. My car is a second-hand Skoda Fabia now, cheaper to run."),
    ("My son stopped eating meat so the whole family went vegetarian.",
     "My son stopped eating meat so we went vegetarian."),
    # a request run on without stops, and where they live said as the reason for one
    ("we got the keys today can you find me a removal van", "we got the keys today. can you find me a removal van"),
    ("any good dentists nearby cos we live in Hove now", "any good dentists nearby. we live in Hove now"),
    ("New sim so my number changed, its 0612 448 907 now.",
     "New sim so my number changed, my number is 0612 448 907 now."),
])
def test_chat_is_read_as_it_is_meant(text, read):
    assert normalise(text) == read


@pytest.mark.parametrize(("text", "read"), [
    ("Guess who got a job at Airbus! My brother Leo, so proud.", "My brother Leo got a job at Airbus! My brother Leo"),
    ("Guess who just got promoted!", "I just got promoted!"),
])
def test_guess_who_is_whom_the_next_sentence_names_else_the_speaker(text, read):
    assert normalise(text).startswith(read)
