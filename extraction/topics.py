"""The topic tags of a statement ("health", "food", "work", ...): a few word patterns each, for the tags a memory
is found and grouped by (extraction.dialogue, profiles.sections)."""

import re

TOPICS = tuple((tag, re.compile(rf"(?i)\b(?:{words})\b")) for tag, words in (
    ("health", r"allerg\w*|intoleran\w*|diabet\w*|asthma|doctor|hospital|surgery|injur\w*|sick|illness|therapy|"
               r"medication|pregnan\w*|health\w*|diagnos\w*"),
    ("food", r"vegan|vegetarian|gluten|dairy|cook\w*|bak\w*|recipes?|food|meal|dinner|restaurant\w*|diet"),
    ("travel", r"travel\w*|trip|flight|flights|vacation|holiday|abroad|visit\w*|road trip|camping"),
    ("work", r"work\w*|job|jobs|career|employer|office|boss|colleagues?|clients?|company|business|promot\w*"),
    ("family", r"wife|husband|partner|son|daughter|kids?|children|mother|father|mom|mum|dad|brother|sister|"
               r"family|baby|parents?|grandm\w+|grandp\w+"),
    ("education", r"school|college|university|degree|class|classes|course|studying|studied|graduat\w*|exam"),
    ("hobby", r"paint\w*|draw\w*|music|guitar|piano|violin|danc\w*|read\w*|books?|hik\w*|running|yoga|games?|"
              r"gaming|photograph\w*|garden\w*|sports?|swim\w*"),
    ("pets", r"dogs?|cats?|pupp(?:y|ies)|kittens?|pets?|horses?"),
))


def topic_tags(text: str) -> list[str]:
    """The tags of the topics `text` speaks of."""
    return [tag for tag, pattern in TOPICS if pattern.search(text)]
