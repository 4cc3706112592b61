"""Small real files of every supported kind, made on the fly (no binary fixtures in the repository).

`make_pdf` writes a genuine PDF 1.4 (Helvetica text, one content stream per page, optional bookmarks) by hand,
so tests and the benchmark need no PDF-writing library; pypdf reads it back like any other PDF.
"""

import io
import textwrap
import zlib


def _pdf_text(text: str) -> str:
    text = text.encode("latin-1", "replace").decode("latin-1")
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(pages: list[list[str]], *, title: str = "", bookmarks: list[tuple[str, int]] = (),
             width: int = 95, compress: bool = False) -> bytes:
    """A PDF whose page i shows the lines of `pages[i]` (long lines wrapped at `width` characters; an empty
    string is a blank line). `bookmarks`: (title, 0-based page) outline entries. `compress`: content streams
    packed with /FlateDecode, as most PDFs have them."""
    objects: list[bytes] = []

    def add(body: bytes) -> int:
        objects.append(body)
        return len(objects)

    catalog = add(b"")  # filled in below
    pages_id = add(b"")
    font = add(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
    page_ids = []
    for lines in pages:
        wrapped: list[str] = []
        for line in lines:
            wrapped += textwrap.wrap(line, width) or [""]
        ops = ["BT", "/F1 10 Tf", "12 TL", "50 780 Td"]
        for line in wrapped:
            ops.append(f"({_pdf_text(line)}) Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        packed = zlib.compress(stream) if compress else stream
        content = add(b"<< /Length %d%s >>\nstream\n" % (len(packed), b" /Filter /FlateDecode" if compress else b"")
                      + packed + b"\nendstream")
        page_ids.append(add(
            b"<< /Type /Page /Parent %d 0 R /MediaBox [0 0 595 842] /Resources << /Font << /F1 %d 0 R >> >> "
            b"/Contents %d 0 R >>" % (pages_id, font, content)
        ))
    objects[pages_id - 1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (
        b" ".join(b"%d 0 R" % p for p in page_ids), len(page_ids))
    outlines = b""
    if bookmarks:
        outline_root = add(b"")
        items = [add(b"") for _ in bookmarks]
        for index, ((title_text, page), item) in enumerate(zip(bookmarks, items, strict=True)):
            links = b""
            if index > 0:
                links += b" /Prev %d 0 R" % items[index - 1]
            if index + 1 < len(items):
                links += b" /Next %d 0 R" % items[index + 1]
            objects[item - 1] = b"<< /Title (%s) /Parent %d 0 R /Dest [%d 0 R /Fit]%s >>" % (
                _pdf_text(title_text).encode("latin-1"), outline_root, page_ids[page], links)
        objects[outline_root - 1] = b"<< /Type /Outlines /First %d 0 R /Last %d 0 R /Count %d >>" % (
            items[0], items[-1], len(items))
        outlines = b" /Outlines %d 0 R" % outline_root
    objects[catalog - 1] = b"<< /Type /Catalog /Pages %d 0 R%s >>" % (pages_id, outlines)
    info = add(b"<< /Title (%s) >>" % _pdf_text(title).encode("latin-1")) if title else None

    out = io.BytesIO()
    out.write(b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    trailer = b"<< /Size %d /Root %d 0 R" % (len(objects) + 1, catalog)
    if info:
        trailer += b" /Info %d 0 R" % info
    out.write(b"trailer\n" + trailer + b" >>\nstartxref\n%d\n%%%%EOF\n" % xref)
    return out.getvalue()


def encrypt_pdf(data: bytes, password: str = "secret") -> bytes:
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(io.BytesIO(data)))
    writer.encrypt(user_password=password, owner_password=password + "-owner", algorithm="RC4-128")
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def make_docx(blocks: list[tuple[str, str]], *, title: str = "") -> bytes:
    """A Word document from (kind, text) pairs: kind "h1".."h3" for headings, "p" for paragraphs, "table" for a
    table whose rows are `text` split on newlines and cells on '|'."""
    import docx

    document = docx.Document()
    if title:
        document.core_properties.title = title
    for kind, text in blocks:
        if kind.startswith("h"):
            document.add_heading(text, level=int(kind[1:]))
        elif kind == "table":
            rows = [row.split("|") for row in text.split("\n")]
            table = document.add_table(rows=len(rows), cols=len(rows[0]))
            for r, row in enumerate(rows):
                for c, cell in enumerate(row):
                    table.cell(r, c).text = cell.strip()
        else:
            document.add_paragraph(text)
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def zip_bomb_docx(unpacked: int = 52 * 1024 * 1024, *, paragraph: str = "The report is due on Friday.") -> bytes:
    """A valid Word document whose body is `paragraph` repeated until document.xml is `unpacked` bytes: it packs
    about 250 times (52 MB of XML in ~200 KB), like the audit's 179 KB DOCX that unpacked to 52 MB. Written in
    pieces, so that the test never holds the whole XML."""
    import zipfile

    base = make_docx([("p", "x")])
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(base)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as target:
        for member in source.infolist():
            if member.filename != "word/document.xml":
                target.writestr(member, source.read(member))
                continue
            head, _, tail = source.read(member).decode().partition("<w:body>")
            piece = (f"<w:p><w:r><w:t>{paragraph}</w:t></w:r></w:p>" * 1000).encode()
            with target.open("word/document.xml", "w") as xml:
                xml.write((head + "<w:body>").encode())
                for _ in range(max(1, unpacked // len(piece))):
                    xml.write(piece)
                xml.write(tail.encode())
    return out.getvalue()


# --- generated content ----------------------------------------------------------------------------------------

PEOPLE = ["Alice Moreau", "Bruno Tanaka", "Chiara Okafor", "Dmitri Lindqvist", "Esther Nakamura", "Farid Haddad",
          "Greta Kowalski", "Hiroshi Mbeki", "Ingrid Alvarez", "Jonas Petrov"]
TEAMS = ["design team", "platform group", "data team", "mobile squad", "security office", "finance group",
         "research lab", "support desk"]
THINGS = ["PostgreSQL", "Kubernetes", "a monorepo", "weekly releases", "OpenTelemetry", "Terraform", "GraphQL",
          "feature flags", "Rust for the parser", "a shared design system"]
DELIVERABLES = ["quarterly report", "security audit", "migration plan", "budget review", "user study",
                "design review", "launch checklist", "vendor assessment"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December"]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday"]
FILLER = [
    "The discussion covered the current state of the system and the trade-offs that came up during the review.",
    "Several participants described how the existing process works in practice and where it slows people down.",
    "Most of the time went to comparing options, collecting numbers and agreeing on what to measure next.",
    "The notes below summarise the main points so that people who missed the session can catch up quickly.",
    "Background material was shared beforehand, and questions were collected in the shared document.",
    "Performance figures from the last release were presented and compared with the targets set in spring.",
    "A short demo showed the prototype running against production-like data on a staging cluster.",
    "Feedback from customers was mixed, with praise for the speed and complaints about the onboarding flow.",
    "The group walked through the open tickets one by one and closed the ones that no longer apply.",
    "Risks were listed with an owner each, and the list will be revisited at the next planning meeting.",
]


def fact_sentences(rng) -> list[str]:
    person, team = rng.choice(PEOPLE), rng.choice(TEAMS)
    return [
        f"{person} leads the {team}.",
        f"The {rng.choice(DELIVERABLES)} is due on {rng.choice(DAYS)}, {rng.choice(MONTHS)} {rng.randint(1, 28)}.",
        f"We decided to use {rng.choice(THINGS)}.",
        f"All services must support {rng.choice(['TLS 1.3', 'single sign-on', 'audit logging', 'IPv6'])}.",
    ]


def sample_sections(seed: int = 1, sections: int = 6, paragraphs: int = 4, sentences: int = 6,
                    facts_every: int = 3) -> list[tuple[str, list[str]]]:
    """(heading, paragraphs) of a plausible project document: filler prose with a fact sentence (a person's
    role, a deadline, a decision or a requirement) every `facts_every` paragraphs."""
    import random

    rng = random.Random(seed)
    out = []
    count = 0
    for s in range(sections):
        body = []
        for _ in range(paragraphs):
            text = [rng.choice(FILLER) for _ in range(sentences)]
            count += 1
            if facts_every and count % facts_every == 0:
                text.insert(rng.randrange(len(text) + 1), rng.choice(fact_sentences(rng)))
            body.append(" ".join(text))
        out.append((f"{s + 1}. {rng.choice(['Planning', 'Architecture', 'Staffing', 'Budget', 'Risks', 'Roadmap'])}"
                    f" {rng.choice(['notes', 'overview', 'decisions', 'status'])}", body))
    return out


def as_markdown(sections, title: str = "Project notes") -> bytes:
    parts = [f"# {title}", ""]
    for heading, body in sections:
        parts += [f"## {heading}", ""]
        for paragraph in body:
            parts += [paragraph, ""]
    return "\n".join(parts).encode()


def as_text(sections) -> bytes:
    return "\n\n".join(p for _, body in sections for p in body).encode()


def as_html(sections, title: str = "Project notes") -> bytes:
    body = "".join(f"<h2>{h}</h2>" + "".join(f"<p>{p}</p>" for p in ps) for h, ps in sections)
    return (f"<!doctype html><html><head><title>{title}</title><script>window.tracking = 'do not index';</script>"
            f"</head><body><nav><a href='/'>Home</a> <a href='/pricing'>Pricing page</a></nav><main><h1>{title}</h1>"
            f"{body}</main><footer>Footer copyright notice</footer></body></html>").encode()


def as_docx(sections, title: str = "Project notes") -> bytes:
    blocks = [("h1", title)]
    for heading, body in sections:
        blocks.append(("h2", heading))
        blocks += [("p", p) for p in body]
    return make_docx(blocks, title=title)


def as_pdf(sections, title: str = "Project notes", lines_per_page: int = 55) -> bytes:
    """One heading line per section and paragraphs separated by blank lines, flowed onto pages."""
    lines: list[str] = []
    for heading, body in sections:
        lines += [heading, ""]
        for paragraph in body:
            lines += textwrap.wrap(paragraph, 95) + [""]
    pages = [lines[i:i + lines_per_page] for i in range(0, len(lines), lines_per_page)]
    return make_pdf(pages, title=title, width=200)
