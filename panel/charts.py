"""Geometry of the activity page's charts, for inline SVG drawn by the templates (no script, no CDN): stacked
bars per week and a line per day, scaled to the largest value."""

from datetime import date

# one colour per series, in order (colour-blind safe: Okabe-Ito)
COLOURS = ["#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442", "#999999"]
WIDTH, HEIGHT = 900, 180
PLOT = HEIGHT - 20  # room for the axis labels
TOP_MARGIN = 16  # room for the scale label


def stacked_bars(labels: list[date], series: dict[str, list[float]]) -> dict:
    """One column per label, each series' value stacked on the ones before: {"bars": [...], "legend": [...],
    "top": the largest column, ...}."""
    totals = [sum(values[i] for values in series.values()) for i in range(len(labels))]
    top = max(totals, default=0) or 1
    step = WIDTH / max(len(labels), 1)
    bars = []
    for i, label in enumerate(labels):
        base = PLOT
        for k, (name, values) in enumerate(series.items()):
            if not values[i]:
                continue
            h = round((PLOT - TOP_MARGIN) * values[i] / top, 1)
            base -= h
            bars.append({"x": round(i * step + 2, 1), "y": round(base, 1), "w": round(step - 4, 1), "h": h,
                         "fill": COLOURS[k % len(COLOURS)], "title": f"{label:%d %b}: {values[i]:g} {name}"})
    return {"width": WIDTH, "height": HEIGHT, "plot": PLOT, "bars": bars, "top": max(totals, default=0),
            "legend": [{"name": name, "fill": COLOURS[k % len(COLOURS)], "total": sum(values)}
                       for k, (name, values) in enumerate(series.items())],
            "first": labels[0] if labels else None, "last": labels[-1] if labels else None}


def line(labels: list[date], values: list[float | None]) -> dict:
    """A polyline through the values (None: a gap), with a dot per value."""
    top = max((v for v in values if v is not None), default=0) or 1
    step = WIDTH / max(len(labels) - 1, 1)
    points = [{"x": round(i * step, 1), "y": round(PLOT - (PLOT - TOP_MARGIN) * v / top, 1),
               "title": f"{labels[i]:%d %b}: {v:g}"} for i, v in enumerate(values) if v is not None]
    return {"width": WIDTH, "height": HEIGHT, "plot": PLOT, "points": points,
            "path": " ".join(f"{p['x']},{p['y']}" for p in points),
            "top": max((v for v in values if v is not None), default=0),
            "first": labels[0] if labels else None, "last": labels[-1] if labels else None}
