"""HTML: the main content as blocks, navigation, scripts and page chrome dropped."""

from documents import parsing


def test_html_drops_navigation_scripts_and_page_chrome():
    html = b"""<!doctype html><html><head><title>Team page</title><script>var secret = 'xyz';</script>
    <style>.nav { color: red }</style></head><body>
    <header><a href="/">Home</a><nav><a href="/about">About us</a></nav></header>
    <div role="navigation">Breadcrumbs here</div>
    <main><h1>Team</h1><p>Alice Moreau leads the <b>design</b> team.</p><div>Loose text.<p>Nested.</p></div>
    <ul><li>First item</li><li>Second item</li></ul><pre>code  block</pre>
    <table><tr><th>Name</th><th>Role</th></tr><tr><td>Bruno</td><td>Backend</td></tr></table>
    <p hidden>Invisible</p><aside>Related links</aside><noscript>Enable JS</noscript></main>
    <footer>Copyright 2025</footer></body></html>"""
    parsed = parsing.parse(html, parsing.HTML)
    assert parsed.title == "Team page"
    assert [(b.text, b.heading_level) for b in parsed.blocks] == [
        ("Team", 1), ("Alice Moreau leads the design team.", 0), ("Loose text.", 0), ("Nested.", 0),
        ("First item", 0), ("Second item", 0), ("code  block", 0), ("Name | Role", 0), ("Bruno | Backend", 0),
    ]
    text = " ".join(b.text for b in parsed.blocks)
    for dropped in ("secret", "Home", "About us", "Breadcrumbs", "Invisible", "Related", "Enable JS", "Copyright"):
        assert dropped not in text


def test_html_without_main_keeps_the_body_but_drops_site_header_and_footer():
    html = b"<html><body><header>Site name</header><h2>News</h2><p>The launch is on Monday.</p>" \
           b"<footer>Imprint</footer></body></html>"
    parsed = parsing.parse(html, parsing.HTML)
    assert [b.text for b in parsed.blocks] == ["News", "The launch is on Monday."]
