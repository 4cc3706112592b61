"""The activity page: charts of the user's own memory over time (panel), and of the whole instance for staff
(a custom admin view at /admin/activity/)."""

from django.contrib import admin
from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from panel import activity, charts


def _charts(owner) -> dict:
    data = activity.activity(owner=owner)
    lag = data["lag"]
    days = [day for day, _ in data["searches"]]
    return {
        "by_category": charts.stacked_bars(data["by_category"]["weeks"], data["by_category"]["series"]),
        "by_source": charts.stacked_bars(data["by_source"]["weeks"], data["by_source"]["series"]),
        "changes": charts.stacked_bars(data["changes"]["weeks"], data["changes"]["series"]),
        # minutes: a lag is seconds to hours
        "lag": charts.line(lag["weeks"], [None if v is None else round(v / 60, 1) for v in lag["median"]]),
        "lag_max": max((v for v in lag["max"] if v is not None), default=None),
        "searches": charts.line(days, [n for _, n in data["searches"]]),
        "searches_total": sum(n for _, n in data["searches"]),
        "pending": data["pending"],
    }


@login_required
def activity_page(request):
    return render(request, "panel/activity.html", _charts(request.user))


def admin_activity(request):
    """The same charts for every user together (staff: the admin's own row-level-security bypass)."""
    context = {**admin.site.each_context(request), **_charts(None), "title": "Activity of the whole instance"}
    return render(request, "admin/activity.html", context)
