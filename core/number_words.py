"""Numbers written as English words, lower case: one list for every app that reads a count in text
(extraction.timewords: "two weeks ago"; memories.planning: "three tops", then "five tops so far")."""

NUMBER_WORDS = {"one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9,
                "ten": 10, "eleven": 11, "twelve": 12, "twenty": 20}
