"""Reads the panel's pages need beyond the apps' own selectors: the list's status filter, version diffs for the
timeline, and the overview's counts. Every query here starts from the owner."""

import difflib
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

from django.db import connection
from django.db.models import Count, Q
from django.db.models.functions import Now, TruncDate
from django.template.defaultfilters import date as date_filter
from django.template.defaultfilters import truncatechars
from django.urls import reverse
from django.utils import timezone
from django.utils.text import capfirst
from simple_history.models import DeletedObject

from core.readable import readable_text
from memories import selectors as memory_selectors
from memories.models import HistoryAction, Memory
from memories.search import memory_search
from memories.versions import BOOKKEEPING_FIELDS

SEARCH_LIMIT = 100
NAMESPACE_CHOICES_LIMIT = 200  # the list's namespace choice offers the owner's largest namespaces


def status_filters(status: str) -> dict:
    """What the memory selectors must include for a status; `restrict_status` then keeps only that status."""
    return {
        "active": {},
        "superseded": {"include_superseded": True},
        "expired": {"include_expired": True, "include_inactive": True},  # the periodic job soft-deletes them
        "deleted": {"include_inactive": True, "include_superseded": True, "include_expired": True},
        "all": {"include_inactive": True, "include_superseded": True, "include_expired": True},
    }[status]


def restrict_status(queryset, status: str):
    if status == "superseded":
        return queryset.filter(superseded_by__isnull=False)
    if status == "expired":
        return queryset.filter(expires_at__lte=Now())
    if status == "deleted":
        return queryset.filter(is_active=False)
    return queryset


def end_of_day(day: date | None) -> datetime | None:
    """A day of the "as of" filter as a moment: its end (UTC), as the API's `as_of` reads a date."""
    return datetime.combine(day, time.max, tzinfo=UTC) if day else None


def memory_filters(form_data: dict, projects: dict) -> memory_selectors.MemoryFilters:
    project = form_data.get("project") or ""
    return memory_selectors.MemoryFilters(
        project=projects.get(project),
        all_projects=project == "",
        namespace=form_data.get("namespace") or [],
        tags=form_data.get("tags") or [],
        category=form_data.get("category") or None,
        source=form_data.get("source") or None,
        as_of=end_of_day(form_data.get("as_of")),
        **status_filters(form_data.get("status") or "active"),
    )


def namespace_counts(*, owner) -> list[tuple[list[str], int]]:
    """The owner's namespaces with how many live memories each holds (memories and store items alike), sorted by
    path; the NAMESPACE_CHOICES_LIMIT largest."""
    rows = (Memory.objects.owned_by(owner).active().order_by().values("namespace").annotate(n=Count("pk"))
            .order_by("-n", "namespace")[:NAMESPACE_CHOICES_LIMIT])
    return sorted(((row["namespace"], row["n"]) for row in rows), key=lambda pair: pair[0])


def memory_page_rows(*, owner, form_data: dict, projects: dict):
    """(rows, search) for the memory list: a search's scored results (best first, at most SEARCH_LIMIT) when
    there is a query, else the filtered memories newest first (a queryset, paginated by the caller).

    A project picked here means that project's memories only: the selectors' scope rule (a project brings the
    user-scoped memories along) suits an agent's recall, not a person browsing one project."""
    filters = memory_filters(form_data, projects)
    status = form_data.get("status") or "active"
    project = filters.project
    query = (form_data.get("q") or "").strip()
    if not query:
        rows = restrict_status(memory_selectors.memory_list(owner=owner, filters=filters), status)
        return (rows.filter(project=project) if project is not None else rows), None
    search = memory_search(owner=owner, query=query, mode=form_data.get("mode") or "hybrid",
                           limit=SEARCH_LIMIT, filters=filters)
    results = [r for r in search.results if project is None or r.memory.project_id == project.pk]
    if status != "active":
        keep = set(restrict_status(Memory.objects.owned_by(owner), status)
                   .filter(pk__in=[r.memory.pk for r in results]).values_list("pk", flat=True))
        results = [r for r in results if r.memory.pk in keep]
    return results, search


# --- timeline -------------------------------------------------------------------------------------------------


DATETIME_FORMAT = "Y-m-d H:i"  # as the rest of the panel's pages write a moment (Django's date filter)
DATE_FORMAT = "Y-m-d"


@dataclass(frozen=True)
class Linked:
    """A related row in the timeline: what it reads as and, when the user may open it, its page."""

    text: str
    url: str = ""

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True)
class Change:
    field: str
    label: str  # the field's name as people read it ("Happened at")
    old: object  # None (nothing), text, or a related object as `Linked`: shown by its name, not its id
    new: object
    words: list | None = None  # for text: [(op, text)], op one of "same", "del", "ins"


@dataclass(frozen=True)
class Version:
    record: object  # a MemoryHistory row
    changes: list[Change]


def shown(value):
    """A history value as the timeline shows it: lists joined, objects as "key: value" pairs (as the detail shows
    metadata), moments as the page writes them, a related row by its name (a memory by its text, linked to its
    page; one since erased by its id), nothing (an empty link too, which simple-history gives as a
    `DeletedObject` without a pk) as None."""
    if isinstance(value, DeletedObject):
        if value.pk is None:
            return None
        return Linked(f"{value.model._meta.verbose_name} {value.pk} (no longer exists)")
    if value in (None, "", [], {}):
        return None
    if isinstance(value, list | dict):
        return readable_text(value)
    if isinstance(value, datetime):
        return date_filter(value, DATETIME_FORMAT)
    if isinstance(value, date):
        return date_filter(value, DATE_FORMAT)
    if isinstance(value, Memory):
        return Linked(truncatechars(value.content, 160), reverse("panel:memory_detail", args=[value.pk]))
    return value


def word_diff(old: str, new: str) -> list[tuple[str, str]]:
    a, b = (old or "").split(), (new or "").split()
    parts = []
    for op, i1, i2, j1, j2 in difflib.SequenceMatcher(a=a, b=b, autojunk=False).get_opcodes():
        if op == "equal":
            parts.append(("same", " ".join(a[i1:i2])))
            continue
        if i2 > i1:
            parts.append(("del", " ".join(a[i1:i2])))
        if j2 > j1:
            parts.append(("ins", " ".join(b[j1:j2])))
    return parts


def memory_timeline(*, memory: Memory) -> list[Version]:
    """The memory's versions, newest first, each with what it changed from the one before (old and new values;
    a content change also word by word)."""
    records = list(memory.history.select_related("history_user", "project").order_by("-history_date", "-history_id"))
    versions = []
    for index, record in enumerate(records):
        previous = records[index + 1] if index + 1 < len(records) else None
        changes = []
        if previous is not None:
            delta = record.diff_against(previous, excluded_fields=BOOKKEEPING_FIELDS, foreign_keys_are_objs=True)
            for change in sorted(delta.changes, key=lambda c: (c.field != "content", c.field)):
                words = word_diff(change.old, change.new) if change.field == "content" else None
                label = capfirst(Memory._meta.get_field(change.field).verbose_name)
                changes.append(Change(change.field, label, shown(change.old), shown(change.new), words))
        versions.append(Version(record, changes))
    return versions


@dataclass(frozen=True)
class Supersession:
    """Why a memory stopped being current: the memory that replaced it, the reason its SUPERSEDE version
    records (the reconciler's rule and evidence, or the writer's), and the version to revert to (the last one
    before it was superseded), which undoes the supersession."""

    successor: Memory | None
    reason: str
    at: datetime
    automatic: bool  # decided by the pipeline, not by a person
    revert_to: int | None  # a history_id


def supersession(*, memory: Memory) -> Supersession | None:
    """How `memory` came to be superseded, or None while it is current."""
    if memory.superseded_by_id is None:
        return None
    records = list(memory.history.order_by("-history_date", "-history_id")
                   .only("history_id", "history_date", "history_action", "history_change_reason",
                         "history_user_id", "superseded_by_id"))
    marked = next((r for r in records if r.history_action == HistoryAction.Action.SUPERSEDE
                   and r.superseded_by_id == memory.superseded_by_id), None)
    before = next((r for r in records if r.superseded_by_id is None
                   and (marked is None or r.history_date <= marked.history_date)), None)
    successor = Memory.objects.owned_by(memory.owner_id).filter(pk=memory.superseded_by_id).only(
        "pk", "content", "valid_from").first()
    return Supersession(
        successor=successor, reason=(marked.history_change_reason or "") if marked else "",
        at=marked.history_date if marked else memory.updated_at,
        automatic=marked is not None and marked.history_user_id is None,
        revert_to=before.history_id if before else None,
    )


# --- overview -------------------------------------------------------------------------------------------------


def overview_counts(*, owner, days: int = 30) -> dict:
    """Counts of the owner's live memories by category, tag and source, and memories added per day over the
    last `days` days (every day present, zeros included)."""
    live = Memory.objects.owned_by(owner).active()
    by_category = list(live.values("category").annotate(n=Count("pk")).order_by("-n", "category")[:15])
    by_source = list(live.values("source").annotate(n=Count("pk")).order_by("-n", "source"))
    labels = dict(Memory.Source.choices)
    for row in by_source:
        row["label"] = labels.get(row["source"], row["source"])
    rows_sql, params = live.order_by().values("tags").query.sql_with_params()
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT tag, count(*) FROM ({rows_sql}) AS m, unnest(m.tags) AS tag GROUP BY tag "
            f"ORDER BY count(*) DESC, tag LIMIT 20", params,
        )
        by_tag = [{"tag": tag, "n": n} for tag, n in cursor.fetchall()]
    today = timezone.localdate()
    first = today - timedelta(days=days - 1)
    added = dict(
        Memory.objects.owned_by(owner).filter(created_at__date__gte=first)
        .annotate(day=TruncDate("created_at")).values("day").annotate(n=Count("pk")).values_list("day", "n")
    )
    per_day = [(first + timedelta(days=i), added.get(first + timedelta(days=i), 0)) for i in range(days)]
    totals = Memory.objects.owned_by(owner).aggregate(
        all=Count("pk"), deleted=Count("pk", filter=Q(is_active=False)),
        superseded=Count("pk", filter=Q(superseded_by__isnull=False)),
    )
    return {"by_category": by_category, "by_source": by_source, "by_tag": by_tag, "per_day": per_day,
            "live": live.count(), **totals}


def bar_chart(per_day: list, *, width: int = 900, height: int = 160) -> dict:
    """Geometry of a bar chart of (day, count) for an inline SVG: one bar per day, scaled to the busiest day."""
    top = max((n for _, n in per_day), default=0) or 1
    step = width / max(len(per_day), 1)
    plot = height - 20  # room for the axis labels
    top_margin = 16  # room for the scale label
    bars = []
    for i, (day, n) in enumerate(per_day):
        h = round((plot - top_margin) * n / top, 1)
        bars.append({"x": round(i * step + 1, 1), "y": round(plot - h, 1), "w": round(step - 2, 1), "h": h,
                     "day": day, "n": n})
    return {"width": width, "height": height, "plot": plot, "bars": bars, "top": top,
            "first": per_day[0][0] if per_day else None, "last": per_day[-1][0] if per_day else None}
