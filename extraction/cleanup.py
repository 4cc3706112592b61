"""Chatter off a kept sentence before it becomes a memory: discourse markers in front ("Update:", "FYI -",
"Quick update -"), laughter and emoticons at the end ("haha", "lol", "xD"), and a trailing remark that only
comments on what was said (", which is tricky in Portugal haha", ", which is annoying").

A which-clause is a remark when its predicate is an adjective (spaCy tags it) or when laughter follows it; one
that adds a fact (", which is a bank in Lisbon") stays.
"""

from __future__ import annotations

import re

from extraction import nlp
from extraction.slots import EMAIL, PHONE

_DISCOURSE = re.compile(
    r"(?i)^(?:(?:just |a |one |another |some |quick |small |little |tiny |short |big |major |minor |huge |life |"
    r"status |bit of |"
    r"personal |random |fun |good |sad |bad |latest )*(?:updates?|news|heads[- ]up|fyi|f\.y\.i\.|ps|p\.s\.?|pps|"
    r"edit|btw|side note|update on me|update from me|confession|fun fact|random fact|newsflash|spoiler|corrections?|"
    r"so yeah|anyway|psa|(?:quick|small|little|short|side) note|intro|introduction|about me)"
    r"(?: (?:for you|from me|on my end|on my side|here|time))?\s*(?:[:\-\u2013\u2014!]+|\.{2,}|,)\s*)+"
    # a label for what follows: "hot take but ...", "unpopular opinion: ..."
    r"|(?i:^(?:hot take(?: incoming| alert)?|unpopular opinion|plot twist|real talk|not gonna lie|ngl|I'll be honest|"
    r"I (?:must|have to|gotta|should|will) (?:confess|admit|say)|to be fair|truth be told|just so you know|"
    r"funny (?:thing|story)|funnily enough|believe it or not|long story(?: short)?|"
    r"quick one(?: before [^:,.!?\-\u2013\u2014]{1,30})?)"
    r"(?:\s*[:,\-\u2013\u2014!]+\s*|\s+but\s+))")
_LAUGH = (r"(?:(?:so )?yeah|a?(?:ha){2,}h?|(?:he){2,}|(?:hi){2,}|lo+l+|lmf?ao+|rofl|xd+|jk|smh|tbh|ikr|:-?[)(dp]|"
          r";-?\)|<3|\^_?\^|ha|heh)")
_LAUGH_TAIL = re.compile(rf"(?i)(?:[\s,;.!?\-\u2013\u2014(]*(?<![A-Za-z]){_LAUGH}(?!\w)[\s.!?)]*)+$")
# inside a sentence only what cannot be a word: "haha", "hehe", "lol", "lmao", "xD" (not "ha", "jk", "smh")
_LAUGH_INSIDE = re.compile(
    r"(?i)\s*[(\[]?(?<![\w'])(?:a?(?:ha){2,}h?|(?:he){2,}|lo+l+|lmf?ao+|rofl|xd+)(?![\w'])[)\]]?")
_WHICH = re.compile(r"(?i)(?:,|\s[-\u2013\u2014]+)\s+(?:which|that|this|it)(?:'s| is| was| has been| can be| will be| "
                    r"gets| got| made| makes| feels| felt| sounds| seems| must be| might be)\b")
_ADVERBS = set("so really pretty super very quite just such a an bit kinda kind of sort rather totally honestly "
               "always sometimes definitely also even a little".split())


# the same markers inside a sentence, where they cannot be a word: "new number btw: ...", "I'm vegan now fyi"
_MARKER_INSIDE = re.compile(r"(?i)\s*,?\s+(?<![\w'])(?:btw|fyi|tbh|ngl|imo|imho|tho|fr)(?![\w'])")


def strip_discourse(sentence: str) -> str:
    """"Update: we moved again" -> "we moved again"; "FYI - I'm vegan" -> "I'm vegan"; "new number btw: ..." ->
    "new number: ..."."""
    stripped = _MARKER_INSIDE.sub("", _DISCOURSE.sub("", sentence, count=1)).strip()
    return stripped if re.search(r"[A-Za-z]", stripped) else sentence


# a last remark with no subject that reacts to what was said: ", still can't believe it", ", loving it so far"
_REACTION = re.compile(
    r"(?i),\s+(?:(?:still|so|really|just|honestly|totally|absolutely|kinda|pretty)\s+)*(?:can't|cannot|couldn't|"
    r"love|loving|hate|hating|enjoying|excited|happy|thrilled|stoked|glad|wild|crazy|unreal|nuts|amazing|weird|"
    r"surreal|fingers crossed|wish me luck|who knows|go figure)\b(?P<rest>[^,;]*)$")


# what follows the fact and is none: a request to the assistant ("I'm vegetarian so give me a lunch idea", "..., so
# please don't suggest meat dishes", "I'm 34, if that matters for the quote"), a comfort, a consequence
_AFTERWORD = re.compile(
    r"(?i)(?:,?\s+so\s+(?:(?:please|pls|plz|can you|could you|would you)\s+)*(?:give|tell|send|suggest|recommend|"
    r"find|show|write|explain|remind|help|make|plan|list|don't|do not|avoid|keep|skip|use|sign|put|add|include|"
    r"address|draft|fill|update|change)\b"
    r"|,?\s+if (?:that|it) (?:matters|helps|asks|comes up)\b"
    # "..., so at least he gets it" (the speaker's comfort), "..., so when you plan ..." (an instruction), "..., but
    # honestly I do ..." (what it is like)
    r"|,\s+so at least\b|,?\s+so (?:when|if|whenever) (?:you|u)\b|,\s+but (?:honestly|tbh|to be fair|in practice)\b"
    # "..., so the school run's longer": what it means for them, no fact
    r"|,\s+so (?:the|it's|it is|that's) [^,.;!?]{0,40}?\b(?:longer|shorter|easier|harder|better|worse|quicker|closer"
    r"|nicer|cheaper|only)\b"
    # "I'm a senior associate so I end up reviewing everyone's work": what it means for them
    r"|,?\s+so (?:I|we) (?:end up|have to|get to|always|usually|keep|spend)\b"
    r"|,\s+(?:(?:it's|it is) )?(?:early days|still early)\b)"
    r".*$")


def strip_chatter(sentence: str) -> str:
    """Laughter, emoticons and an evaluative trailing remark off `sentence` (a remark that has laughter after it
    is chatter whatever its predicate)."""
    laughed = _LAUGH_TAIL.search(sentence)
    if laughed and laughed.start() > 0:
        sentence = sentence[:laughed.start()].rstrip(" ,;-\u2013\u2014")
    inside = _LAUGH_INSIDE.search(sentence)
    if inside:
        sentence = re.sub(r"\s+([,;.!?])", r"\1", _LAUGH_INSIDE.sub("", sentence)).strip(" ,")
    laughed = laughed or inside
    request = _AFTERWORD.search(sentence)
    # a request that gives the speaker's contact detail is kept for it: "..., so please put a@b.com on it instead"
    if request and request.start() > 0 and len(sentence[:request.start()].split()) > 1 and not re.search(
            f"{EMAIL}|{PHONE}", sentence[request.start():]):
        sentence = sentence[:request.start()].rstrip(" ,;")
    reaction = _REACTION.search(sentence.rstrip(".!"))
    if reaction and len(reaction["rest"].split()) <= 4 and not re.search(r"[A-Z0-9]", reaction["rest"]):
        sentence = sentence[:reaction.start()]
    match = _WHICH.search(sentence)
    if match and (laughed or _is_evaluation(sentence[match.end():])):
        sentence = sentence[:match.start()].rstrip(" ,;-\u2013\u2014")
    return sentence


def _is_evaluation(predicate: str) -> bool:
    """"tricky in Portugal", "so annoying", "a pain": an adjective (or "a pain/nightmare/blast") leads it."""
    words = predicate.split()
    while words and words[0].lower() in _ADVERBS:
        words = words[1:]
    if not words:
        return False
    if words[0].lower().strip(".,!") in ("pain", "nightmare", "blast", "joy", "relief", "bummer", "shame", "pity",
                                          "drag", "hassle", "struggle", "challenge", "win", "bonus", "plus"):
        return True
    doc = nlp.parse(" ".join(["It", "is", *words]))
    return len(doc) > 2 and doc[2].tag_ in ("JJ", "JJR", "JJS")
