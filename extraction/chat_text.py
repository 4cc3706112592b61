"""A chat message as the parser reads it best (`normalise`): plain quotes, contractions and chat shorthand spelt
out, a label or a pronoun read as what it stands for ("vegetarian here", "I report to him"), an emoji between
sentences as a full stop, places and names typed in lower case capitalised."""

from __future__ import annotations

import re

from core import calendar_words
from extraction import ages, jobs, moves, nlp, possessions
from extraction.ages import AGE
from extraction.attribute_kinds import FAVOURITE_WORDS, MAKES, ROLES
from extraction.moves import CAPITALISED as _CAPITALISED
from extraction.possessions import MAKE_WORDS, OTHERS_NUMBER
from extraction.retold import retold
from extraction.slots import DIETS, EMAIL, OCCUPATIONS, PHONE, RELATIONS
from extraction.talk import EMOJI, NAME_AFTER, TITLE_WORDS


def normalise(text: str) -> str:
    """A chat message as the parser reads it best: plain quotes, contractions and chat abbreviations spelt out, an
    emoji between sentences as a full stop, places and names typed in lower case capitalised."""
    text = text.replace("\u2019", "'").replace("\u2018", "'").replace("\u201c", '"').replace("\u201d", '"')
    # "my car's a Mini", "Jake's my ex": no possessive comes before an article or another possessive: "is"; but a
    # shop's name after a preposition keeps its "'s" ("at Sainsbury's the whole day")
    text = _IS_CONTRACTED.sub(lambda m: m[0] if m["before"] else f"{m['word']} is {m['next']}", text)
    text = re.sub(r"(?i)\b(new|my|mobile|cell|phone|work|home) no\.?\s*(?=[+(\d])", r"\1 number ", text)
    # "My email's a@b.com": is, before an address
    text = re.sub(r"(?i)\b(my e-?mail)'s (?=[\w.+\-]+@)", r"\1 is ", text)
    text = re.sub(r"\batm\b", "at the moment", text)  # chat's "atm" (the parser reads a cash machine)
    text = _SHORTHAND_WORD.sub(lambda m: m[0] if m[0] == "RN" else SHORTHAND[m[0].lower()], text)  # a nurse
    text = _LABEL_HERE.sub(_label_here, text)
    # "Small correction to what I told you earlier: ...": what follows is the news
    text = re.sub(r"(?i)(^|[.!?]\s+)(?:a )?(?:small |quick |slight )?(?:correction|update)(?: to| on| about) "
                  r"(?:what|something) I (?:told|said to|mentioned to) you(?: [\w ]{1,30}?)?\s*[:\-\u2013\u2014]\s*"
                  r"(?P<next>\w?)",
                  lambda m: m[1] + m["next"].upper(), text)
    # "fully vegan since June": a diet said without "I"
    text = re.sub(rf"(?i)(^|[.!?:]\s+)(?=(?:(?:fully|strictly|mostly|now|officially) )?(?:{DIETS}) (?:since|now|these "
                  rf"days|for)\b)(?P<first>\w)", lambda m: f"{m[1]}I'm {m['first'].lower()}", text)
    # "I shifted to Hubballi last week": moved, as Indian English says it
    text = re.sub(rf"(?i)\bshift(ed|ing)? (?:house )?to (?=(?!(?:{'|'.join(_DAYS)})\b)(?-i:[A-Z]))",
                  lambda m: "moved to " if m[1] == "ed" else "moving to " if m[1] else "move to ", text)
    text = retold(text)
    # "I live in Wollongbar, so pls set reminders for 5:30": the request, a sentence of its own
    text = re.sub(r"(?i)(?<=\w),\s+so (?=(?:please|pls|kindly|can you|could you|can u|could u)\b)", ". So ", text)
    # "... for us now chur can you find me a swimming class": a request run on without punctuation (voice typing)
    text = re.sub(r"(?<=[a-z])(?: (?:so|and|but|or|also))? (?=(?:[Cc]an|[Cc]ould) (?:you|u) )", ". ", text)
    # "I'm product manager, based in Rennes, working on the app": where they are based, a statement of its own
    text = re.sub(r"\b(I'm|I am) ([^,.!?;]{2,40}), based in (?=(?-i:[A-Z]))", r"\1 \2. I'm based in ",
                  text)
    # "so I've gone for a second-hand Skoda Octavia": what the speaker chose, got
    text = re.sub(rf"(?i)\b(?:(?P<who>I|we)(?:'ve| have) )?(?:(?:gone|went|opted) for|took|chose) "
                  rf"(?=an? (?:[\w-]+ ){{0,3}}(?:{MAKE_WORDS})\b)",
                  lambda m: m[0] if _TRIED.match(m.string, m.end()) else f"{m['who'] or ''} got ".lstrip(), text)
    # "so my dad helped me get a used Yaris": what the speaker got, with help
    text = re.sub(r"(?i)\b(?:(?:my|our) \w+|he|she|they|(?-i:[A-Z][a-z]+)) (?:kindly |finally )?helped me (?:to )?"
                  r"(?P<verb>get|buy|find|pick out|choose)\b",
                  lambda m: "I " + {"get": "got", "buy": "bought", "find": "found", "pick out": "picked out",
                                    "choose": "chose"}[m["verb"].lower()], text)
    # "correction on my email - ... its maya@proton.me now": the address it is, once the message calls it theirs
    if re.search(r"(?i)\bmy (?:new |personal |main )?e-?mail\b|\b(?:personal|private) (?:e-?)?mail\b", text):
        text = re.sub(r"(?i)(?:^|(?<=[^\w\s]\s))(?:its|it's|it is) (?=[\w.+\-]+@[\w\-]+\.)",
                      "my email is ", text)
    text = moves.said(text)
    # "Aoife and I called it quits", "we went our separate ways": a couple that broke up
    text = re.sub(r"\b(?P<who>(?:[A-Z][^\W\d_]+ and I|[Ww]e|[Mm]e and [A-Z][^\W\d_]+)(?:'ve| have)?"
                  r"(?: finally| officially)?) "
                  r"(?:call(?:ed)? it (?:quits|a day)|(?:went|gone) our separate ways|ended (?:things|it))\b",
                  r"\g<who> broke up", text)
    # "idk if i told u but they made me supervisor": the news, without the doubt about having said it
    text = re.sub(r"(?i)\b(?:I don't know|not sure|dunno) if I (?:told|mentioned|said)(?: (?:this|it))?(?: to)?"
                  r"(?: you)?(?: already)?(?:,? but)?,?\s+(?=\w)", "", text)
    # "(Context: I'm in Leipzig, flat in Plagwitz.)": an aside in which the speaker says something of their own
    text = re.sub(r"\s*\((?P<inner>[^()]{3,300}?)[.!]?\)\s*(?P<end>[.!?]*)",
                  lambda m: f". {m['inner']}{m['end'] or '.'} " if _FIRST_PERSON.search(m["inner"]) else m[0], text)
    # "Just bought an iPhone 15 - it's for Mira's birthday": what was bought, for whom
    text = re.sub(r"(?:\s+[-\u2013\u2014]|[.!]+)\s+(?:[Ii]t's|[Ii]t is|[Tt]hey're|[Tt]hey are|[Tt]hat's) (?=for\b)",
                  " ", text)
    # "Fiona isn't my boss anymore. Now it's Mr Alasdair Rennie": the new one, said as "it"
    text = re.sub(rf"(?i)(?P<pre>\b(?:isn't|is not|is no longer|'s no longer|not) my (?:\w+ )?(?P<role>{_ROLE_WORDS})\b"
                  r"[^.!?]*[.!?;,]\s+[^.!?]*?)\bit(?:'s| is) (?=(?-i:(?:Mr|Mrs|Ms|Dr|Prof)\.? )?(?-i:[A-Z][a-z]+))",
                  r"\g<pre>my \g<role> is ", text)
    # "to my new title - Senior Platform Engineer", "my new role: Head of Data": the value, said
    text = re.sub(r"(?i)\bmy new (title|role|position|job title)\s*[-\u2013\u2014:]\s*(?=(?-i:[A-Z]))",
                  r"my new \1. My \1 is now ", text)
    # "Promotion last week: Design Director": what the speaker was promoted to
    text = re.sub(r"(?im)(?:^|(?<=[.!?]\s))(?:got (?:a |the |my )?)?promot(?:ion|ed)(?P<when>(?: \w+){0,3}?)"
                  r"\s*[:\-\u2013\u2014]\s*(?=[A-Z])", r"I was promoted\g<when> to ", text)
    # "We separated in the spring, Ines and I.": who "we" are, said after
    text = re.sub(r"(?:^|(?<=[.!?]\s))[Ww]e (?P<rest>[^.!?]{3,80}?),\s*"
                  r"(?P<who>[A-Z][^\W\d_]+ and (?:I|me))(?=\s*[.!?])",
                  r"\g<who> \g<rest>", text)
    # "put dan@posteo.de as the contact - that's the address I use": the speaker's address
    text = re.sub(rf"(?i)(?P<v>{EMAIL})(?P<rest>[^.!?]{{0,40}}?\s*[-\u2013\u2014,;]\s*that(?:'s| is) (?:the|my) "
                  r"(?:e-?mail )?(?:address|e-?mail|one) I (?:use|check|prefer)\b[^.!?]*[.!?]?)",
                  r"\g<v>\g<rest> My email is \g<v>.",
                  text)
    # "Clinical Nurse Manager 1 from Monday!": a title said alone, from when
    text = _TITLE_FROM.sub(_title_from, text)
    # "I'm seeing someone now, Mira": someone, named
    text = re.sub(r"(?i)\b(someone|somebody)( new)?( now)?, (?=(?-i:[A-Z][a-z]+)\b)",
                  r"\1\2\3 named ", text)
    # "Traded in the old Pilot. The new Subaru Outback is easier on fuel": the new one of a change is the speaker's
    if re.search(r"(?i)\b(?:the old|traded|sold|swapped|replaced|got rid of|gave up)\b", text):
        text = re.sub(r"(?:^|(?<=[.!?]\s))The new (?=[A-Z])", "My new ", text)
        # "Traded in the old Civic. A used Subaru Outback now, ...": what it is now
        text = re.sub(rf"(?:^|(?<=[.!?]\s))An? (?=(?:(?:new|used|second-hand|secondhand) )?"
                      rf"(?P<make>(?i:{MAKE_WORDS}))\b[^.!?,]{{0,30}}? now\b)",
                      lambda m: "My car is a " if m["make"].lower() in MAKES["car"] else "My phone is a ", text)
    text = jobs.said(text)
    # "tax return came through so upgraded to a Pixel 8": the change is the speaker's
    text = re.sub(r"(?i)(?:(?<=,)|(?<=\w))\s+so\s+(?=(?:just |finally |then )?(?:upgraded|switched|moved|bought|traded|"
                  r"swapped|changed|joined|started|picked up|got|signed|went)\b)", " so I ", text)
    # "finally upgraded!! samsung galaxy s23 from the refurb shop": what to, said in the next sentence
    text = re.sub(rf"(?i)\b(?P<verb>upgraded|switched|changed phones|changed cars|treated myself)\s*[!.]+\s+"
                  rf"(?P<what>(?:(?:a|an|the|new|shiny|used|second-hand|refurbished) )*(?:{MAKE_WORDS})\b)",
                  r"\g<verb> to \g<what>", text)
    # "quit brewhaus, been at the tillerman bookshop since june": where the speaker has been since, a statement
    text = re.sub(r"(?i)(?<=\w)\s*,\s+(?:and )?(?=been (?:at|with|working|living|in|on|based)\b)", ". I've ", text)
    # "New SIM, new number: 07700 900652": the label after what came with it
    text = re.sub(r"(?im)(?:^|(?<=[.!?]\s))new (?:sim|phone|contract|provider|network),\s+"
                  r"(?=new (?:number|mobile)\b)", "",
                  text)
    # "I'm officially Senior Finance Officer!" after "so after three years of doing the job anyway": the news
    text = re.sub(r"(?i)\bso after [^.!?,;]{3,60}? (?=I'm (?:now |officially |finally )?(?-i:[A-Z]))", "so ", text)
    # "X has overtaken Y as my number one": a favourite ("my number one priority" is no favourite)
    text = re.sub(r"(?i)\b(my (?:new |all-time )?)(?:number one|no\.? ?1|#1)(?=\s*(?:[,.;!?]|$|now\b|these days\b))",
                  r"\1favourite", text)
    # "favourite band at the moment is X": the favourite, without when (it is now)
    text = re.sub(rf"(?i)\b((?:{'|'.join(FAVOURITE_WORDS)}) [\w\- ]{{1,30}}?),? (?:at the moment|right now|these days|"
                  r"currently|lately|for now|nowadays|this (?:year|month|week|season)),? (is|are)\b", r"\1 \2", text)
    # "fav band = the war on drugs", "new mgr = tanya ruiz": a value typed as an equation; "old # is dead"
    text = re.sub(r"(?<=\w)\s*=\s*(?=\w)", " is ", text)
    text = re.sub(r"(?<=\w )#(?=\s|$)", "number", text)
    text = re.sub(r"(?<=\w) \+ (?=\w)", " and ", text)  # "me + jenna done"
    # what follows from someone else's news, said of the speaker: "Sipho has transferred, which means I now report
    # to Annelie" (a sentence of its own); a note in brackets about someone just named: "with Renata (she's my
    # manager now)"
    text = re.sub(r",\s*which means (?:that )?(?=(?:I|I'm|I've|we|my)\b)", ". ", text)
    text = re.sub(r"(?P<name>\b[A-Z][a-z]+(?: [A-Z][a-z]+)?)\s*\((?:she|he)(?:'s| is) (?P<rest>[^)]*)\)",
                  r"\g<name>; \g<name> is \g<rest>;", text)
    text = re.sub(r"(?i)(^|[.!?]\s+)from now(?: on)?\b,?", r"\1Now", text)  # "From now (on) I am ...": now
    text = ages.said(text)
    # "... changed numbers. It's 0491 570 159 now": the number said as "it"
    # (someone else's number said before it is theirs: "my dad's number ... It's 07845 226 019")
    if re.search(r"(?i)\b(?:number|phone|mobile|cell)s?\b", text):
        text = re.sub(rf"(?i)\bit(?:'s| is|s) (?=(?:now )?{PHONE})",
                      lambda m: m[0] if OTHERS_NUMBER.search(m.string[:m.start()]) else "my number is ", text)
    text = possessions.said(text)
    # a possessive typed without its apostrophe: "my sons favourite book", "my wifes new car"
    text = _OWNER_UNMARKED.sub(r"\g<owner>'s ", text)
    # a salutation to the assistant: "Dear assistant, I am employed ..."
    text = re.sub(r"(?i)^(?:dear|hi|hello|hey) (?:assistant|bot|chatgpt|claude|ai|there)\s*[,!:.]\s*", "", text)
    # "first week at Monzo done!": the speaker's first week there
    text = re.sub(r"(?i)(^|[.!?]\s+)(?:my )?(first|1st) (?:full )?(day|week|month)(?P<at> at (?-i:[A-Z][\w&'.\-]*"
                  r"(?: [A-Z][\w&'.\-]*)*) (?:is )?(?:done|over|complete|finished|survived|down"
                  r"|went (?:fine|well|great|ok|okay|smoothly|alright))\b"
                  r"| (?:is )?(?:done|over|complete|finished|survived|down) at "
                  r"(?-i:[A-Z][\w&'.\-]*(?: [A-Z][\w&'.\-]*)*))",
                  lambda m: f"{m[1]}I finished my first {m[3]} at {_ORG_IN.search(m['at'])[0]}", text)
    # "I don't eat meat - vegetarian since college": a fragment of its own after a dash
    text = re.sub(rf"(?i)\s+[-\u2013\u2014]+\s+(?={_WHOLLY}(?:{DIETS})\b"
                  r"(?! (?:food|option|restaurant|recipe|dish|meal)s?\b))", ". ", text)
    # "Need a new gym since we moved to Brighton": the move, a statement of its own after a request
    text = re.sub(r"(?i)(?<=\w)\s*,?\s+(?:since|because|as|now that) (?=(?:we|I)(?:'ve| have)? "
                  r"(?:just |recently |finally )?(?:moved|relocated)\b)", ". ", text)
    # "can you check the roadworks tonight because we live out in Papakura": where they live, said as a reason
    text = re.sub(r"(?i)(?<=\w)\s*,?\s+because (?=(?:we|I)(?:'re|'m| are| am)? (?:live|living|work|working|drive|"
                  r"driving)\b)", ". ", text)
    # "Caved and bought an iPhone 15, bye Samsung": a farewell after the news, no chatter that hides it
    text = re.sub(r"(?i)\s*,\s*(?:bye(?: bye)?|goodbye|so long|farewell)\s+(?:old |my )?(?-i:[A-Z])[\w'-]*"
                  r"(?: (?-i:[A-Z0-9])[\w'-]*)*\s*(?=[.!?]|$)", "", text)
    # "The Mazda got written off, so now it's a Hyundai i30": "it" is the speaker's car (or phone) after one named
    text = re.sub(rf"(?i)(?P<pre>\b(?:{MAKE_WORDS})\b[^?]*?\b(?:so |and )?(?:now )?)it(?:'s| is) (?:now )?"
                  rf"(?=an? (?:new |used )?"
                  rf"(?P<make>{MAKE_WORDS})\b)",
                  lambda m: m["pre"] + ("my car is " if m["make"].lower() in MAKES["car"] else "my phone is "), text)
    # "I got promoted - Lead UX Researcher now!": to what
    text = re.sub(r"(?i)\b(promoted|bumped up)\s*[-\u2013\u2014:,]\s*(?=(?-i:[A-Z])[\w-]*(?: [\w-]+){0,4} now\b)",
                  r"\1 to ", text)
    # "I'm ray.h@gmail.com now": the speaker's address
    text = re.sub(r"\bI(?:'m| am) (?:now )?(?=[\w.+\-]+@[\w\-]+\.)", "my email is ", text)
    # "Home is Melbourne for me": whose home is said already
    text = re.sub(r"(?i)\b(home is (?-i:[A-Z])[\w'-]*(?: (?-i:[A-Z])[\w'-]*)*) for (?:me|us)\b", r"\1", text)
    # "Top film for me is Heat": a favourite
    text = re.sub(r"(?i)\b(?:my )?top (\w+) for me is\b", r"my favourite \1 is", text)
    # "Thirty-three today!": an age said alone, in words
    text = re.sub(rf"(?:^|(?<=[.!?]\s))(?P<n>(?i:(?=[a-z]){AGE}))(?= (?:today|now|yesterday)\b)", r"I'm \g<n>", text)
    # "my title changed to Analytics Manager", "We got a new manager this week, Grace Kim": the new value
    text = re.sub(r"(?i)\bmy (?:job )?(title|role|position) (?:has )?(?:changed|switched) to\b", r"my \1 is now", text)
    text = re.sub(r"(?i)\b(?:we|I) (?:got|have|'ve got|have got) a new (?P<role>(?:line )?manager|boss|supervisor)"
                  r"(?P<when>[^,.!?]{0,30}),\s+(?P<name>(?-i:[A-Z][a-z]+(?: [A-Z][a-z]+)?))",
                  r"my new \g<role> is \g<name>\g<when>", text)
    # "First day at Revolut tomorrow!": where the speaker starts, and when
    text = re.sub(r"(?i)(^|[.!?]\s+)(?:my )?(?:first|1st) day at (?P<org>(?-i:[A-Z][\w&'.\-]*(?: [A-Z][\w&'.\-]*)*)) "
                  r"(?:is )?(?P<when>tomorrow|today|on \w+day|next \w+|this \w+day)\b",
                  lambda m: f"{m[1]}I start at {m['org']} {m['when']}", text)
    # "Since I live in Kelowna, flights are limited": what the speaker says of themselves, apart from what follows
    text = re.sub(r"(?i)(^|[.!?]\s+)(?:since|as|because|given that|now that) (?=(?:I|I'm|I've|we|we're|we've) "
                  r"(?!(?:was|were|said|mentioned|told|did|had)\b))([^,.!?;]+)[,;]\s*", r"\1\2. ", text)
    # "My manager's Priya Nair, she's super chill": is, before a name said alone
    text = re.sub(rf"(?i)\b(my (?:\w+ )?(?:{'|'.join(sorted(RELATIONS, key=len, reverse=True))}))'s "
                  r"(?=(?-i:[A-Z][a-z]+(?: [A-Z][a-z]+)?)\s*(?:[,.;!]|$|now\b|these days\b))", r"\1 is ", text)
    # "things ended with Marcus in March", "things with Hamish fizzled out": a break-up
    text = re.sub(r"(?i)\b(?:things|it) (?:(?:ended|fizzled out|(?:is|was|'s) over) (?:with|between) "
                  r"(?P<who>(?-i:[A-Z])[a-z]+)(?: and (?:me|I))?|with (?P<with>(?-i:[A-Z])[a-z]+) (?:ended|fizzled out|"
                  r"(?:is|was|'s) over|didn't work out))\b", lambda m: f"I broke up with {m['who'] or m['with']}", text)
    # "put me down as vegan": a diet said for a form
    text = re.sub(rf"(?i)\b(?:put|mark|list|sign) me (?:down |up )?as (?=(?:an? )?(?:{DIETS})\b)", "I'm ", text)
    # "my girl stopped eating meat so the whole house went vegetarian": the household, the speaker with them
    text = re.sub(rf"(?i)\bthe (?:whole )?(?:house|household|family)(?: has)? (?:went|gone|is|turned) "
                  rf"(?=(?:{DIETS})\b)", "we went ", text)
    # "Doctor's orders: fully vegan from now on": the speaker's diet, said alone
    text = re.sub(rf"(?i)(^|[:.!?]\s+)(?={_WHOLLY}(?:{DIETS}) "
                  r"(?:from now on|from today|now)\b)", r"\1I'm ", text)
    # "no more cheese, no more eggs, so it's fully vegan now": the speaker's diet, said as what it is now
    text = re.sub(rf"(?i)[,;]\s*so (?:it's|it is|its) (?={_WHOLLY}(?:{DIETS}) now\b)",
                  ". So I'm ", text)
    # "Guess who got a job at Kinross! My brother Josh, ...": whom the next sentence names; else the speaker
    text = re.sub(rf"(?i)(^|[.!?]\s+)guess who\b(?P<rest>[^.!?]*[.!?]+\s+)(?P<who>(?-i:My) (?:{'|'.join(RELATIONS)})"
                  r"(?: (?-i:[A-Z][a-z]+))?|(?-i:[A-Z][a-z]+(?: [A-Z][a-z]+)?))(?=\s*[,!.]|\s+(?:is|was)\b)",
                  lambda m: f"{m[1]}{m['who']}{m['rest']}{m['who']}", text)
    # "guess who got promoted!": the speaker did
    text = re.sub(r"(?i)(^|[.!?]\s+)guess who(?:'s| is)\b", r"\1I'm", text)
    text = re.sub(r"(?i)(^|[.!?]\s+)guess who (?=\w+(?:ed|ot|ew|ought)\b|just\b|finally\b)", r"\1I ", text)
    # "officially part of the Harlow Valley Health family now", "on the staff at Hollins Park": where the speaker works
    text = re.sub(r"\bI(?:'m| am) (?:now |officially |finally )*(?:(?:a )?part of the (?P<org>(?-i:[A-Z])[\w&'-]*"
                  r"(?: (?-i:[A-Z])[\w&'-]*)*) (?:family|team|crew|squad)\b|on the staff (?:at|of) (?=(?-i:[A-Z])))",
                  lambda m: f"I work at {m['org'] or ''}", text)
    # "favourite film in this house is Frozen": the household's, not the speaker's alone
    text = re.sub(r"(?i)\b(?:my |our )?(favourite|fave?) (\w+) in (?:this|our|the) (?:house|household|family|home)\b",
                  lambda m: f"our family's {m[1].lower()} {m[2]}", text)
    # "my favourite is Beaufort, sorry Comté": the favourite, without the apology to the old one
    text = re.sub(rf"(?i)\bmy (?P<what>(?:new )?favou?rite(?: \w+)?) is (?:now )?(?P<new>{_CAPITALISED}),\s*sorry,?\s+"
                  rf"(?P<old>{_CAPITALISED})(?=\s*[.!]|$)",
                  r"\g<new> has overtaken \g<old> as my \g<what>", text)
    # "since June my evening RA work is with Tarangini Labs": where the speaker works
    text = re.sub(r"\bmy (?:[\w-]+ ){0,3}(?:work|job) (?:is|has been) (?:now )?(?:with|at|for) (?=(?-i:[A-Z]))",
                  "I work at ", text)
    # "My boyfriend now is Theo": is now
    text = re.sub(rf"(?i)\b(my (?:\w+ )?(?:{_ROLE_WORDS}|car|phone|email|number|title|job|diet|favourite \w+))"
                  r" now is\b", r"\1 is now", text)
    # "Being a lab assistant is stressful": the speaker is one
    text = re.sub(r"(?i)(^|[.!?]\s+)(?:being|working as) (an?) ((?:[\w-]+ ){0,6}?[\w-]+) (is|means|has been|was|can be|"
                  r"gets|feels|makes)\b", r"\1I'm \2 \3. It \4", text)
    # "they told me I'm a senior analyst as of the first": the speaker is one
    text = re.sub(r"(?i)\b(?:they|he|she|hr|(?:my|the) \w+) (?:told|informed) me (?:that )?(?=I(?:'m| am)\b)", "", text)
    # "Watched Salt and Static last weekend. It's my new favourite film.": the work named just before
    text = _IT_FAVOURITE.sub(lambda m: f"{m['before']}{m['name']} is ", text)
    # "In my capacity as Chief Operating Officer, I will chair ...": the speaker is one
    text = re.sub(r"(?i)\bin my (?:capacity|role|position) as (?P<title>[^,.;]{2,60}),\s*", r"I'm \g<title>. ", text)
    # "seeing someone?? her name's Ines": someone, Ines
    text = re.sub(r"(?i)\b(someone|somebody)(?: new)?[?!.]*\s+(?:her|his|their) name(?:'s| is) (?=(?-i:[A-Z]))",
                  r"\1, ", text)
    text = NAME_AFTER.sub(r"\g<who>\g<mid> named \g<name>", text)
    text = nlp.capitalise_names(nlp.capitalise_places(EMOJI.sub(_emoji_end, text)))
    # "since may", "in march": the month (a bare "may" or "march" is a verb)
    text = re.sub(r"\b(?P<pre>(?:since|until|till|early|late) |(?:in|last|this|next|from|by|of) (?=(?:may|march)"
                  r"\s*(?:[.,!?;]|$|\d|and\b|btw\b)))(?P<month>may|march)\b",
                  lambda m: m["pre"] + m["month"].capitalize(), text)
    # a day typed in lower case is a day ("got the keys on friday"); "may" and "march" may be words
    return _LOWER_DAY.sub(lambda m: m[0].capitalize(), text)


_IT_FAVOURITE = re.compile(
    r"(?P<before>\b(?i:watched|rewatched|read|reread|saw|heard|listened to|played|finished|discovered|tried|found|"
    r"something like|similar to)"  # "Recommend something like The Office - it's my favourite show"
    r"\s+(?P<name>[A-Z][\w'-]*"
    r"(?: (?:[A-Z][\w'-]*|of|and|the|a|in|on|to))*)[^.!?]*?(?:[.!]+\s+|\s+[-\u2013\u2014]\s+))[Ii]t(?:'s| is) "
    r"(?=my (?:new |current |absolute |all-time )?"
    r"(?:fav|favourite|favorite|top)\b)")
# "took a brand new Volvo XC40 out": a drive, not a car of one's own
_TRIED = re.compile(r"[^.!?]{0,40}?\b(?:out|for a (?:spin|drive|test drive|test))\b")
# chat shorthand the parser does not know, spelt out; "gf" and "bf" are read as they are
SHORTHAND = {"mgr": "manager", "bday": "birthday", "wk": "week", "wks": "weeks", "rn": "now",
             "yday": "yesterday", "b/c": "because", "bc": "because", "idk": "I don't know", "u": "you", "ur": "your",
             "pls": "please", "plz": "please", "tmrw": "tomorrow", "dw": "don't worry", "im": "I'm", "ive": "I've",
             "dont": "don't", "didnt": "didn't", "cant": "can't", "doesnt": "doesn't", "isnt": "isn't",
             "theyre": "they're", "hes": "he's", "shes": "she's", "thats": "that's", "whats": "what's",
             "outta": "out of", "cos": "because", "coz": "because", "cuz": "because"}
# never inside an address: "aoifebrennan.rn@outlook.ie" keeps its "rn"
_SHORTHAND_WORD = re.compile(rf"(?i)(?<![\w/.@])(?:{'|'.join(map(re.escape, SHORTHAND))})(?![\w/@]|\.\w)")
_DAYS = [d for d in (*calendar_words.WEEKDAYS, *calendar_words.MONTHS) if d not in ("may", "march")]
_LOWER_DAY = re.compile(rf"\b(?:{'|'.join(_DAYS)})s?\b")
_OWNER_UNMARKED = re.compile(
    rf"(?i)\b(?P<owner>(?:my|our) (?:{'|'.join(sorted(RELATIONS, key=len, reverse=True))}))s "
    rf"(?=(?:{'|'.join(FAVOURITE_WORDS)}|new|old|current|own|first|car|phone|number|email|job|boss|school|house|"
    r"flat|birthday|name)\b)")


# "vegetarian here, no fish either", "Nurse here - quick question": who the speaker is, said as a label
_LABEL_HERE = re.compile(r"(?im)(?:^|(?<=[.!?]\s))(?:(?:just |another |fellow )?(?P<a>an? )?)?"
                         r"(?P<w>(?:[\w\-]+ ){0,2}(?P<last>[\w\-]+)) here(?=\s*(?:[,.!;:]|-\s|$))")


_TITLE_FROM = re.compile(r"(?:^|(?<=[.!?]\s))(?P<t>[A-Z][\w\-]*(?:\s+[\w\-]+){0,4}?\s+(?P<last>[A-Za-z]+)(?: \d)?)\s+"
                         r"(?=(?i:from|starting|as of) (?i:next|tomorrow|today|the \d|\d|"
                         rf"{'|'.join((*calendar_words.WEEKDAYS, *calendar_words.MONTHS))}))")
_WHOLLY = r"(?:fully |strictly |completely |mostly |100% )?"  # how wholly a diet is kept: "fully vegan"
_ROLE_WORDS = "|".join(sorted(ROLES, key=len, reverse=True))  # the roles that are an attribute of the speaker's
_FIRST_PERSON = re.compile(r"(?i)\b(?:I|I'm|I've|my|we|we're|we've|our)\b")
_ORG_IN = re.compile(r"(?<= at )[A-Z][\w&'.\-]*(?: [A-Z][\w&'.\-]*)*")
def _title_from(match: re.Match) -> str:
    last = match["last"].lower()
    # a title of two words or more whose last names a job: "Senior Buyer", "Team Lead", "Nurse Manager 1"
    titled = len(match["t"].split()) > 1 and not _FIRST_PERSON.search(match["t"]) and (
        last in OCCUPATIONS | TITLE_WORDS or re.search(r"(?:er|or|ist|ian)$", last))
    # a title said in lower case after its first word is a title, not a name ("Depute head")
    title = match["t"] if all(w[:1].isupper() or w.isdigit() for w in match["t"].split()) else match["t"].lower()
    return f"I'm {title} " if titled else match[0]


def _label_here(match: re.Match) -> str:
    last = match["last"].lower()
    if re.fullmatch(rf"(?:{DIETS})", last, re.IGNORECASE):
        return f"I'm {match['w'].lower()}"
    if last in OCCUPATIONS:
        return f"I'm {match['a'] or 'a '}{match['w'].lower()}"
    return match[0]


def _emoji_end(match: re.Match) -> str:
    """An emoji or emoticon between two stretches of words ends a sentence ("vegan now :( any snacks?"); at either
    end of the text, or after a full stop, it is dropped."""
    before, after = match.string[:match.start()].rstrip(), match.string[match.end():]
    if not before or not re.search(r"\w", after) or before[-1] in ".!?,;:":
        return " " if before and re.search(r"\w", after) else ""
    return ". "


_IS_CONTRACTED = re.compile(
    r"(?P<before>(?i:\b(?:at|to|from|in|near|by|of|for|with|into|outside|inside) ))?"
    r"\b(?!(?i:it|that|what|there|here|he|she|who|where|let|how)')(?P<word>[A-Za-z]+)'s "
    r"(?P<next>a|an|the|my|our|your|his|her|their|over|dead|history|gone(?=\s*(?:[,.;!]|$)))\b")
