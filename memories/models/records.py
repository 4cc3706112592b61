"""What the memories table keeps beside it: reads and searches (MemoryEvent, SearchDay), the owners' change
stamps (MemoryStamp) and each embedded table's model (EmbeddingSpace)."""

from django.conf import settings
from django.db import models

from memories.models.columns import EMBEDDING_DIMENSIONS
from memories.models.memory import Memory


class MemoryEvent(models.Model):
    """A read or a search that returned a memory (seed 003's READ / SEARCH actions). Kept apart from the
    versioned history so that recording it costs one multi-row INSERT; MEMORY_LOG_READS=false turns it off."""

    class Action(models.TextChoices):
        READ = "READ", "Read"
        SEARCH = "SEARCH", "Search"

    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+", help_text="Owner of the memory."
    )
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="events", help_text="What was seen.")
    action = models.CharField(max_length=10, choices=Action.choices, help_text="READ or SEARCH.")
    query = models.TextField(blank=True, help_text="The search text, for SEARCH events.")
    at = models.DateTimeField(auto_now_add=True, help_text="When it happened.")

    class Meta:
        indexes = [models.Index(fields=["memory", "-at"], name="memoryevent_memory_at")]

    def __str__(self) -> str:
        return f"{self.action} {self.memory_id} at {self.at:%Y-%m-%d %H:%M}"


class MemoryStamp(models.Model):
    """The latest change to an owner's memories, as a stamp, and a checksum of the stamps their rows carry. Triggers
    on the memories table (migrations 0012, 0014) take a new value of one sequence on every insert, delete, or update
    of anything but `accessed_at` (reads are not changes), give it to the changed row (`Memory.stamp`), and keep the
    count and the sum of the owner's row stamps; a rolled-back change rolls all of it back. A web process's search
    snapshot of an owner's memories (memories.search.snapshot) is current while the stamp it was built at is; after
    a change it reads only the rows stamped since, and the count and sum tell it whether what it then holds is what
    the table holds (a delete, or rows it saw in a transaction that rolled back, make it read everything again).
    Written only by the triggers."""

    owner_id = models.BigIntegerField(
        primary_key=True,
        help_text="Owner of the memories (no foreign key: the trigger still stamps while a deleted user's memories "
                  "are deleted).",
    )
    stamp = models.BigIntegerField(help_text="A value of the sequence memento_memory_stamp, new at every change.")
    rows = models.BigIntegerField(default=0, help_text="How many memories the owner has.")
    stamps = models.BigIntegerField(
        default=0, help_text="The sum of their rows' stamps (rows changed before migration 0014 count 0).")

    def __str__(self) -> str:
        return f"memories of {self.owner_id} at {self.stamp}"


class EmbeddingSpace(models.Model):
    """Which embedding model one table's vectors are in: searches embed their query with it and compare only vectors
    of it, writes embed with it, and the database refuses vectors of another model in that table (migration 0019's
    guard). No row: the table follows EMBEDDING_MODEL until its first embedded write records it. Also the status
    of a switch to another model (`manage.py reembed`, `/api/admin/reembed/`): instance-wide, not a user's data."""

    class Name(models.TextChoices):
        MEMORIES = "memories", "Memories"
        MESSAGES = "messages", "Conversation messages"
        CHUNKS = "chunks", "Document chunks"
        STORE = "store", "Store item fields"

    class State(models.TextChoices):
        IDLE = "idle", "Idle"
        QUEUED = "queued", "Queued"
        RUNNING = "running", "Running"
        FAILED = "failed", "Failed (run again to continue)"
        DONE = "done", "Done"

    name = models.CharField(max_length=20, primary_key=True, choices=Name.choices, help_text="The table.")
    model = models.CharField(max_length=200, help_text="The model every vector of the table is in.")
    dimensions = models.PositiveSmallIntegerField(default=EMBEDDING_DIMENSIONS, help_text="Its vectors' size.")
    target_model = models.CharField(
        max_length=200, blank=True, help_text="The model a re-embedding is switching the table to; empty when none."
    )
    state = models.CharField(max_length=10, choices=State.choices, default=State.IDLE,
                             help_text="Where the last re-embedding of this table is.")
    rows_total = models.BigIntegerField(default=0, help_text="Rows the running re-embedding had to do at its start.")
    rows_done = models.BigIntegerField(default=0, help_text="Rows it has embedded with the target model so far.")
    error = models.TextField(blank=True, help_text="Why the last run stopped, when it failed.")
    started_at = models.DateTimeField(null=True, blank=True, help_text="When the last run started.")
    updated_at = models.DateTimeField(null=True, blank=True, help_text="When its progress last moved.")
    finished_at = models.DateTimeField(null=True, blank=True, help_text="When the table switched to its target.")

    def __str__(self) -> str:
        return f"{self.name}: {self.model}"


class SearchDay(models.Model):
    """How many searches one user ran on one day (UTC), for the panel's activity charts: counted when a search's
    bookkeeping is written (memories.services.memories_touch), also when it found nothing. Owner-only (RLS)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+",
                              help_text="Who searched.")
    day = models.DateField(help_text="The day (UTC).")
    searches = models.PositiveIntegerField(default=0, help_text="Searches that day.")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "day"], name="searchday_owner_day")]

    def __str__(self) -> str:
        return f"{self.owner_id} {self.day}: {self.searches}"
