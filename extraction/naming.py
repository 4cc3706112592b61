"""Naming idioms said plainly before a statement is parsed for its frames: "is a woman named Clara" -> "is
Clara", "my husband's name is Victor" -> "my husband is Victor", "seeing a guy called Ben" -> "seeing Ben"."""

from __future__ import annotations

import re

_PERSON = r"(?:guy|man|woman|lady|girl|boy|person|bloke|chap|fellow)"
# "my boss is (a guy) called Henrik" says "my boss is Henrik" (not that the speaker is called Henrik)
_CALLED = re.compile(rf"\b(is|was|'s) (?:(?:a|an) {_PERSON} )?(?:called|named) (?=[A-Z])")
# "seeing a guy called Ben" says "seeing Ben"
_A_NAMED = re.compile(rf"\b(?:a|an|this|some) (?:\w+ )?{_PERSON} (?:called|named) (?=[A-Z])")
_NAME_IS = re.compile(r"(?i)\b(?P<who>\w+)'s (?:first |full )?name (?P<verb>is|was) (?=[A-Z])")


def said_plainly(content: str) -> str:
    """`content` with its naming idioms said plainly."""
    return _NAME_IS.sub(lambda m: f"{m['who']} {m['verb']} " if m["who"].lower() != "user" else m[0],
                        _A_NAMED.sub("", _CALLED.sub(r"\1 ", content)))
