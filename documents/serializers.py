"""Shapes of the documents API. Serializers check shape only; rules (size, type, ownership) live in services."""

from rest_framework import serializers

from core.serializers import CharField, ChoiceField, DateTimeField, DictField, OwnedPrimaryKeyField, StrictSerializer
from documents.models import Chunk, Document
from memories.models import Project
from memories.serializers import SearchResponseSerializer


class ProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField(help_text="Chunks embedded and extracted so far.")
    total = serializers.IntegerField(help_text="Chunks to process (0 until the file is parsed).")
    percent = serializers.FloatField(help_text="done / total as a percentage (100 once completed).")


def document_progress(document: Document) -> dict:
    total, done = document.chunks_total, min(document.chunks_done, document.chunks_total)
    if document.processing_status == Document.Status.COMPLETED:
        percent = 100.0
    else:
        percent = round(100.0 * done / total, 1) if total else 0.0
    return {"done": done, "total": total, "percent": percent}


class DocumentSerializer(serializers.ModelSerializer):
    status = CharField(source="processing_status", read_only=True,
                                   help_text="pending -> processing -> completed | failed")
    progress = serializers.SerializerMethodField()

    class Meta:
        model = Document
        fields = ["id", "title", "filename", "content_type", "file_size", "project", "status", "progress",
                  "error_message", "page_count", "word_count", "processed_at", "created_at", "updated_at"]
        read_only_fields = fields

    def get_progress(self, document: Document) -> ProgressSerializer:
        return ProgressSerializer(document_progress(document)).data


class DocumentUploadSerializer(StrictSerializer):
    """multipart/form-data: the file, and optionally the project its memories belong to and a title."""

    file = serializers.FileField(allow_empty_file=True, use_url=False,
                                 help_text="PDF, DOCX, HTML, Markdown or plain text.")
    project = OwnedPrimaryKeyField(queryset=Project.objects.all(), required=False, allow_null=True)
    title = CharField(required=False, allow_blank=True, max_length=300)


class ChunkSerializer(serializers.ModelSerializer):
    embedding_pending = serializers.SerializerMethodField()

    class Meta:
        model = Chunk
        fields = ["id", "document", "chunk_index", "content", "page_number", "token_count", "metadata",
                  "embedding_model", "embedding_pending", "created_at"]
        read_only_fields = fields

    def get_embedding_pending(self, chunk: Chunk) -> bool:
        return not chunk.embedding_model


class SearchChunkSerializer(ChunkSerializer):
    document_title = serializers.SerializerMethodField()
    filename = CharField(source="document.filename", read_only=True)

    class Meta(ChunkSerializer.Meta):
        fields = [*ChunkSerializer.Meta.fields, "document_title", "filename"]
        read_only_fields = fields

    def get_document_title(self, chunk: Chunk) -> str:
        return str(chunk.document)


class ScoredChunkSerializer(serializers.Serializer):
    chunk = SearchChunkSerializer()
    score = serializers.FloatField()
    parts = DictField(child=serializers.FloatField())


class ChunkSearchSerializer(StrictSerializer):
    query = CharField(max_length=4000, help_text="What to look for, in natural language.")
    mode = ChoiceField(choices=["semantic", "keyword", "hybrid"], default="hybrid")
    threshold = serializers.FloatField(required=False, allow_null=True, min_value=0, max_value=1, help_text=(
        "semantic: minimum cosine similarity (default 0.3); keyword and hybrid: minimum score."))
    limit = serializers.IntegerField(required=False, default=20, min_value=1, max_value=100)
    project = serializers.IntegerField(required=False, allow_null=True, help_text=(
        "Scope: omitted or null -> documents without a project; a project id -> those plus the "
        "project's documents."))
    all_projects = serializers.BooleanField(required=False, default=False,
                                            help_text="Ignore scope: documents of every project and none.")
    document = serializers.UUIDField(required=False, allow_null=True, help_text="Only this document's chunks.")
    created_after = DateTimeField(required=False)
    created_before = DateTimeField(required=False)


class ChunkSearchResponseSerializer(serializers.Serializer):
    mode = CharField()
    degraded = serializers.BooleanField()
    results = ScoredChunkSerializer(many=True)


class MemorySearchWithChunksResponseSerializer(SearchResponseSerializer):
    """Memory search's answer; with `include_chunks=true` also the matching document chunks (for RAG prompts)."""

    chunks = ScoredChunkSerializer(many=True, required=False, help_text=(
        "Only with include_chunks=true: document chunks for the same query, mode, limit and scope, best first."))
