import uuid

from django.conf import settings
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models import Q
from django.utils import timezone
from pgvector.django import VectorField

from memories.models import (
    EMBEDDING_DIMENSIONS,
    dimensions_field,
    hnsw_index,
    next_embedding_field,
    owner_lexemes_index,
)


class Conversation(models.Model):
    """A thread of messages between a user and an agent. Memories are extracted from its messages
    and link back to it."""

    class Status(models.TextChoices):
        ACTIVE = "active", "Active"
        COMPLETED = "completed", "Completed"
        ARCHIVED = "archived", "Archived"
        PAUSED = "paused", "Paused"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False, help_text="Stable identifier.")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="conversations",
        help_text="The user who is talking.",
    )
    project = models.ForeignKey(
        "memories.Project", null=True, blank=True, on_delete=models.SET_NULL, related_name="conversations",
        help_text="Memories extracted here may be scoped to this project.",
    )
    agent_id = models.CharField(max_length=200, blank=True, help_text="The agent or character taking part.")
    title = models.CharField(max_length=300, blank=True, help_text="Human-readable title.")
    summary = models.TextField(blank=True, help_text="Summary of what was said.")
    status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.ACTIVE, help_text="Lifecycle state."
    )
    metadata = models.JSONField(default=dict, blank=True, help_text="Free-form JSON from the client.")
    created_at = models.DateTimeField(auto_now_add=True, help_text="When it started.")
    updated_at = models.DateTimeField(auto_now=True, help_text="When it last changed.")
    ended_at = models.DateTimeField(null=True, blank=True, help_text="When it was ended.")

    class Meta:
        ordering = ["-created_at"]
        indexes = [
            models.Index(fields=["owner", "-created_at"], name="conversation_owner_created"),
            models.Index(fields=["owner", "agent_id", "status"], name="conversation_owner_agent"),
        ]

    def __str__(self) -> str:
        return self.title or str(self.id)


class Message(models.Model):
    """One turn of a conversation: an episode that stays searchable by meaning and by words (what was said is
    never lost to a bad extraction). Each user message also goes through memory extraction, whose state it
    shows."""

    class Role(models.TextChoices):
        USER = "user", "User"
        ASSISTANT = "assistant", "Assistant"
        SYSTEM = "system", "System"
        TOOL = "tool", "Tool"

    class Extraction(models.TextChoices):
        PENDING = "pending", "Pending"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"
        SKIPPED = "skipped", "Skipped"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False, help_text="Stable identifier.")
    conversation = models.ForeignKey(
        Conversation, on_delete=models.CASCADE, related_name="messages", help_text="The thread it belongs to."
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+",
        help_text="Same as the conversation's owner (kept here for row-level security).",
    )
    role = models.CharField(max_length=20, choices=Role.choices, help_text="Who spoke.")
    name = models.CharField(
        max_length=200, blank=True,
        help_text="The speaker's name, when the client gives one (shown in context instead of the role).",
    )
    content = models.TextField(help_text="What was said.")
    sent_at = models.DateTimeField(
        default=timezone.now,
        help_text="When it was said (the client's original time for imported history, else when received). "
                  "Orders the conversation and dates the memories extracted from it.",
    )
    embedding = VectorField(
        dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True,
        help_text="Unit vector of the content; null until the background embedding has run.",
    )
    embedding_model = models.CharField(max_length=200, blank=True, help_text="Model that made the embedding.")
    embedding_dimensions = dimensions_field()
    embedding_next = next_embedding_field()
    search_vector = models.GeneratedField(
        expression=SearchVector("name", "content", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
        help_text="Full-text vector of the speaker's name and the content, kept in sync by PostgreSQL.",
    )
    outline = models.JSONField(
        null=True, blank=True, editable=False,
        help_text="What an excerpt needs of the turn, worked out when it is embedded: its size in word pieces and, "
                  "for a long turn, its sentences' spans, sizes and words (conversations.excerpts.outline). "
                  "Empty: worked out when shown.",
    )
    client_message_id = models.CharField(
        max_length=200, blank=True, help_text="The client's own id; sending it twice appends once."
    )
    sequence = models.PositiveIntegerField(help_text="Position in the conversation, from 1.")
    metadata = models.JSONField(default=dict, blank=True, help_text="Free-form JSON from the client.")
    extraction_status = models.CharField(
        max_length=20, choices=Extraction.choices, default=Extraction.PENDING,
        help_text="Where memory extraction for this message stands.",
    )
    extraction_error = models.TextField(blank=True, help_text="Why extraction failed, when it did.")
    extraction_queued_at = models.DateTimeField(
        null=True, blank=True, help_text="When extraction was last queued (null: waiting for its trigger).",
    )
    created_at = models.DateTimeField(auto_now_add=True, help_text="When it was received.")

    class Meta:
        ordering = ["conversation", "sequence"]
        constraints = [
            models.UniqueConstraint(fields=["conversation", "sequence"], name="message_unique_sequence"),
            models.UniqueConstraint(
                fields=["conversation", "client_message_id"], condition=~Q(client_message_id=""),
                name="message_unique_client_id",
            ),
        ]
        indexes = [
            models.Index(fields=["owner", "extraction_status"], name="message_owner_extraction"),
            hnsw_index("message_embedding_hnsw"),
            owner_lexemes_index("message_owner_lexemes_gin"),
            models.Index(fields=["conversation", "sent_at", "sequence"], name="message_conversation_time"),
            # the sweep's work list: messages still waiting for their vector
            models.Index(fields=["created_at"], condition=Q(embedding__isnull=True), name="message_unembedded"),
        ]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"

    def embedding_text(self) -> str:
        """What is embedded: the content, after the speaker's name when there is one (as the full-text vector
        has it), so that "what did Melanie paint?" finds Melanie's turn."""
        return f"{self.name}: {self.content}" if self.name else self.content
