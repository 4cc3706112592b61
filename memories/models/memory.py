"""A memory and what it belongs to: Project, Memory (versioned: MemoryHistory) and its QuerySet's filters."""

import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from django.db.models import ExpressionWrapper, Q
from django.db.models.functions import Now
from django.db.models.lookups import GreaterThan
from django.utils import timezone
from pgvector import HalfVector
from pgvector.django import CosineDistance, VectorField
from simple_history.models import HistoricalRecords

from core import rls
from integrations.embeddings import model_of
from memories.models.columns import (
    EMBEDDING_DIMENSIONS,
    dimensions_field,
    halfvec,
    hnsw_index,
    next_embedding_field,
    owner_lexemes_index,
)
from memories.models.expiry import expired_q, ttl_deadline


def default_namespace() -> list[str]:
    return ["memories"]


class HistoryAction(models.Model):
    """Fields every memory history row carries besides the snapshot."""

    class Action(models.TextChoices):
        CREATE = "CREATE", "Create"
        UPDATE = "UPDATE", "Update"
        DELETE = "DELETE", "Soft delete"
        RESTORE = "RESTORE", "Restore"
        REVERT = "REVERT", "Revert"
        SUPERSEDE = "SUPERSEDE", "Superseded"
        EMBED = "EMBED", "Embedding (re)computed"

    history_action = models.CharField(
        max_length=20, choices=Action.choices, blank=True, help_text="What happened to the memory."
    )

    class Meta:
        abstract = True


class Project(models.Model):
    """A piece of work a user keeps memories for. Memories with a project are project-scoped; without one they
    are user-scoped and apply everywhere (seed 004)."""

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="projects", help_text="Who owns it."
    )
    name = models.CharField(max_length=200, help_text="Human-readable name, unique per owner.")
    description = models.TextField(blank=True, help_text="What the project is about.")
    created_at = models.DateTimeField(auto_now_add=True, help_text="When it was created.")
    updated_at = models.DateTimeField(auto_now=True, help_text="When it last changed.")

    class Meta:
        ordering = ["name"]
        constraints = [models.UniqueConstraint(fields=["owner", "name"], name="project_unique_name_per_owner")]

    def __str__(self) -> str:
        return self.name


class MemoryQuerySet(models.QuerySet):
    def owned_by(self, user) -> "MemoryQuerySet":
        """`user`'s memories; when the request's token confines the user to a project or an agent, only those
        (the same limits row-level security applies: core.rls.confinement)."""
        qs = self.filter(owner=user)
        scope = rls.confinement(user)
        if scope is not None and scope.project_id is not None:
            qs = qs.filter(project_id=scope.project_id)
        if scope is not None and scope.agent_id:
            qs = qs.filter(agent_id=scope.agent_id)
        return qs

    def active(self) -> "MemoryQuerySet":
        """Live memories: not soft-deleted, not superseded, not expired."""
        return self.filter(is_active=True, superseded_by__isnull=True).unexpired()

    def unexpired(self) -> "MemoryQuerySet":
        return self.filter(
            Q(expires_at__isnull=True) | Q(expires_at__gt=Now()),
            Q(ttl_minutes__isnull=True) | Q(GreaterThan(ttl_deadline(), Now())),
        )

    def expired(self) -> "MemoryQuerySet":
        """Past `expires_at`, or past their TTL (`ttl_minutes` after the last write or read)."""
        return self.filter(expired_q())

    def for_display(self) -> "MemoryQuerySet":
        """Rows to show: the vector and the tsvector stay in the database (parsing a 384-float vector costs more
        than the rest of the row); `has_embedding` says whether there is a vector."""
        return self.defer("embedding", "search_vector").annotate(
            has_embedding=ExpressionWrapper(Q(embedding__isnull=False), output_field=models.BooleanField())
        )

    def valid_at(self, when) -> "MemoryQuerySet":
        """What was true at `when` (valid time), superseded or not: became true by then and had not stopped."""
        return self.filter(Q(valid_from__lte=when), Q(valid_to__isnull=True) | Q(valid_to__gt=when))

    def in_scope(self, project) -> "MemoryQuerySet":
        """Seed 004's scope rule: no project -> user-scoped memories only; a project -> those plus its own."""
        if project is None:
            return self.filter(project__isnull=True)
        return self.filter(Q(project__isnull=True) | Q(project=project))

    def in_namespace(self, prefix: list[str]) -> "MemoryQuerySet":
        """Memories whose namespace starts with `prefix`."""
        if not prefix:
            return self
        return self.filter(**{f"namespace__0_{len(prefix)}": prefix})

    def nearest(self, vector, model: str | None = None, *, exact: bool = False) -> "MemoryQuerySet":
        """Order by cosine distance to `vector` (of `model`, default the one it names: only memories embedded by
        that model are compared), through the half-precision HNSW index; `exact`: by the true distance of every
        row the other filters leave ("+ 0" is an order no index serves). One owner's nearest:
        memories.vectors.nearest_of_owner chooses."""
        distance = CosineDistance(halfvec(), HalfVector(vector))
        queryset = self.filter(embedding__isnull=False, embedding_model=model or model_of(vector)).annotate(
            distance=distance)
        if exact:
            return queryset.order_by(ExpressionWrapper(distance + 0.0, output_field=models.FloatField()))
        return queryset.order_by("distance")


class Memory(models.Model):
    """One durable piece of knowledge about a user: a fact, preference, event or instruction an agent should
    remember across conversations. Memories are versioned (every change is in `history`), can be superseded by a
    newer memory, are soft-deleted, and are scoped to one owner and optionally one project and agent."""

    class Source(models.TextChoices):
        EXPLICIT = "explicit", "Explicit (the user asked to remember it)"
        EXTRACTED = "extracted", "Extracted from a conversation"
        INFERRED = "inferred", "Inferred from context"
        UPDATED = "updated", "An updated version of another memory"
        SYSTEM = "system", "System generated"
        DOCUMENT = "document", "Derived from a document"
        IMPORT = "import", "Imported"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False, help_text="Stable identifier.")
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memories", db_index=False,  # (owner, stamp)
        help_text="The user this memory belongs to; nobody else can see it.",
    )
    project = models.ForeignKey(
        Project, null=True, blank=True, on_delete=models.CASCADE, related_name="memories",
        help_text="Empty: user-scoped (applies everywhere). Set: project-scoped.",
    )
    agent_id = models.CharField(max_length=200, blank=True, help_text="The agent that owns it, if any.")
    namespace = ArrayField(
        models.CharField(max_length=200), default=default_namespace,
        help_text='Organisational path, e.g. ["memories", "preferences"]; non-empty strings.',
    )
    key = models.CharField(
        max_length=255, help_text="Unique per owner and namespace among live memories; a UUID when not given."
    )
    content = models.TextField(help_text="The memory itself, at most MEMORY_MAX_TOKENS word pieces.")
    embedding = VectorField(
        dimensions=EMBEDDING_DIMENSIONS, null=True, blank=True,
        help_text="Unit vector of the content; empty while embedding is pending.",
    )
    embedding_model = models.CharField(
        max_length=200, blank=True, help_text="Model that made the embedding; empty while pending."
    )
    embedding_dimensions = dimensions_field()
    embedding_next = next_embedding_field()
    search_vector = models.GeneratedField(
        expression=SearchVector("subject", weight="A", config="english")
        + SearchVector("content", weight="B", config="english"),
        output_field=SearchVectorField(),
        db_persist=True,
        help_text="Full-text vector of subject and content, kept in sync by PostgreSQL.",
    )
    metadata = models.JSONField(default=dict, blank=True, help_text="Free-form JSON object from the client.")
    tags = ArrayField(models.CharField(max_length=100), default=list, blank=True, help_text="Short labels.")
    entities = models.JSONField(
        default=dict, blank=True, help_text='Named things mentioned, e.g. {"people": ["Emma"], "places": []}.'
    )
    category = models.CharField(max_length=100, blank=True, help_text="Free-text kind, e.g. preference, fact.")
    subject = models.CharField(max_length=200, blank=True, help_text="Who or what it is about, e.g. 'Emma'.")
    importance = models.FloatField(
        default=0.5, validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text="0..1, how much it matters when ranking.",
    )
    confidence = models.FloatField(
        default=1.0, validators=[MinValueValidator(0), MaxValueValidator(1)],
        help_text="0..1, how sure we are it is true.",
    )
    source = models.CharField(
        max_length=20, choices=Source.choices, default=Source.EXPLICIT, help_text="How the memory came to be."
    )
    source_ref = models.JSONField(
        default=dict, blank=True, help_text="Where it came from, e.g. conversation, message, document, chunk ids."
    )
    links = models.JSONField(default=dict, blank=True, help_text="Related URLs, files and memories.")
    version = models.PositiveIntegerField(default=1, help_text="1 on creation, +1 on every change.")
    supersedes = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="The older memory this one replaces.",
    )
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="+",
        help_text="The newer memory that replaces this one; superseded memories leave search by default.",
    )
    is_active = models.BooleanField(default=True, help_text="False when soft-deleted.")
    # set by the services (not auto_now) so that an import keeps the original times
    created_at = models.DateTimeField(default=timezone.now, help_text="When it was first stored.")
    updated_at = models.DateTimeField(default=timezone.now, help_text="When it last changed.")
    accessed_at = models.DateTimeField(null=True, blank=True, help_text="When a read or search last returned it.")
    stamp = models.BigIntegerField(
        null=True, blank=True, editable=False,
        help_text="The stamp of its last change (set by a trigger from the sequence of MemoryStamp; reads do not "
                  "change it). Empty for rows last changed before migration 0014.",
    )
    happened_at = models.DateTimeField(null=True, blank=True, help_text="When the described event happened.")
    valid_from = models.DateTimeField(
        default=timezone.now,
        help_text="When what it says became true (valid time): the event time (`happened_at`), else the message's "
                  "`sent_at`, else when it was stored.",
    )
    valid_to = models.DateTimeField(
        null=True, blank=True,
        help_text="When it stopped being true: the `valid_from` of the memory that superseded it. Empty while "
                  "current.",
    )
    expires_at = models.DateTimeField(null=True, blank=True, help_text="After this it leaves search and lists.")
    ttl_minutes = models.FloatField(
        null=True, blank=True, validators=[MinValueValidator(0)],
        help_text="Time to live: it expires this many minutes after its last write or read (a LangGraph store "
                  "TTL; reads refresh it). Empty: no TTL.",
    )
    value = models.JSONField(
        null=True, blank=True,
        help_text="The JSON object a LangGraph store client put, kept verbatim (content is taken from it). "
                  'Empty for memories written otherwise; the store shows those as {"content": ...}.',
    )
    indexed = models.BooleanField(
        default=True,
        help_text="False: never embedded, now or later (a store item put with index=False); filters and keyword "
                  "search still find it, meaning search does not.",
    )
    conversation = models.ForeignKey(
        "conversations.Conversation", null=True, blank=True, on_delete=models.SET_NULL, related_name="memories",
        help_text="The conversation it was extracted from.",
    )
    message = models.ForeignKey(
        "conversations.Message", null=True, blank=True, on_delete=models.SET_NULL, related_name="memories",
        help_text="The message it was extracted from.",
    )

    history = HistoricalRecords(
        custom_model_name="MemoryHistory",
        excluded_fields=["embedding", "embedding_next", "embedding_dimensions", "search_vector", "accessed_at",
                         "stamp"],  # reads are not versions
        bases=[HistoryAction],
        user_related_name="+",
        # Reasons name the rule, the candidate and the memory it replaced: longer than simple-history's 100.
        history_change_reason_field=models.TextField(null=True),
    )

    objects = MemoryQuerySet.as_manager()

    class Meta:
        verbose_name_plural = "memories"
        ordering = ["-created_at"]
        constraints = [
            models.UniqueConstraint(
                fields=["owner", "namespace", "key"], condition=Q(is_active=True), name="memory_unique_live_key"
            ),
            models.CheckConstraint(
                condition=Q(importance__gte=0) & Q(importance__lte=1), name="memory_importance_0_1"
            ),
            models.CheckConstraint(
                condition=Q(confidence__gte=0) & Q(confidence__lte=1), name="memory_confidence_0_1"
            ),
            models.CheckConstraint(condition=~Q(content=""), name="memory_content_not_blank"),
            models.CheckConstraint(condition=~Q(supersedes=models.F("id")), name="memory_not_self_superseding"),
        ]
        indexes = [
            hnsw_index("memory_embedding_hnsw"),
            # owner first (btree_gin): a user's keyword search reads only that user's postings
            owner_lexemes_index("memory_owner_lexemes_gin"),
            GinIndex(fields=["tags"], name="memory_tags_gin"),
            models.Index(fields=["owner", "-created_at"], name="memory_owner_created"),
            # what a search snapshot's patch reads: the owner's rows changed since its stamp (and owner lookups)
            models.Index(fields=["owner", "stamp"], name="memory_owner_stamp"),
            models.Index(fields=["owner", "project"], name="memory_owner_project"),
            models.Index(fields=["owner", "agent_id"], name="memory_owner_agent"),
            models.Index(fields=["owner", "happened_at"], name="memory_owner_happened"),
            models.Index(fields=["owner", "valid_from"], name="memory_owner_valid_from"),
            models.Index(fields=["owner", "category"], name="memory_owner_category"),
            models.Index(fields=["owner", "subject"], name="memory_owner_subject"),
        ]

    def __str__(self) -> str:
        return self.content[:80]

    def get_constraints(self):
        """The constraints `full_clean()` checks. Django checks each CheckConstraint with a query of its own on
        every save; these four rules are already checked in Python (field validators, blank=False, the supersede
        service) and enforced by the database, so only the unique key is left to look up."""
        return [(cls, [c for c in constraints if c.name not in _CHECKED_IN_PYTHON])
                for cls, constraints in super().get_constraints()]


_CHECKED_IN_PYTHON = {
    "memory_importance_0_1", "memory_confidence_0_1", "memory_content_not_blank", "memory_not_self_superseding",
}
