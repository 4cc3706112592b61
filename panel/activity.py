"""The activity charts' figures (panel/activity_views.py): a user's memory over time, or the whole instance's for
staff in the admin (`owner=None`). Every query is scoped to the owner in code (and by row-level security for the
panel's requests); weeks start on Monday, days are UTC."""

from datetime import date, timedelta

from django.db.models import Count, F, Sum
from django.db.models.functions import TruncWeek
from django.utils import timezone

from conversations.models import Message
from memories.models import Memory, SearchDay

WEEKS = 12
DAYS = 30
# categories or sources beyond the busiest ones are shown together as "other"
TOP_SERIES = 6
OTHER = "other"


def _weeks(weeks: int) -> list[date]:
    monday = timezone.now().date() - timedelta(days=timezone.now().weekday())
    return [monday - timedelta(weeks=weeks - 1 - i) for i in range(weeks)]


def _owned(queryset, owner, field: str = "owner"):
    return queryset if owner is None else queryset.filter(**{field: owner})


def added_per_week(*, owner, by: str, weeks: int = WEEKS) -> dict:
    """Memories added per week, split by `by` ("category" or "source"): {"weeks": [...], "series": {name: counts}}
    (blank categories as "none"; beyond TOP_SERIES names, "other")."""
    first = _weeks(weeks)[0]
    rows = (_owned(Memory.objects.all(), owner).filter(created_at__date__gte=first)
            .annotate(week=TruncWeek("created_at")).values("week", by).annotate(n=Count("id")))
    return _series(rows, by, weeks)


def changes_per_week(*, owner, weeks: int = WEEKS) -> dict:
    """Memories superseded, and deleted or expired ("forgotten": soft deletions; an erasure leaves no trace by
    design), per week, from their versions."""
    first = _weeks(weeks)[0]
    history = _owned(Memory.history.model.objects.all(), owner).filter(history_date__date__gte=first)
    actions = {"SUPERSEDE": "superseded", "DELETE": "forgotten"}
    rows = (history.filter(history_action__in=list(actions)).annotate(week=TruncWeek("history_date"))
            .values("week", "history_action").annotate(n=Count("history_id")))
    counts = {name: [0] * weeks for name in actions.values()}
    index = {week: i for i, week in enumerate(_weeks(weeks))}
    for row in rows:
        i = index.get(row["week"].date() if hasattr(row["week"], "date") else row["week"])
        if i is not None:
            counts[actions[row["history_action"]]][i] += row["n"]
    return {"weeks": _weeks(weeks), "series": counts}


def extraction_lag_per_week(*, owner, weeks: int = WEEKS) -> dict:
    """Per week, the median and the longest time in seconds from a message's arrival to the memories extracted
    from it: {"weeks": [...], "median": [...], "max": [...]} (None for a week with none)."""
    first = _weeks(weeks)[0]
    lags: dict[date, list[float]] = {}
    rows = (_owned(Memory.objects.filter(message__isnull=False), owner).filter(created_at__date__gte=first)
            .annotate(week=TruncWeek("created_at"), received=F("message__created_at"))
            .values_list("week", "created_at", "received"))
    for week, created, received in rows.iterator(chunk_size=2000):
        lags.setdefault(week.date(), []).append(max(0.0, (created - received).total_seconds()))
    median, longest = [], []
    for week in _weeks(weeks):
        values = sorted(lags.get(week, []))
        median.append(values[len(values) // 2] if values else None)
        longest.append(values[-1] if values else None)
    return {"weeks": _weeks(weeks), "median": median, "max": longest}


def searches_per_day(*, owner, days: int = DAYS) -> list[tuple[date, int]]:
    """(day, searches) for the last `days` days, today last (memories.models.SearchDay)."""
    today = timezone.now().date()
    first = today - timedelta(days=days - 1)
    rows = (_owned(SearchDay.objects.all(), owner).filter(day__gte=first).values("day")
            .annotate(n=Sum("searches")))
    found = {row["day"]: row["n"] for row in rows}
    return [(first + timedelta(days=i), found.get(first + timedelta(days=i), 0)) for i in range(days)]


def pending_extraction(*, owner) -> int:
    """User messages whose extraction has not run yet (the backlog behind the lag)."""
    return _owned(Message.objects.filter(extraction_status=Message.Extraction.PENDING), owner).count()


def _series(rows, by: str, weeks: int) -> dict:
    index = {week: i for i, week in enumerate(_weeks(weeks))}
    counts: dict[str, list[int]] = {}
    for row in rows:
        i = index.get(row["week"].date())
        if i is not None:
            counts.setdefault(row[by] or "none", [0] * weeks)[i] += row["n"]
    ranked = sorted(counts, key=lambda name: -sum(counts[name]))
    series = {name: counts[name] for name in ranked[:TOP_SERIES]}
    if len(ranked) > TOP_SERIES:
        series[OTHER] = [sum(counts[name][i] for name in ranked[TOP_SERIES:]) for i in range(weeks)]
    return {"weeks": _weeks(weeks), "series": series}


def activity(*, owner) -> dict:
    """Everything the activity page shows."""
    return {
        "by_category": added_per_week(owner=owner, by="category"),
        "by_source": added_per_week(owner=owner, by="source"),
        "changes": changes_per_week(owner=owner),
        "lag": extraction_lag_per_week(owner=owner),
        "searches": searches_per_day(owner=owner),
        "pending": pending_extraction(owner=owner),
    }
