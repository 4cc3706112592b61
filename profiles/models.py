"""What an agent should always know about a user: the profile (short entries by section, each backed by memories),
reminders (memories with a due time), the user's settings (time zone), and the record of each consolidation run.
Every table has an owner column and an owner-only row-level security policy (migration 0002)."""

import zoneinfo

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.core.exceptions import ValidationError
from django.core.validators import MaxValueValidator, MinValueValidator
from django.db import models
from simple_history.models import HistoricalRecords

from memories.models import Memory, Project


def validate_time_zone(value: str) -> None:
    if value not in zoneinfo.available_timezones():
        raise ValidationError(f"Unknown time zone {value[:64]!r}; use an IANA name such as 'Europe/Paris'.")


class UserSettings(models.Model):
    """A user's own settings for profiles and reminders (one row per user, made on first use)."""

    owner = models.OneToOneField(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+",
                                 help_text="Whose settings.")
    time_zone = models.CharField(max_length=64, default="UTC", validators=[validate_time_zone],
                                 help_text="IANA time zone: reminders' dates ('Friday at 10') are read in it.")
    profile_budget = models.PositiveIntegerField(
        default=300, validators=[MinValueValidator(16), MaxValueValidator(4000)],
        help_text="Token budget of the profile's text (what the context shows first).")

    class Meta:
        verbose_name_plural = "user settings"

    def __str__(self) -> str:
        return f"settings of {self.owner_id}"


class Profile(models.Model):
    """One user's profile in one scope (no project: user-scoped memories only; a project: those and its own),
    rebuilt from the memories when they changed (`built_stamp` is the owner's MemoryStamp at the last build)."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+",
                              help_text="Whose profile.")
    project = models.ForeignKey(Project, null=True, blank=True, on_delete=models.CASCADE, related_name="+",
                                help_text="Empty: the user-scoped profile. Set: the profile within that project.")
    built_at = models.DateTimeField(null=True, blank=True, help_text="When it was last rebuilt from the memories.")
    built_stamp = models.BigIntegerField(null=True, blank=True,
                                         help_text="The owner's memory stamp at the last rebuild (unchanged: current).")

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "project"], nulls_distinct=False,
                                               name="profile_one_per_scope")]

    def __str__(self) -> str:
        return f"profile of {self.owner_id}" + (f" in project {self.project_id}" if self.project_id else "")


class Section(models.TextChoices):
    IDENTITY = "identity", "Identity and contact"
    HOME = "home", "Home"
    WORK = "work", "Work and study"
    FAMILY = "family", "Family and relationships"
    HEALTH = "health", "Health and restrictions"
    PREFERENCES = "preferences", "Preferences and interests"
    GOALS = "goals", "Goals"
    ROUTINES = "routines", "Routines"


class ProfileEntry(models.Model):
    """One short line of a profile, backed by memories. Automatic entries follow the memories at every rebuild;
    an entry the user edited (`user_edited`), hid (`hidden`: a deletion) or pinned keeps the user's version over
    later rebuilds until the user resets it. Every change is a history row."""

    class Origin(models.TextChoices):
        AUTO = "auto", "Built from memories"
        USER = "user", "Written by the user"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+",
                              help_text="Whose profile.")
    profile = models.ForeignKey(Profile, on_delete=models.CASCADE, related_name="entries",
                                help_text="The profile it belongs to.")
    section = models.CharField(max_length=20, choices=Section.choices, help_text="Which part of the profile.")
    key = models.CharField(max_length=300, help_text="What it is about: subject and attribute (and value, for "
                                                     "attributes that accumulate); stable across rebuilds.")
    text = models.TextField(help_text="The line the agent reads.")
    origin = models.CharField(max_length=10, choices=Origin.choices, default=Origin.AUTO,
                              help_text="Built from memories, or written by the user.")
    memory_ids = ArrayField(models.UUIDField(), default=list, blank=True,
                            help_text="The memories that support it.")
    evidence_count = models.PositiveIntegerField(default=0, help_text="How many statements support it (merged "
                                                                      "duplicates count as theirs).")
    last_confirmed = models.DateTimeField(null=True, blank=True,
                                          help_text="When a supporting memory was last stated or confirmed.")
    importance = models.FloatField(default=0.5, validators=[MinValueValidator(0), MaxValueValidator(1)],
                                   help_text="0..1, the supporting memories' highest importance.")
    user_edited = models.BooleanField(default=False, help_text="The user changed its text: rebuilds keep it.")
    hidden = models.BooleanField(default=False, help_text="The user deleted it: rebuilds keep it out.")
    pinned = models.BooleanField(default=False, help_text="Always shown first, whatever the budget.")
    current = models.BooleanField(default=True, help_text="False when no live memory supports it any more (an "
                                                          "automatic entry is kept, not deleted).")
    updated_at = models.DateTimeField(auto_now=True, help_text="When it last changed.")

    history = HistoricalRecords(user_related_name="+", history_change_reason_field=models.TextField(null=True))

    class Meta:
        verbose_name_plural = "profile entries"
        ordering = ["section", "-pinned", "-importance", "-evidence_count", "key"]
        constraints = [models.UniqueConstraint(fields=["profile", "key"], name="profile_entry_unique_key")]

    def __str__(self) -> str:
        return self.text[:80]


class Reminder(models.Model):
    """Something the user asked to be reminded of, or an appointment they mentioned: a memory (category
    'reminder') with a due time read against when it was said and in the user's time zone."""

    class Status(models.TextChoices):
        OPEN = "open", "Open"
        DONE = "done", "Done"
        CANCELLED = "cancelled", "Cancelled"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+",
                              help_text="Whose reminder.")
    memory = models.ForeignKey(Memory, on_delete=models.CASCADE, related_name="+",
                               help_text="The reminder memory (what the agent searches and reads).")
    task = models.CharField(max_length=500, help_text="What to do or attend, e.g. 'call mom'.")
    due_at = models.DateTimeField(null=True, blank=True, help_text="When it is due (empty: no time was said).")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.OPEN,
                              help_text="Open, done or cancelled.")
    closed_at = models.DateTimeField(null=True, blank=True, help_text="When it was marked done or cancelled.")
    closed_reason = models.TextField(blank=True, help_text="Why: by the user, or the message that said it was done.")
    source_message_id = models.UUIDField(null=True, blank=True, help_text="The message that asked for it.")
    said_at = models.DateTimeField(help_text="When it was asked for (the message's send time): only what is said "
                                             "later can close it.")
    created_at = models.DateTimeField(auto_now_add=True, help_text="When it was recorded.")

    history = HistoricalRecords(user_related_name="+", history_change_reason_field=models.TextField(null=True))

    class Meta:
        ordering = ["due_at", "created_at"]
        indexes = [models.Index(fields=["owner", "status", "due_at"], name="reminder_owner_status_due")]

    def __str__(self) -> str:
        return self.task[:80]


class ConsolidationRun(models.Model):
    """One consolidation pass over a user's memories: near-duplicates merged, expired memories retired, the
    profile refreshed. `changes` lists each change with its reason and what undoes it; a run never deletes."""

    class Status(models.TextChoices):
        RUNNING = "running", "Running"
        DONE = "done", "Done"
        FAILED = "failed", "Failed"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="+",
                              help_text="Whose memories.")
    trigger = models.CharField(max_length=20, help_text="What started it: request, new memories, periodic.")
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.RUNNING,
                              help_text="Running, done or failed.")
    started_at = models.DateTimeField(auto_now_add=True, help_text="When it was started.")
    finished_at = models.DateTimeField(null=True, blank=True, help_text="When it finished.")
    seconds = models.FloatField(default=0, help_text="Time spent working (all its tasks together).")
    memories_seen = models.PositiveIntegerField(default=0, help_text="Memories compared so far.")
    cursor = models.DateTimeField(null=True, blank=True,
                                  help_text="Where the next share starts (created_at of the last memory seen).")
    high_water = models.BigIntegerField(default=0, help_text="The owner's memory count when it started (the next "
                                                             "automatic run waits for that many more).")
    changes = models.JSONField(default=list, blank=True, help_text=(
        "Each change: action (merge, retire, profile), memory, into, reason, version_before, reverted_at."))
    error = models.TextField(blank=True, help_text="Why it failed, when it did.")

    class Meta:
        ordering = ["-started_at"]
        indexes = [models.Index(fields=["owner", "-started_at"], name="consolidation_owner_started")]

    def __str__(self) -> str:
        return f"consolidation {self.pk} of {self.owner_id} ({self.status})"
