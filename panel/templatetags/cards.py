"""The panel's cards in one shape each: `{% card_table %}` for the list tables (documents, imports, conversations,
webhooks and their deliveries: a card with the table, its header, one row per item from the tag's body, the line
shown when there is none, the pager when the items are a page) and `{% status_pill %}` for a status."""

from django import template
from django.template.base import token_kwargs
from django.utils.html import format_html
from django.utils.safestring import mark_safe

register = template.Library()


def _names(text: str) -> list[str]:
    return [name.strip() for name in (text or "").split(",") if name.strip()]


class CardTableNode(template.Node):
    def __init__(self, items, name: str, options: dict, nodelist):
        self.items, self.name, self.options, self.nodelist = items, name, options, nodelist

    def render(self, context):
        items = self.items.resolve(context)
        options = {key: value.resolve(context) for key, value in self.options.items()}
        rows = []
        with context.push():
            for item in items:
                context[self.name] = item
                rows.append(self.nodelist.render(context))
        wide_only = set(_names(options.get("wide_only", "")))
        card = context.template.engine.get_template("panel/_card_table.html")
        return card.render(context.new({
            "columns": [(name, name in wide_only) for name in _names(options["columns"])],
            "rows": mark_safe("".join(rows)), "empty": options.get("empty", ""),
            "heading": options.get("heading", ""), "table_id": options.get("id", ""),
            "page": items if hasattr(items, "paginator") else None, "query": context.get("query"),
        }))


@register.tag
def card_table(parser, token):
    """{% card_table page as document columns="Document, Status, Size" wide_only="Size" empty="None yet." %}
    <tr>...</tr>{% endcard_table %}; also heading="..." and id="..." (the table's)."""
    bits = token.split_contents()
    if len(bits) < 4 or bits[2] != "as":
        raise template.TemplateSyntaxError("card_table takes: <items> as <name> columns=\"...\" ...")
    options = token_kwargs(bits[4:], parser)
    if "columns" not in options:
        raise template.TemplateSyntaxError("card_table needs columns=\"...\"")
    nodelist = parser.parse(("endcard_table",))
    parser.delete_first_token()
    return CardTableNode(parser.compile_filter(bits[1]), bits[3], options, nodelist)


# a webhook delivery's status in the colours of the other statuses: delivered as done, failed, anything else under way
DELIVERY_STATES = {"delivered": "completed", "failed": "failed"}


@register.filter
def delivery_state(status: str) -> str:
    return DELIVERY_STATES.get(status, "processing")


@register.simple_tag
def status_pill(state: str, label: str) -> str:
    """A status as the panel shows it: its label, coloured by its state (completed, failed, processing...)."""
    return format_html('<span class="status status-{}">{}</span>', state, label)
