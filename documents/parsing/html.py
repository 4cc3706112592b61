"""HTML (BeautifulSoup): the page's main content as blocks; navigation, scripts and page chrome dropped."""

from documents.parsing.blocks import CONTROL, Block, ParsedDocument, clean, decode_text, result

_DROP_TAGS = ("script", "style", "noscript", "template", "nav", "iframe", "svg", "canvas", "form", "button",
              "select", "input", "textarea", "object", "embed", "aside", "dialog", "menu")
_DROP_ROLES = ("navigation", "banner", "contentinfo", "search", "menu", "menubar", "complementary")
_BLOCK_TAGS = {
    "address", "article", "blockquote", "details", "dd", "div", "dl", "dt", "fieldset", "figcaption", "figure",
    "footer", "header", "hr", "li", "main", "ol", "p", "pre", "section", "table", "thead", "tbody", "tfoot", "tr",
    "ul", "summary", "caption", "body", "html", "center",
}
_HEADINGS = {f"h{n}": n for n in range(1, 7)}


def parse_html(data: bytes) -> ParsedDocument:
    from bs4 import BeautifulSoup, Comment, NavigableString, Tag

    soup = BeautifulSoup(decode_text(data), "lxml")
    title = clean(soup.title.get_text(" ")) if soup.title else ""
    for tag in soup.find_all(_DROP_TAGS):
        tag.decompose()
    for tag in soup.find_all(attrs={"role": True}):
        if not tag.decomposed and str(tag.get("role", "")).lower() in _DROP_ROLES:
            tag.decompose()
    for tag in soup.find_all(lambda t: t.has_attr("hidden") or str(t.get("aria-hidden", "")).lower() == "true"):
        if not tag.decomposed:
            tag.decompose()
    for comment in soup.find_all(string=lambda s: isinstance(s, Comment)):
        comment.extract()
    root = soup.find("main") or soup.find("article") or soup.body or soup
    if root is not soup.find("main") and root is not soup.find("article"):
        # page chrome: the site's header and footer (not those inside an article)
        for tag in root.find_all(("header", "footer")):
            if not tag.decomposed and tag.find_parent("article") is None:
                tag.decompose()

    blocks: list[Block] = []
    buffer: list[str] = []

    def flush(kind="paragraph"):
        text = clean(" ".join(buffer))
        buffer.clear()
        if text:
            blocks.append(Block(text, kind=kind))

    def walk(node):
        for child in node.children:
            if isinstance(child, NavigableString):
                buffer.append(str(child))
                continue
            if not isinstance(child, Tag):
                continue
            name = child.name.lower() if child.name else ""
            if name in _HEADINGS:
                flush()
                text = clean(child.get_text(" "))
                if text:
                    blocks.append(Block(text, heading_level=_HEADINGS[name], kind="heading"))
            elif name == "tr":
                flush()
                cells = [clean(cell.get_text(" ")) for cell in child.find_all(("td", "th"))]
                cells = [c for c in cells if c]
                if cells:
                    blocks.append(Block(" | ".join(cells), kind="table"))
            elif name == "pre":
                flush()
                text = child.get_text().strip("\n")
                if text.strip():
                    blocks.append(Block(CONTROL.sub("", text).strip(), kind="code"))
            elif name == "br":
                buffer.append(" ")
            elif name in _BLOCK_TAGS:
                flush()
                walk(child)
                flush()
            else:
                walk(child)

    walk(root)
    flush()
    return result(blocks, title=title)
