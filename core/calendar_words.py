"""The calendar's English words, lower case, in calendar order: one list for every app that reads dates in text
(memories.search.dates: dates a query names; extraction.timewords: relative time words resolved)."""

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
# the short forms people write ("Jan", "Sept."); "may" has none
MONTH_ABBREVIATIONS = ("jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
# days named by a feast, said as a time ("at Christmas", "since Easter")
HOLIDAYS = ("christmas", "xmas", "easter", "halloween", "thanksgiving", "ramadan", "eid", "diwali", "hanukkah",
            "passover", "hogmanay", "lent", "advent", "whitsun", "pentecost", "carnival", "midsummer")


def alternation(words: tuple[str, ...], *, suffix: str = "") -> str:
    """A regex alternation of `words` as written in text (title case), longest first so that "Sept" is tried
    before "Sep"; `suffix` follows each word (a backslash-dot regex for an abbreviation's dot)."""
    return "|".join(f"{word.title()}{suffix}" for word in sorted(words, key=len, reverse=True))
