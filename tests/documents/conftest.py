import pytest
from django.core.files.uploadedfile import SimpleUploadedFile


def close(a, b, tolerance: float = 1e-3) -> bool:
    """Two embeddings equal up to float noise (batch composition changes the last digits)."""
    return len(a) == len(b) and max(abs(x - y) for x, y in zip(a, b, strict=True)) < tolerance


def upload(name: str, data: bytes, content_type: str = "application/octet-stream") -> SimpleUploadedFile:
    return SimpleUploadedFile(name, data, content_type=content_type)


@pytest.fixture(autouse=True)
def unhurried_shares(settings, monkeypatch):
    """Shares by chunk count only: on a slow machine a share's time (DOCUMENT_TASK_SECONDS) would end it early and
    change the shares these tests count; the tests of the time share set it themselves."""
    from documents import shares

    settings.DOCUMENT_TASK_SECONDS = 3600
    monkeypatch.setattr(shares, "_pace", None)
