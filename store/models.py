from django.conf import settings
from django.db import models
from pgvector.django import VectorField

from memories.models import EMBEDDING_DIMENSIONS, Memory, dimensions_field, hnsw_index, next_embedding_field


class ItemVector(models.Model):
    """One indexed field of a LangGraph store item: the text at one path of the item's value (`"text"`,
    `"a.b"`, each element of `"arr[*].x"`), embedded on its own. A store search scores an item by its best
    field. Written with the item, in the same transaction; an item put with `index=False` has none."""

    memory = models.ForeignKey(
        Memory, on_delete=models.CASCADE, related_name="store_vectors",
        help_text="The memory (store item) whose value the text comes from.",
    )
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+",
        help_text="Same as the memory's owner (kept here for row-level security and owner-first filtering).",
    )
    path = models.CharField(
        max_length=300,
        help_text='The field path, with ".<n>" appended for the n-th of several texts (LangGraph\'s naming), '
                  'e.g. "$", "title", "sections.1".',
    )
    field = models.CharField(
        max_length=200, default="",
        help_text='The field path as asked for in `index` ("$", "title", "sections[*].text"); `path` adds the '
                  "text's position when the path gives several.",
    )
    embedding = VectorField(
        dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True,
        help_text="Unit vector of the field's text; empty while pending (written by a model the table no longer "
                  "uses: `manage.py reembed` embeds it again).",
    )
    embedding_model = models.CharField(max_length=200, blank=True, help_text="Model that made the embedding.")
    embedding_dimensions = dimensions_field()
    embedding_next = next_embedding_field()

    class Meta:
        constraints = [models.UniqueConstraint(fields=["memory", "path"], name="itemvector_unique_path")]
        indexes = [
            hnsw_index("itemvector_embedding_hnsw"),
            models.Index(fields=["owner", "memory"], name="itemvector_owner_memory"),
        ]

    def __str__(self) -> str:
        return f"{self.memory_id}:{self.path}"
