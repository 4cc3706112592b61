"""Word documents (python-docx): paragraphs, headings from their styles, and table rows in reading order."""

import io
import re
import zipfile

from documents.parsing.blocks import Block, ParsedDocument, ParseError, clean, result

_HEADING_STYLE = re.compile(r"^heading\s*(\d)$", re.IGNORECASE)


def parse_docx(data: bytes) -> ParsedDocument:
    import docx
    from docx.opc.exceptions import PackageNotFoundError
    from docx.table import Table

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
                        blocks.append(Block(" | ".join(cells), kind="table"))
                continue
            text = clean(item.text)
            if not text:
                continue
            style = (item.style.name if item.style is not None else "") or ""
            match = _HEADING_STYLE.match(style.strip())
            if style.strip().lower() == "title":
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
