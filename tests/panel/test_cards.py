"""The panel's list tables in one shape (`{% card_table %}`, `{% status_pill %}`) and the one way a service's
refusal reaches the page (panel.forms: `refusal_text`, `write_and_tell`, `submit_upload`)."""

import re

import pytest
from django.core.exceptions import ValidationError
from django.template import Context, Template

from panel.forms import refusal_text
from webhooks.models import Delivery, Endpoint

pytestmark = pytest.mark.django_db


@pytest.fixture
def panel(client, user):
    client.force_login(user)
    return client


def rows_of(html: str, table_id: str | None = None) -> list[str]:
    opening = f'<table class="table" id="{table_id}">' if table_id else '<table class="table">'
    table = re.search(re.escape(opening) + "(.*?)</table>", html, re.S)
    return re.findall(r"<tr[^>]*>(.*?)</tr>", table.group(1).split("<tbody>")[1], re.S)


def test_an_empty_list_says_so_across_every_column(panel):
    html = panel.get("/documents/").content.decode()
    assert '<th class="hide-narrow">Size</th>' in html and "<th>Document</th>" in html
    assert rows_of(html) == ['<td colspan="4" class="muted">No documents yet.</td>']
    assert rows_of(panel.get("/conversations/").content.decode())[0].startswith('<td colspan="5" class="muted">')


def test_a_deliveries_table_has_a_row_per_delivery_with_its_status_and_a_pager(panel, user):
    endpoint = Endpoint.objects.create(owner=user, url="https://1.1.1.1/hook", secret="whsec_x")
    for status in ["failed"] + ["delivered"] * 50:
        Delivery.objects.create(endpoint=endpoint, owner=user, event="memory.created", payload={}, status=status)
    html = panel.get(f"/webhooks/{endpoint.pk}/").content.decode()
    rows = rows_of(html, "deliveries")
    assert len(rows) == 50
    pills = [re.search(r'<span class="status status-(\w+)">(\w+)</span>', row).groups() for row in rows]
    assert set(pills) <= {("completed", "Delivered"), ("failed", "Failed")} and ("completed", "Delivered") in pills
    assert '<nav class="pager"' in html and "Page 1 of 2" in html
    assert '<span class="status status-completed">On</span>' in html  # the endpoint's own state


def test_the_webhook_list_has_no_pager_and_names_a_switched_off_endpoint_reason(panel, user):
    Endpoint.objects.create(owner=user, url="https://1.1.1.1/hook", secret="whsec_x", active=False,
                            disabled_reason="Switched off after 5 failed deliveries")
    html = panel.get("/webhooks/").content.decode()
    [row] = rows_of(html)
    assert '<span class="status status-failed">Off</span>' in row and "Switched off after 5" in row
    assert "pager" not in html


def test_the_status_pill_escapes_what_it_shows():
    html = Template('{% load cards %}{% status_pill state label %}').render(
        Context({"state": "done", "label": "<b>x</b>"}))
    assert html == '<span class="status status-done">&lt;b&gt;x&lt;/b&gt;</span>'


def test_a_refusal_without_a_field_is_its_reasons_and_one_with_fields_names_them():
    assert refusal_text(ValidationError("Not now.")) == "Not now."
    assert refusal_text(ValidationError({"name": ["Too long.", "Taken."], "section": "Unknown."})) == (
        "name: Too long. Taken.; section: Unknown.")


def test_a_refused_panel_write_is_an_error_message_not_a_500(panel, user):
    response = panel.post("/projects/new/", {"name": ""}, follow=True)
    assert response.status_code == 200
    assert "name:" in response.content.decode()


def test_an_upload_over_the_limit_is_refused_on_its_field(panel, settings):
    settings.IMPORT_MAX_BYTES = 10
    response = panel.post("/imports/", {"format": "auto", "file": _file(b"x" * 11)})
    assert response.status_code == 200 and "the limit is 10" in response.content.decode()


def _file(content: bytes):
    from django.core.files.uploadedfile import SimpleUploadedFile

    return SimpleUploadedFile("export.jsonl", content)
