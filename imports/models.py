import uuid

from django.conf import settings
from django.db import models


class Import(models.Model):
    """An export a user brought in (ChatGPT, Claude, Mem0, a LangGraph store, JSON Lines of messages). It is read
    and checked whole when it arrives (a bad item refuses it, unless the user asked to skip bad items); its items
    are then written in the background, a share at a time, as conversations and memories."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        PROCESSING = "processing", "Processing"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False, help_text="Stable identifier.")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="imports", help_text="Who imported it.",
    )
    format = models.CharField(max_length=20, help_text="chatgpt, claude, mem0, langgraph or jsonl.")
    filename = models.CharField(max_length=255, blank=True, help_text="The uploaded file's sanitised name.")
    file_sha256 = models.CharField(max_length=64, blank=True, help_text="SHA-256 of the uploaded bytes.")
    skip_bad = models.BooleanField(default=False, help_text="Bad items were skipped (else they refused the file).")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING,
                              help_text="pending -> processing -> completed | failed")
    items_total = models.PositiveIntegerField(default=0, help_text="Conversations and memories to write.")
    problems = models.JSONField(
        default=list, blank=True,
        help_text="The bad items skipped at upload: position (item or line), field and message each.",
    )
    error_message = models.TextField(blank=True, help_text="Why processing stopped, when it failed.")
    queued_at = models.DateTimeField(
        null=True, blank=True,
        help_text="When it was handed to the worker (empty: waiting behind the owner's other imports; each owner "
                  "has one import in the queue at a time).",
    )
    created_at = models.DateTimeField(auto_now_add=True, help_text="When it was uploaded.")
    updated_at = models.DateTimeField(auto_now=True, help_text="When it last changed (progress included).")
    finished_at = models.DateTimeField(null=True, blank=True, help_text="When it completed or failed.")

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "-created_at"], name="import_owner_created")]

    def __str__(self) -> str:
        return f"{self.format} import {self.filename or self.pk}"


class ImportItem(models.Model):
    """One conversation or memory of an import, as read from the export (the work list the worker goes through),
    and what became of it. Its fingerprint makes imports idempotent: an item whose fingerprint the owner already
    imported is recorded as a duplicate and writes nothing."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        DONE = "done", "Written"
        DUPLICATE = "duplicate", "Already imported"

    id = models.BigAutoField(primary_key=True)
    job = models.ForeignKey(Import, on_delete=models.CASCADE, related_name="items", help_text="Its import.")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+",
        help_text="Same as the import's owner (kept here for row-level security).",
    )
    position = models.PositiveIntegerField(help_text="1-based position in the export (a line for JSON Lines).")
    kind = models.CharField(max_length=20, help_text="conversation or memory.")
    fingerprint = models.CharField(max_length=64, help_text="SHA-256 of the item as read (its identity).")
    payload = models.JSONField(help_text="The item as read: a conversation with its messages, or a memory.")
    weight = models.PositiveIntegerField(default=1, help_text="Work it takes: messages, or 1 for a memory.")
    status = models.CharField(max_length=20, choices=Status.choices, default=Status.PENDING,
                              help_text="Whether it was written yet.")
    written = models.PositiveIntegerField(default=0, help_text="Messages or memories it wrote.")
    result = models.JSONField(default=dict, blank=True, help_text="What it became: conversation or memory id.")

    class Meta:
        ordering = ["job", "position"]
        constraints = [models.UniqueConstraint(fields=["job", "position"], name="importitem_unique_position")]
        indexes = [
            models.Index(fields=["owner", "fingerprint"], name="importitem_owner_fingerprint"),
            models.Index(fields=["job", "status", "position"], name="importitem_job_status"),
        ]

    def __str__(self) -> str:
        return f"{self.job_id}#{self.position}"
