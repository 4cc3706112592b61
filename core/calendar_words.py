"""The calendar's English words, lower case, in calendar order: one list for every app that reads dates in text
(memories.search.dates: dates a query names; extraction.timewords: relative time words resolved)."""

MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
          "november", "december")
# the short forms people write ("Jan", "Sept."); "may" has none
MONTH_ABBREVIATIONS = ("jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")
