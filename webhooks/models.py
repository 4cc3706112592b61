import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.db import models


class Endpoint(models.Model):
    """A URL of the user's that is sent, signed with its secret, the events it subscribes to (core.events).
    It is switched off after WEBHOOKS_DISABLE_AFTER deliveries in a row failed; its owner switches it on again."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="webhook_endpoints",
                              help_text="Whose events it receives.")
    url = models.URLField(max_length=2000, help_text="http(s) URL the events are POSTed to (no redirects followed).")
    secret = models.CharField(max_length=100, help_text="HMAC-SHA256 key of the signatures (shown once, on "
                                                        "creation or rotation).")
    events = ArrayField(models.CharField(max_length=40), default=list, blank=True,
                        help_text="Events sent (core.events.EVENTS); empty: every event.")
    description = models.CharField(max_length=200, blank=True, help_text="What it is for (the owner's note).")
    active = models.BooleanField(default=True, help_text="Whether events are sent to it.")
    failure_count = models.PositiveIntegerField(
        default=0, help_text="Deliveries in a row that failed for good (0 after any success).")
    disabled_reason = models.TextField(blank=True, help_text="Why it was switched off automatically, if it was.")
    disabled_at = models.DateTimeField(null=True, blank=True, help_text="When it was switched off automatically.")
    created_at = models.DateTimeField(auto_now_add=True, help_text="When it was registered.")
    updated_at = models.DateTimeField(auto_now=True, help_text="When it last changed.")

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "active"], name="webhook_endpoint_owner_active")]

    def __str__(self) -> str:
        return self.url


class Delivery(models.Model):
    """One event sent (or to be sent) to one endpoint: the delivery log. Each attempt is one signed POST; failed
    attempts are retried with backoff until WEBHOOKS_MAX_RETRIES, then the delivery is `failed`."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        RETRYING = "retrying", "Retrying"
        DELIVERED = "delivered", "Delivered"
        FAILED = "failed", "Failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False,
                          help_text="Sent as Memento-Delivery and in the body: receivers use it to drop repeats.")
    endpoint = models.ForeignKey(Endpoint, on_delete=models.CASCADE, related_name="deliveries",
                                 help_text="Where it goes.")
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+",
                              help_text="Same as the endpoint's owner (kept here for row-level security).")
    event = models.CharField(max_length=40, help_text="What happened (core.events.EVENTS).")
    payload = models.JSONField(help_text="The event's data, sent as the body's `data`.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING,
                              help_text="pending -> delivered | retrying -> ... -> delivered | failed")
    attempts = models.PositiveIntegerField(default=0, help_text="POSTs made so far.")
    response_status = models.PositiveIntegerField(null=True, blank=True,
                                                  help_text="HTTP status of the last attempt, if it got one.")
    last_error = models.TextField(blank=True, help_text="Why the last attempt failed.")
    next_attempt_at = models.DateTimeField(null=True, blank=True, help_text="When the next retry is due.")
    created_at = models.DateTimeField(auto_now_add=True, help_text="When the event happened.")
    last_attempt_at = models.DateTimeField(null=True, blank=True, help_text="When the last POST was made.")
    finished_at = models.DateTimeField(null=True, blank=True, help_text="When it was delivered or gave up.")

    class Meta:
        ordering = ["-created_at"]
        verbose_name_plural = "deliveries"
        indexes = [models.Index(fields=["endpoint", "-created_at"], name="webhook_delivery_endpoint"),
                   models.Index(fields=["owner", "-created_at"], name="webhook_delivery_owner")]

    def __str__(self) -> str:
        return f"{self.event} -> {self.endpoint_id} ({self.status})"
