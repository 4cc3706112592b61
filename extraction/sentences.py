"""The one sentence splitter: document chunking (`SENTENCE_END`), the document rules and the dialogue extractor.

Documents: paragraphs are separated by blank lines, a line break inside one is only wrapping, and a sentence
starts with a capital or a digit. Dialogue (`dialogue=True`): every line is its own piece (chat messages rarely
end lines with a full stop), list bullets are dropped, and a sentence may start in lower case ("i moved. it's
nice"). In both, a full stop after a common abbreviation ("Dr.", "e.g.") ends nothing.
"""

import re

# A sentence ends at . ! ? (or …) followed by optional closing quotes/brackets, then space and a capital/digit.
SENTENCE_END = re.compile(r"[.!?\u2026][\"'\u201d\u2019)\]]*\s+(?=[\"'\u201c\u2018(\[]?[A-Z0-9])")
# The same end before any letter, for dialogue typed in lower case.
_ANY_END = re.compile(r"[.!?\u2026][\"'\u201d\u2019)\]]*\s+(?=[\"'\u201c\u2018(\[]?\w)")
_ABBREVIATION = re.compile(
    r"(?:^|\s)(?:Dr|Mr|Mrs|Ms|Mx|St|Prof|Jr|Sr|Mt|vs|etc|approx|No|e\.g|i\.e|a\.m|p\.m|U\.S|Inc|Ltd|Co)\.\W*$",
    re.IGNORECASE)
# "D.C.", "U.K.": an initialism ends no sentence when a word in lower case follows ("Fontaines D.C. are ...")
_INITIALISM = re.compile(r"(?:^|\s)(?:[A-Za-z]\.){2,}$")
# "Ursula K. Le Guin": a middle initial between two names ends nothing
_MIDDLE_INITIAL = re.compile(r"(?:^|\s)[A-Z][a-z]+ [A-Z]\.$")
_BULLET = re.compile(r"^\s*(?:[-*\u2022]|\d+[.)])\s+")


def split_sentences(text: str, *, dialogue: bool = False) -> list[str]:
    """The sentences of `text`, in order, each with single spaces and no surrounding whitespace."""
    found: list[str] = []
    paragraphs = re.split(r"\n+" if dialogue else r"\n\s*\n", text)
    ends = _ANY_END if dialogue else SENTENCE_END
    for paragraph in paragraphs:
        if dialogue:
            paragraph = _BULLET.sub("", paragraph)
        paragraph = re.sub(r"\s+", " ", paragraph).strip()
        if not paragraph:
            continue
        start = 0
        for match in ends.finditer(paragraph):
            if _ABBREVIATION.search(paragraph[start:match.start() + 1]) or (
                    _INITIALISM.search(paragraph[start:match.start() + 1]) and paragraph[match.end()].islower()) or (
                    _MIDDLE_INITIAL.search(paragraph[start:match.start() + 1])
                    and re.match(r"[A-Z][a-z]", paragraph[match.end():])):
                continue
            sentence = paragraph[start:match.end()].strip()
            if sentence:
                found.append(sentence)
            start = match.end()
        if paragraph[start:].strip():
            found.append(paragraph[start:].strip())
    return found
