"""Word documents (python-docx): paragraphs, headings from their styles, and table rows in reading order.

A DOCX is a zip archive, and a small one can unpack to a huge one (a 179 KB file to 52 MB of XML, which python-docx
took minutes and gigabytes to read): `check_archive` refuses it from the archive's directory alone, at upload and
again before parsing. The sizes it checks bound what is read: Python's zipfile yields at most a member's declared
size and fails the CRC check when the data runs longer.
"""

import io
import re
import zipfile

from documents.parsing.blocks import (
    DEFAULT_LIMITS,
    Block,
    Limits,
    ParsedDocument,
    ParseError,
    TextBudget,
    TooLarge,
    clean,
    human_size,
    result,
)

_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)
# A member that unpacks to over 100 times its packed size is a zip bomb, not a document (Apache POI's rule; Word's
# own XML packs 5-20 times); members under 1 MB are left alone, however well they pack.
MAX_RATIO = 100
RATIO_FROM_BYTES = 1024 * 1024


def check_archive(file, limits: Limits = DEFAULT_LIMITS) -> None:
    """Raise TooLarge if the archive (bytes or a binary file) unpacks to more than `limits.unpacked_bytes` or one
    of its members is packed like a zip bomb; reads only the archive's directory. A damaged archive passes (the
    parser says it is damaged)."""
    source = io.BytesIO(file) if isinstance(file, bytes | bytearray) else file
    try:
        if hasattr(source, "seek"):
            source.seek(0)
        with zipfile.ZipFile(source) as archive:
            members = archive.infolist()
    except (zipfile.BadZipFile, OSError, ValueError):
        return
    finally:
        if hasattr(source, "seek"):
            source.seek(0)
    for member in members:
        if member.file_size >= RATIO_FROM_BYTES and member.file_size > MAX_RATIO * max(member.compress_size, 1):
            raise TooLarge(
                f"The Word document's {member.filename[:100]} unpacks from {human_size(member.compress_size)} to "
                f"{human_size(member.file_size)} (more than {MAX_RATIO} times), as only a zip bomb does; it is "
                "not read.")
    total = sum(member.file_size for member in members)
    if total > limits.unpacked_bytes:
        raise TooLarge(f"The Word document unpacks to {human_size(total)}; the most a document may unpack to is "
                       f"{human_size(limits.unpacked_bytes)}.")


def parse_docx(data: bytes, limits: Limits = DEFAULT_LIMITS) -> ParsedDocument:
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table

    check_archive(data, limits)
    budget = TextBudget(limits)
    # Style names by style id: python-docx looks a paragraph's style up among all of the document's styles each
    # time (96% of the parse: a 1 MB document.xml took 32 s, a 52 MB one would take ~25 minutes).
    style_names: dict[str | None, str] = {}

    def style_name(paragraph) -> str:
        style_id = paragraph._p.style  # w:pPr/w:pStyle/@w:val, or None for the default paragraph style
        if style_id not in style_names:
            style = paragraph.style
            style_names[style_id] = ((style.name if style is not None else "") or "").strip()
        return style_names[style_id]

    try:
        document = docx.Document(io.BytesIO(data))
        blocks: list[Block] = []
        for item in document.iter_inner_content():
            if isinstance(item, Table):
                for row in item.rows:
                    cells: list[str] = []
                    for cell in row.cells:
                        text = clean(cell.text)
                        if text and (not cells or cells[-1] != text):  # merged cells repeat their text
                            cells.append(text)
                    if cells:
                        blocks.append(Block(budget.take(" | ".join(cells)), kind="table"))
                continue
            text = clean(item.text)
            if not text:
                continue
            budget.take(text)
            style = style_name(item)
            match = _HEADING_STYLE.match(style)
            if style.lower() == "title":
                blocks.append(Block(text, heading_level=1, kind="heading"))
            elif match:
                blocks.append(Block(text, heading_level=min(max(int(match.group(1)), 1), 6), kind="heading"))
            else:
                blocks.append(Block(text))
        title = clean(document.core_properties.title or "")
    except (PackageNotFoundError, zipfile.BadZipFile, KeyError, ValueError, AttributeError) as exc:
        raise ParseError(f"The Word document is damaged and could not be read ({exc}).") from exc
    except Exception as exc:  # lxml syntax errors and the like
        if exc.__class__.__module__.startswith(("lxml", "docx")):
            raise ParseError(f"The Word document is damaged and could not be read ({exc}).") from exc
        raise
    return result(blocks, title=title)
