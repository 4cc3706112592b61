"""How people talk in a chat, as the dialogue extractor reads it: greetings and interjections at the front of a
sentence, vocatives, questions, thanks and sign-offs, remarks to the other person, pronoun-led comments,
opinions about what was said, evaluative tails, and the words that carry no content of their own."""

from __future__ import annotations

import re

from core import calendar_words
from extraction import nlp
from extraction.naming import PERSON_WORDS

EMOJI = re.compile(r"[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F\u200D]+|(?<!\w)(?::-?[)(DPp/]|;-?\)|<3|xD)(?!\w)")
MARKER = re.compile(
    r"^(?:(?:hey|hi|hello|hiya|yo|wow|whoa|woah|oh|ooh|ah|aw+|yeah|yea|yes|yep|yup|no(?!\s+(?:longer|more)\b)|nope|nah|sure|ok|okay|"
    r"alright|cool|awesome|great|nice|sweet|amazing|haha+|hehe|lol|lmao|omg|well|so|and|but|also|anyway|anyways|"
    r"actually|honestly|btw|by the way|guess what|you know what|you know|thanks|thank you|thx|definitely|totally|"
    r"absolutely|right|true|indeed|exactly|of course|for sure|no worries|gosh|man|dude|hm+|um+|uh+|oh no|"
    r"congrats|congratulations|same here|me too|to be honest|tbh|ngl|fyi|plus|yay|whew|phew|ha|oops|welp|sounds good|"
    r"sounds great|good to hear|glad to hear|as for me|speaking of which|on another note|for context)"
    r"(?:\s+(?:so much|a lot|a ton|again|too|there))?(?:\s*,?\s+(?!I\b)[A-Z][a-z]+(?=\s*[,!.:;\-]|$))?"
    # an adjective before a word modifies it ("Sweet peas are my favourite flower"): a marker only with punctuation
    r"(?:\s*[,:;!.\-\u2013\u2014]+\s*|(?<!sweet)(?<!nice)(?<!great)(?<!cool)(?<!amazing)(?<!awesome)\s+(?=[A-Za-z]))"
    r"|$)", re.IGNORECASE)
# a name said to someone, not one the speaker describes next ("Gloria, my supervisor at the CU, said ...")
VOCATIVE = re.compile(r"^(?P<w>[A-Z][a-z]+)\s*[,!]\s+(?!(?:my|our)\b[^,.!?]{1,40},)(?=\S)")
TRAILING_VOCATIVE = re.compile(r"(?<![A-Z][a-z])(?<![A-Z][a-z]{2})(?<!\b(?:in|to|at)),\s+[A-Z][a-z]+\s*([.!]*)$")
# a place said before a trailing name, which names it: "at a startup, Pitch", "for a private clinic, Bupa"
NAMED_PLACE = re.compile(
    r"(?i)\b(?:at|for|with|from|to|in|joined)\s+(?:a|an|the|this|my|our)\s+(?:[\w-]+\s+){0,2}[\w-]+$")
# someone said before a trailing name, which names them: "seeing someone new, Ben"
NAMED_PERSON = re.compile(rf"(?i)\b(?:someone|somebody|a (?:new )?(?:{'|'.join(PERSON_WORDS)}))(?: new)?$")
EXPLICIT = re.compile(
    r"(?i)^(?:(?:(?:can|could|would|will) you|i (?:want|need|would like|'d like) you to|make sure (?:you|to)|"
    r"be sure to|try to|please|kindly|always|pls|just)\s+)*"
    r"(?:remember|memori[sz]e|don't forget|do not forget|never forget|note|take note|make a note|keep in mind|"
    r"bear in mind|for future reference|for the record|update my (?:profile|details|info)|add to my profile|"
    # what an agent is told to keep: "for your records, ...", "just so you know, ...", "heads up: ..."
    r"for your (?:records?|information|files?|notes?|reference)|so you know|(?:a )?heads[- ]up|"
    r"(?:a )?(?:quick|small|little) (?:update|note|correction)|update your (?:notes|records|files|memory))"
    r"(?:\s+this|\s+the fact)?(?:\s*(?:that\b|:|,|-)\s*|\s+(?=(?:i|i'm|i've|im|my|our|we|the)\b))(?P<rest>.+)$")
QUESTION = re.compile(
    r"(?i)^(?:(?:please|pls|plz) )?(?:what|who|whom|whose|why|how|which|wanna|any idea|i wonder|i was wondering|"
    r"wondering|tell me|remind me|explain|help me|"
    r"(?:do|does|did|can|could|would|will|should|shall|is|are|am|was|were|have|has|may|might|"
    r"isn't|aren't|doesn't|didn't|won't|wouldn't|couldn't|shouldn't|ever)\s+(?:you|u|i|we|they|he|she|it|that|"
    r"this|there|your|anyone|anybody|someone|ya))\b")
CHATTER = re.compile(
    r"(?i)^(?:thanks?|thank|thx|congrat\w*|good luck|don't worry|no worries|best of luck|sorry|bye|goodbye|"
    r"see ya|see you|take care|"
    r"talk (?:soon|later|to you)|chat (?:soon|later)|catch you|have a (?:good|great|nice)|enjoy|welcome|cheers|"
    r"good (?:morning|night|evening|afternoon)|hope|wishing|sending|thinking of (?:you|u)|praying|rooting for|"
    r"cheering (?:for|you)|missing (?:you|u)|keep (?:it up|up|going|at it|me posted)|let me know|"
    r"long time no see|nice to|good to|great to|glad|so glad|can't wait to (?:see|hear|catch)|same|ditto|"
    r"looking forward to (?:it|seeing|hearing|catching)|i'm here for|count me in|you|your|let's|lets|let us)\b"
    r"|check (?:it|this|that|the|these|those|out)|look at|take a look|here's|here is|see this"
    r"|(?:i'm|i am|i was) (?:so |really |just |super )?(?:glad|happy|thrilled|relieved) (?:that|it|to hear|to see|we|"
    r"for|about)\b"
    r"|(?:i'm|i am) sure\b|i(?:'d| would)? (?:suggest|recommend)\b")
YOU = re.compile(r"(?i)\b(?:you|your|yours|yourself|u|ur|ya|y'all|you've|you're|you'll|you'd)\b")
YOU_PHRASES = (
    re.compile(r"(?i)\bI(?:'m| am) (?:so |really |super )?(?:excited|happy|glad|thrilled|proud|stoked) to (?:tell|"
               r"share with|show|let) you(?: know)?(?: that| about)?\s*"),
    re.compile(r"(?i)(?:\bI )?(?:(?:just|really) )?\b(?:wanted|want|have|had|need|needed|got) to (?:tell|show|let) you"
               r"(?: know)?"
               r"(?: that| about)?\s*"),
    re.compile(r"(?i)\b(?<!let )(?:you know|ya know|you see|mind you|believe me|trust me|if you ask me|as you know|"
               r"like you said|as you said|let me tell you|thanks? (?:you )?for asking),?\s*"),
    re.compile(r"(?i)\b(?:guess what|you won't believe (?:it|this|what happened))[,!:.]?\s*"),
    # a statement announced before it is made: "I ought to mention that I have since left Ludlow", "You may recall
    # that I was treasurer; well, ..."
    re.compile(r"(?i)(?:^|(?<=[,;]\s))(?:I|we) (?:really |just )?(?:ought to|should|must|have to|need to|want to|"
               r"wanted to|'d like to|would like to) (?:mention|say|add|note|point out|tell you|let you know)"
               r"(?: that)?,?\s*"),
    re.compile(r"(?i)(?:^|(?<=[,;]\s))(?:as )?you (?:may|might|will|probably) (?:recall|remember|know)"
               r"(?: that)?,?\s*"),
    # what the fact is for, said to the assistant: "..., in case you need it for parking bookings", "if you need it"
    re.compile(r"(?i),?\s*(?:just )?(?:in case|if) you (?:ever )?need (?:it|that|them|this|to know)\b[^.!?;]*"),
    # a feeling said before the news: "Rather to my astonishment, the hospice has made me deputy shop manager"
    re.compile(r"(?i)^(?:rather |much |quite )?to (?:my|our) (?:great |utter |complete )?(?:astonishment|surprise|"
               r"delight|amazement|horror|relief|dismay|disbelief),?\s*"),
)
# "They bumped me up to senior accountant", "she hired me last week": said of the speaker, as "I got bumped up ..."
DONE_TO_ME = re.compile(r"(?i)^(?:they|he|she|(?:my|our|the) (?:boss|manager|company|firm|board|team)|the \w+(?<!s))"
                        r"(?:'ve|'s)? (?:has |have )?(?:just |finally |officially )?(?P<verb>\w+ed|made|named) me"
                        r"(?P<rest>\b.*)$")
# what "made me" a person who does something is: a role ("a loan processor"), not "a cake"
ROLE_NOUN = re.compile(r"(?i) an? (?:\w+ ){0,2}\w{3,}(?:er|or|ist|ian|ant|ent|ee)\b")
# a label said bare in chat, of the speaker's: "New title as of Monday: design manager", "Home is a flat in Leeds"
NEW_LABEL = re.compile(r"(?i)^(?:my )?(?P<new>new|current) (?P<what>[a-z](?:(?! (?:is|was|are|has)\b)[a-z ]){1,25}?)"
                       r"(?P<when> (?:as of|from|since|starting) [^:]{1,25})?"
                       # a number or an address needs no colon: "new number 0151 555 0199"
                       r"(?:\s*[:\u2013\u2014]\s*|\s+(?=[+(\d]|\S+@))(?P<value>[\w+(].*)$")
# a heading before a colon: "Quick context: I'm based in Tampere", "role: Associate Product Manager"
LABEL = re.compile(r"^(?P<label>[A-Za-z][\w' -]{1,40}?)\s*:\s+(?P<rest>\S.*)$")
# what a heading names when it is one of the speaker's attributes, its value after the colon
LABEL_ATTRIBUTE = re.compile(r"(?i)\b(?:role|title|job|position|employer|company|address|city|number|mobile|phone|"
                             r"cell|e-?mail|diet|age|car|favou?rite|fave?|manager|boss|partner)\b")
# a contact detail said as "the new one", of the speaker's: "the new number is 0687 215 330", "the new email is ..."
NEW_CONTACT = re.compile(r"(?i)^the (?P<new>new) (?P<what>(?:(?:phone|mobile|cell|work|home) )?number|mobile|landline|"
                         r"e-?mail(?: address)?|address)(?P<when>) is (?P<value>[\w+(].*)$")
# "bye bye Panda, hello Tesla": one thing given up for another
SWAP = re.compile(r"(?i)^(?:bye(?:\s*bye)?|goodbye|farewell|so long|rip)\s+(?P<old>[^,;.!]+?)"
                  r"\s*[,;.!\-\u2013\u2014]+\s*(?:and\s+)?(?:hello|hi|welcome)\s+(?P<new>\w.*)$")
# "Home (for us) is a flat in Leeds", "Home these days is Oslo": the speaker's home, said with "home" as subject
HOME_IS = re.compile(r"(?i)^home(?: for (?:me|us|the (?:two|three|four|five) of us|my family|the family))?"
                     r"(?:,? (?:these days|nowadays|right now|at the moment|for now|now),?)?(?:'s| is) "
                     r"(?P<rest>(?:(?:now|currently|still|these days) )?"
                     r"(?:(?:a|an|in|near|outside|just)\b|(?-i:[A-Z])).*)$")
# "Bristol's home these days", "Ljubljana is where we live now": a place named as the speaker's home
PLACE_IS_HOME = re.compile(r"^(?P<place>[A-Z][\w'.-]*(?: (?:[A-Z][\w'.-]*|de|del|la|le|upon|on))*)(?:'s| is) "
                           r"(?:(?:now|still|officially|finally) )?(?:(?:my|our) )?"
                           r"(?:home(?! to\b)|where (?:I|we)(?:'m| am|'re| are)? "
                           r"(?:live|living|based|call home|settled))\b"
                           r"(?P<rest>.*)$")
_NOW_END = re.compile(r"\s+now(?=\W*$)")  # "is home now": a statement of now needs no "now"


def home_said(sentence: str) -> str | None:
    """A home said with "home" or the place as subject, as the speaker's statement: "Home for us is Leeds now" ->
    "I live in Leeds", "Home is a flat in Leeds" -> "My home is a flat in Leeds"; None when it says none."""
    if home := HOME_IS.match(sentence):
        rest = home["rest"]
        place = re.match(r"(?:(?:now|currently|still|these days) )?(?=[A-Z])", rest)
        return f"I live in {_NOW_END.sub('', rest[place.end():])}" if place else f"My home is {rest}"
    if home := PLACE_IS_HOME.match(sentence):
        return f"I live in {home['place']}{_NOW_END.sub('', home['rest'])}"
    return None


# "seeing someone new, his name is Ravi", "we got a puppy - her name's Bean": the name said after, of whom was just
# mentioned ("his" would read as the holder of what the statement says)
NAME_AFTER = re.compile(
    r"(?P<who>\b(?:someone|somebody|a (?:new )?(?:guy|girl|man|woman|lady|bloke|boy|boyfriend|girlfriend|partner|"
    r"baby|puppy|kitten|dog|cat|rescue \w+))"
    r"(?: new| lovely| great| nice)?)(?P<mid>[^,;.!?]{0,30}?)\s*(?:,|;|\s[-\u2013\u2014])\s*"
    r"(?:his|her|its|their) name(?:'s| is) "
    r"(?P<name>[A-Z][\w'-]+)\b")
# "Everyone calls me Liz": the name the speaker goes by
CALLED_ME = re.compile(r"(?i)^(?:everyone|everybody|people|most people|(?:all )?my friends|friends|they)\s+"
                       r"(?:just |usually |always |mostly )?call(?:s)? me (?P<name>(?-i:[A-Z])[\w'\-]+)(?P<rest>.*)$")
# "they made me art director", not "they made me laugh": "made"/"named" only with a title after it
TITLE_WORDS = frozenset("head lead chief senior principal captain chair president partner supervisor ceo cto cfo "
                        "vp deputy".split())
# "It was my 35th birthday yesterday", "it's my first week at N26": no remark, a statement about the speaker
OWN_DAY = re.compile(r"(?i)^it(?:'s| is| was) (?:my|our) (?:\d+\w*|first|last|final)\b")
PRONOUN_LED = re.compile(
    r"(?i)^(?:(?:it|he|she|they|there|here|everyone|everybody|someone|somebody|nobody|nothing|everything|what a|"
    r"such a|sounds?|looks?|seems?|must)\b|it's|that's|there's|here's|they're|(?:that|this|these|those|so)"
    r"(?:'s|'re|'ll|'d|\s+(?:is|are|was|were|has|have|had|looks?|sounds?|seems?|feels?|felt|makes?|made|must|can|"
    r"could|will|would|should|might|really|just|always|also|totally|definitely|gives?|gave|brings?|brought|"
    r"reminds?|means?|meant|helps?|helped|keeps?|kept|got|gets|did|does|do|takes?|took|goes|went|comes?|came|"
    r"great|good|awesome|amazing|cool|fun|nice|beautiful|lovely|sweet|wonderful|fantastic|like|too)\b|\s*$))")
CHATTER_ANYWHERE = re.compile(
    r"(?i)\b(?:for asking|asking for (?:me|myself|a friend)\b|cheers for|"
    r"(?:i'm|i am) (?:doing )?(?:ok|okay|good|great|fine|well|alright|awesome)\b"
    r"(?! (?:at|with|in|on)\b)|hanging in there|(?:i'm|i am) (?:so |really |very )?sorry\b|"
    r"life(?:'s| has) been|since we (?:last )?(?:talked|chatted|spoke)|"
    r"our (?:last )?chat|would(?:'ve| have) (?:loved|liked|been)|(?:feel|felt|feels) the same|"
    r"our (?:friendship|chats?|talks?|conversations?)|(?:great|good|awesome) team|"
    r"\b(?:i|we) (?:\S+ )?(?:totally |completely |fully )?agree\b|\b(?:some|great|awesome|big|exciting|good) news\b"
    r"(?! about)|something (?:cool|awesome|exciting|big|amazing|crazy|great) happened|"
    r"a lot(?:'s| has) (?:been going on|happened)|\b(?:week|day|weekend)(?:'s| has) been\b|on cloud nine|reach out if|"
    r"\bbye\b|(?:have|gotta|got) to (?:go|run)\b)"
    r"|^(?:even though|although|though|because|'cause|unless|whereas|if|while)\b[^,]*$")
OPINION = re.compile(
    r"(?i)^(?:\w+ ){0,1}(?:i|we) (?:(?:really|totally|completely|just|also|so|do|don't|can't|can|could|couldn't|only|"
    r"still|definitely|kinda|kind of|truly|honestly)\s+)*(?:think|thought|guess|bet|imagine|agree|believe|suppose|"
    r"reckon|mean|understand|hear|see|get(?= (?:it|that|this|what|why|how|you|the point)\b)|know|knew|hope|wish|"
    r"feel|felt|(?P<be>was|'m))"  # "I get it", not "I get around in a Fiesta"
    r"(?! (?:to|how to|about my|i\b|we\b|like i\b))\b(?P<rest>.*)$")
TAIL = re.compile(r"(?i)(?:\s+[-\u2013\u2014]+\s+|,\s+|\s+)(?:which|it|that|this)(?:'s| is| was| has been| "
                   r"feels| felt| makes| made) (?:so |really |pretty |super |very |quite |just |such )*"
                   r"(?:a |an )?(?:exciting|awesome|amazing|great|cool|fun|nice|fantastic|wonderful|crazy|incredible|"
                   r"a blast|a lot of fun|lovely|rewarding|sweet|beautiful|surreal|wild|insane)\b[^.]*$")
NOW = re.compile(r"(?i)\bnow\b")
# "my personal number hasn't changed": no change
UNCHANGED = re.compile(r"(?i)\b(?:hasn't|has not|haven't|have not|didn't|did not|won't|will not) "
                       r"(?:changed?|moved)\b|\b(?:is|are|'s) (?:still )?the same\b|\b(?:is|are|'s) still the one\b")
WE = re.compile(r"(?i)\b(?:we|we're|we've|we'd|we'll|us|our|ours|ourselves)\b")
MODAL_WORDS = {"can", "can't", "will", "won't", "should", "must", "gotta", "we'll", "we'd", "could", "shall",
                "let's"}
VERDICT = re.compile(
    r"(?i)(?:\b(?:is|are|was|were|been)|'s|'re)\s+(?:(?:so|really|just|pretty|super|very|quite|truly|always|been)\s+)*"
    r"(?:awesome|amazing|great|cool|fun|nice|wonderful|fantastic|lovely|sweet|incredible|the best|perfect|"
    r"beautiful|special|awful|terrible|crazy|wild|tough|hard|rough)\b.*$")
NAMED = re.compile(r"\b(?:in|at|to|from|with|for) (?:the )?[A-Z][a-z]+")
# "these days", "this week", "that year" say when, and point back at nothing
REFERENCE = re.compile(r"(?i)\b(?:it|that|this|those|these|them)\b(?! (?:days?|weeks?|months?|years?|mornings?|"
                       r"evenings?|summer|winter|spring|autumn|fall|time|term|semester|season)\b)")
STOP = set("""
i i'm im i've ive i'd i'll me my mine myself we we're we've we'd we'll us our ours ourselves it it's its this that
that's these those they them their he she him her his a an the and or but so if then than as of to in on at by for
with about from up down out over into onto off just also too very really so such much many lot lots bit more most
is am are was were be been being have has had having do does did doing done get gets got getting go goes going
went gone make makes made take took feel feels felt feeling think thought know knew see saw seen say said tell told
want wanted need needed like liked love loved loving enjoy enjoyed can could would should will won't can't don't
didn't doesn't isn't wasn't haven't not no yes yeah yep sure ok okay oh wow hey hi hello thanks thank please great
good awesome amazing cool nice fun happy glad excited thrilled proud thankful grateful blessed lucky sad sorry
wonderful fantastic lovely sweet beautiful incredible perfect best better well right now then here there today
always never ever still even again back thing things stuff something anything everything nothing way time times
day days one ones some any all every own same other kind sort totally definitely absolutely honestly actually
finally already pretty quite super gonna wanna gotta let lets let's what when where how why who which while
because though although since until also maybe probably hope wish agree mean guess bet imagine believe sounds
looks seems keep kept help helps helped try tried trying feel appreciate appreciated support rooting excited
exciting crazy wild cute lol haha hug hugs tho yea wow awesome inspiring inspired motivated motivation positive
happy joy proud pride special meaningful powerful important tough hard easy worth give gave given forget forgot
remember remembered start started check use used find found look looking looked hear heard talk talked chat
chatted share shared show showed send sent put bring brought come came life week last together surely sometime
soon later lately done without stoked pumped
""".split())


OPENERS = set("""
yesterday today tonight tomorrow recently lately sometimes often usually now then later earlier also last next
this that these those honestly actually seriously anyway besides still luckily sadly unfortunately fortunately
finally eventually basically overall plus meanwhile afterwards personally growing
""".split()) | set(calendar_words.WEEKDAYS) | set(calendar_words.MONTHS)


# a statement typed without its "I" whose bare verb is no order to the assistant: "live in denver", "work at Kestrel"
STATE_LEAD = re.compile(r"(?i)live\s+(?:in|near)\s+(?-i:[A-Z])|(?:work|teach|study)\s+(?:in|at|for|as)\b"
                        r"|(?:drive|own)\s+(?:a|an)\s")


def unsurprised(sentence: str) -> str:
    """A statement said with surprise ("Becca's my manager now and she posts the rota a week ahead??") without its
    question marks; anything that asks, as it is."""
    if not sentence.endswith("??") or QUESTION.match(sentence) or YOU.search(sentence):
        return sentence
    first = nlp.parse(sentence)[0]
    return sentence if first.pos_ == "AUX" or first.tag_ in ("WDT", "WP", "WRB") else sentence.rstrip("?!").rstrip()
