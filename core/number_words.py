"""Numbers written as English words, lower case: one list for every app that reads a count in text
(extraction.timewords: "two weeks ago"; memories.planning: "three tops", then "five tops so far"), and any number
said in words read as digits (extraction's ages: "seventy-one")."""

from text_to_num import text2num

NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20}


def in_digits(words: str) -> str | None:
    """A number said in words as digits ("seventy-one", "thirty four" -> "71", "34"); None when `words` is no
    number."""
    try:
        return str(text2num(words.replace("-", " "), "en"))
    except ValueError:
        return None
