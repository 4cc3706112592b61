"""The imports admin: staff see every import, read-only."""

from django.urls import reverse

from imports import services
from tests.factories import UserFactory
from tests.imports.samples import raw


def test_imports_are_listed_and_shown_read_only(admin_client, db):
    job = services.import_upload(owner=UserFactory(), raw=raw("mem0"), filename="mem0.json")
    listing = admin_client.get(reverse("admin:imports_import_changelist"), {"q": str(job.pk)})
    assert listing.status_code == 200 and b"mem0.json" in listing.content
    page = admin_client.get(reverse("admin:imports_import_change", args=[job.pk]))
    assert page.status_code == 200 and b'name="_save"' not in page.content
    assert admin_client.get(reverse("admin:imports_import_add")).status_code == 403
