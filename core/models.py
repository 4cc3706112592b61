from django.conf import settings
from django.db import models


class IdempotencyKey(models.Model):
    """An `Idempotency-Key` a user sent with a write (core.idempotency): the request's fingerprint and, once it
    was answered, the answer, replayed to a retry with the same key and body for IDEMPOTENCY_TTL_HOURS."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+",
                              help_text="Whose request (the credential's user, or the end user it acts for).")
    key = models.CharField(max_length=255, help_text="The client's Idempotency-Key header.")
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of method, path and body.")
    method = models.CharField(max_length=10, help_text="The request's HTTP method.")
    path = models.CharField(max_length=2000, help_text="The request's path.")
    response_status = models.PositiveSmallIntegerField(
        null=True, blank=True, help_text="The answer's status (empty: the request is still in progress).")
    response_body = models.TextField(blank=True, help_text="The answer's body as sent (the same bytes replayed).")
    response_type = models.CharField(max_length=100, blank=True, help_text="The answer's Content-Type.")
    created_at = models.DateTimeField(auto_now_add=True, help_text="When the first request came.")
    completed_at = models.DateTimeField(null=True, blank=True, help_text="When it was answered.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "key"], name="idempotencykey_owner_key")]
        indexes = [models.Index(fields=["created_at"], name="idempotencykey_created")]

    def __str__(self) -> str:
        return f"{self.method} {self.path} ({self.key})"
