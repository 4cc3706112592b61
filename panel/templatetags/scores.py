"""A search result's score explained: its parts (the API's `parts`, which add up to the score), each with what it
measures. How a ranking weighs them is `memories.search.ranking.RANKINGS`."""

from django import template

register = template.Library()

# what each part of a score measures, as a tooltip on the part
PART_MEANINGS = {
    "semantic": "meaning: how close the memory is to the query in sense",
    "similarity": "meaning: how close the memory is to the query in sense",
    "keyword": "words: how much of the query's wording the memory contains",
    "context": "context: a neighbouring turn of the same conversation matched",
    "intent": "kind: the query asks for this kind of memory (a restriction, a preference, a goal, where they live…)",
    "date": "date: it happened within a date the query names",
    "importance": "importance: how much the memory matters",
    "recency": "recency: how recently the memory changed",
}


SHOWN_DIGITS = 2  # parts are shown to two decimals: one that would read 0.00 is left out


@register.filter
def score_parts(parts) -> list[tuple[str, float, str]]:
    """(name, value, meaning) of the parts that add something visible, in the ranking's order."""
    return [(name, value, PART_MEANINGS.get(name, name)) for name, value in (parts or {}).items()
            if round(value, SHOWN_DIGITS)]
