"""Markdown (headings, lists, tables, code fences; inline markup reduced to its text) and plain text."""

import re

from documents.parsing.blocks import CONTROL, Block, ParsedDocument, clean, decode_text, paragraphs, result

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?")
_RULE = re.compile(r"^ {0,3}(?:(?:-[ \t]*){3,}|(?:\*[ \t]*){3,}|(?:_[ \t]*){3,})$")
_TABLE_DIVIDER = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def _inline_markdown(text: str) -> str:
    text = re.sub(r"!\[([^\]]*)\]\([^)]*\)", r"\1", text)  # images: their alt text
    text = re.sub(r"\[([^\]]+)\]\([^)]*\)", r"\1", text)  # links: their text
    text = re.sub(r"\[([^\]]+)\]\[[^\]]*\]", r"\1", text)  # reference links
    text = re.sub(r"<(https?://[^>\s]+)>", r"\1", text)  # autolinks
    text = re.sub(r"`+([^`]+)`+", r"\1", text)  # inline code
    text = re.sub(r"(\*\*|__)(?=\S)(.+?)(?<=\S)\1", r"\2", text)  # strong
    text = re.sub(r"(?<![\w*])\*(?=\S)(.+?)(?<=\S)\*(?![\w*])", r"\1", text)  # emphasis
    text = re.sub(r"(?<![\w_])_(?=\S)(.+?)(?<=\S)_(?![\w_])", r"\1", text)
    text = re.sub(r"~~(?=\S)(.+?)(?<=\S)~~", r"\1", text)
    text = re.sub(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>", "", text)  # inline HTML tags
    return clean(text)


def parse_markdown(data: bytes) -> ParsedDocument:
    lines = decode_text(data).replace("\r\n", "\n").replace("\r", "\n").split("\n")
    blocks: list[Block] = []
    paragraph: list[str] = []
    start = 0
    if lines and lines[0].strip() == "---":  # YAML front matter
        for end in range(1, min(len(lines), 200)):
            if lines[end].strip() in ("---", "..."):
                start = end + 1
                break

    def add(text: str, **shape) -> None:
        if text:  # markup with no text in it (an empty heading, a table row of empty cells) makes no block
            blocks.append(Block(text, **shape))

    def flush():
        text = _inline_markdown(" ".join(paragraph))
        paragraph.clear()
        add(text)

    i = start
    while i < len(lines):
        line = lines[i]
        fence = _FENCE.match(line)
        if fence:
            flush()
            marker = fence.group(1)
            code: list[str] = []
            i += 1
            while i < len(lines) and not lines[i].strip().startswith(marker[0] * len(marker)):
                code.append(lines[i])
                i += 1
            add(CONTROL.sub("", "\n".join(code)).strip(), kind="code")
            i += 1
            continue
        atx = _ATX.match(line)
        if atx:
            flush()
            add(_inline_markdown(atx.group(2) or ""), heading_level=len(atx.group(1)), kind="heading")
            i += 1
            continue
        if not line.strip():
            flush()
            i += 1
            continue
        setext = _SETEXT.match(line)
        if setext and len(paragraph) == 1:
            add(_inline_markdown(paragraph.pop()), heading_level=1 if setext.group(1)[0] == "=" else 2, kind="heading")
            i += 1
            continue
        if _RULE.match(line):
            flush()
            i += 1
            continue
        if line.lstrip().startswith("|"):
            flush()
            if not _TABLE_DIVIDER.match(line):
                cells = [_inline_markdown(c) for c in line.strip().strip("|").split("|")]
                add(" | ".join(c for c in cells if c), kind="table")
            i += 1
            continue
        item = _LIST_ITEM.match(line)
        if item:
            flush()
            paragraph.append(line[item.end():])
        else:
            paragraph.append(re.sub(r"^ {0,3}>\s?", "", line))
        i += 1
    flush()
    return result(blocks)



# --- plain text -----------------------------------------------------------------------------------------------------


def parse_text(data: bytes) -> ParsedDocument:
    return result(paragraphs(CONTROL.sub("", decode_text(data))))
