import uuid

from django.conf import settings
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from pgvector.django import VectorField

from memories.models import (
    EMBEDDING_DIMENSIONS,
    dimensions_field,
    hnsw_index,
    next_embedding_field,
    owner_lexemes_index,
)


def upload_path(instance: "Document", filename: str) -> str:
    """Files are stored under a generated name; the original name is kept in `filename` only."""
    suffix = filename.rsplit(".", 1)[-1].lower() if "." in filename else "bin"
    return f"documents/{instance.owner_id}/{uuid.uuid4().hex}.{suffix[:10]}"


class Document(models.Model):
    """A file a user uploaded (PDF, DOCX, HTML, Markdown, text). It is parsed into chunks, and memories are
    extracted from the chunks in the background (seed 004: documents -> chunks -> memories)."""

    class Status(models.TextChoices):
        PENDING = "pending", "Pending"
        PROCESSING = "processing", "Processing"
        COMPLETED = "completed", "Completed"
        FAILED = "failed", "Failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False, help_text="Stable identifier.")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="documents", help_text="Who uploaded it."
    )
    project = models.ForeignKey(
        "memories.Project", null=True, blank=True, on_delete=models.SET_NULL, related_name="documents",
        help_text="Memories derived from it are scoped to this project.",
    )
    title = models.CharField(max_length=300, blank=True, help_text="Human-readable title.")
    file = models.FileField(upload_to=upload_path, help_text="The stored file (generated name).")
    filename = models.CharField(max_length=255, help_text="The sanitised original file name.")
    content_type = models.CharField(max_length=100, blank=True, help_text="MIME type of the file.")
    file_size = models.PositiveBigIntegerField(default=0, help_text="Size in bytes.")
    processing_status = models.CharField(
        max_length=20, choices=Status.choices, default=Status.PENDING, help_text="Where processing stands."
    )
    chunks_total = models.PositiveIntegerField(default=0, help_text="Chunks to process (0 until parsed).")
    chunks_done = models.PositiveIntegerField(default=0, help_text="Chunks processed so far.")
    queued_at = models.DateTimeField(
        null=True, blank=True,
        help_text="When its processing was handed to the worker (empty: waiting behind the owner's other "
                  "documents; each owner has one document in the queue at a time).",
    )
    processed_at = models.DateTimeField(null=True, blank=True, help_text="When processing finished.")
    error_message = models.TextField(blank=True, help_text="Why processing failed, in plain words.")
    page_count = models.PositiveIntegerField(null=True, blank=True, help_text="Pages (PDF).")
    word_count = models.PositiveIntegerField(null=True, blank=True, help_text="Words of extracted text.")
    created_at = models.DateTimeField(auto_now_add=True, help_text="When it was uploaded.")
    updated_at = models.DateTimeField(auto_now=True, help_text="When it last changed.")

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["owner", "-created_at"], name="document_owner_created")]

    def __str__(self) -> str:
        return self.title or self.filename


class Chunk(models.Model):
    """A passage of a document, small enough for the embedding model's window, kept with its position and
    section so that retrieval can cite it."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False, help_text="Stable identifier.")
    document = models.ForeignKey(
        Document, on_delete=models.CASCADE, related_name="chunks", help_text="The document it comes from."
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+",
        help_text="Same as the document's owner (kept here for row-level security).",
    )
    content = models.TextField(help_text="The passage text.")
    embedding = VectorField(dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True, help_text="Unit vector.")
    embedding_model = models.CharField(max_length=200, blank=True, help_text="Model that made the embedding.")
    embedding_dimensions = dimensions_field()
    embedding_next = next_embedding_field()
    search_vector = models.GeneratedField(
        expression=SearchVector("content", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
        help_text="Full-text vector of the content, kept in sync by PostgreSQL.",
    )
    chunk_index = models.PositiveIntegerField(help_text="0-based position in the document.")
    page_number = models.PositiveIntegerField(null=True, blank=True, help_text="Page it starts on (PDF).")
    metadata = models.JSONField(default=dict, blank=True, help_text="Section title, heading level and the like.")
    token_count = models.PositiveIntegerField(default=0, help_text="Word pieces in the passage.")
    created_at = models.DateTimeField(auto_now_add=True, help_text="When it was made.")

    class Meta:
        ordering = ["document", "chunk_index"]
        constraints = [
            models.UniqueConstraint(fields=["document", "chunk_index"], name="chunk_unique_index"),
        ]
        indexes = [
            hnsw_index("chunk_embedding_hnsw"),
            owner_lexemes_index("chunk_owner_lexemes_gin"),
            models.Index(fields=["owner", "document"], name="chunk_owner_document"),
        ]

    def __str__(self) -> str:
        return f"{self.document_id}#{self.chunk_index}"
