"""Shapes of the imports API. Serializers check shape only; reading and checking the export is the services'."""

from rest_framework import serializers

from core.serializers import ChoiceField, StrictSerializer
from imports import formats, selectors
from imports.models import Import


class ImportProgressSerializer(serializers.Serializer):
    done = serializers.IntegerField(help_text="Items (conversations, memories) written or found already imported.")
    total = serializers.IntegerField(help_text="Items to write.")
    percent = serializers.FloatField(help_text="done / total as a percentage (100 once completed).")


class ImportCountsSerializer(serializers.Serializer):
    conversations = serializers.IntegerField(help_text="Conversations written.")
    messages = serializers.IntegerField(help_text="Messages written.")
    memories = serializers.IntegerField(help_text="Memories written (created or updated).")
    duplicates = serializers.IntegerField(help_text="Items already imported before: nothing written.")
    skipped = serializers.IntegerField(help_text="Bad items skipped at upload (see `problems`).")


class ImportSerializer(serializers.ModelSerializer):
    progress = serializers.SerializerMethodField()
    counts = serializers.SerializerMethodField()

    class Meta:
        model = Import
        fields = ["id", "format", "filename", "status", "skip_bad", "progress", "counts", "problems",
                  "error_message", "created_at", "updated_at", "finished_at"]
        read_only_fields = fields

    def _summary(self, job: Import) -> dict:
        cache = self.context.setdefault("summaries", {})
        if job.pk not in cache:
            cache[job.pk] = selectors.import_summary(job)
        return cache[job.pk]

    def get_progress(self, job: Import) -> ImportProgressSerializer:
        return ImportProgressSerializer(self._summary(job)["progress"]).data

    def get_counts(self, job: Import) -> ImportCountsSerializer:
        return ImportCountsSerializer(self._summary(job)["counts"]).data


class ImportUploadSerializer(StrictSerializer):
    """multipart/form-data: the export, its format (told from the file by default) and whether bad items are
    skipped (by default one bad item refuses the whole file, and nothing is written)."""

    file = serializers.FileField(allow_empty_file=True, use_url=False,
                                 help_text="conversations.json, an export zip, Mem0 or LangGraph JSON, JSON Lines.")
    format = ChoiceField(choices=formats.FORMATS, default="auto", help_text="The export's format.")
    skip_bad = serializers.BooleanField(default=False, help_text="Skip bad items (listed in `problems`).")
