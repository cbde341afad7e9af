"""The trend pages' charts as inline SVG, drawn by pygal (pure Python, SVG only: a 130 kB
wheel that imports in about 0.1 s, where matplotlib brings ~40 MB and half a second of start-up
for raster output we do not need). pygal is imported here only, and only by ``ci-eval history``.

Every chart is plain SVG that needs nothing to be read: pygal's tooltip script is not referenced
(``js=[]``) and its inline config ``<script>`` and generator comments are taken out of the tree;
the chart's id is the page's own (not a random uuid), so a page is the same bytes each time."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any
from xml.etree import ElementTree

from ci_eval.text import redact

WIDTH, HEIGHT = 880, 300


def _style() -> Any:
    from pygal.style import Style

    return Style(
        background="#ffffff",
        plot_background="#ffffff",
        foreground="#1f2328",
        foreground_strong="#1f2328",
        foreground_subtle="#59636e",
        opacity="0.85",
        opacity_hover="0.9",
        colors=("#0969da", "#1a7f37", "#cf222e", "#8250df", "#bf8700", "#1b7c83", "#953800"),
        font_family="-apple-system, 'Segoe UI', 'Noto Sans', Helvetica, Arial, sans-serif",
        title_font_size=15,
        label_font_size=11,
        major_label_font_size=11,
        legend_font_size=12,
        value_font_size=11,
    )


def _config(chart_id: str, **options: Any) -> dict[str, Any]:
    return {
        "js": [],
        "disable_xml_declaration": True,
        "width": WIDTH,
        "height": HEIGHT,
        "explicit_size": False,
        "style": _style(),
        "show_legend": True,
        "legend_at_bottom": True,
        "legend_at_bottom_columns": 4,
        "truncate_legend": 40,
        "print_values": False,
        "x_label_rotation": 0,
        "show_minor_x_labels": True,
        "margin": 12,
        "margin_bottom": 28,  # room for the legend's row below the axis labels
        "classes": ["pygal-chart", chart_id],
        **options,
    }


def _svg(chart: Any, chart_id: str) -> str:
    """The chart's SVG, with no script, no comments and a stable id."""
    chart.uuid = chart_id
    root = chart.render_tree()
    for parent in root.iter():
        for child in list(parent):
            tag = child.tag if isinstance(child.tag, str) else ""
            if tag.rpartition("}")[2] == "script" or child.tag is ElementTree.Comment:
                parent.remove(child)
    text = ElementTree.tostring(root, encoding="unicode")
    # the default namespace as a plain xmlns (inline SVG in HTML needs no prefix)
    return re.sub(r"\bns0:|:ns0\b", "", text).replace("xmlns:ns0=", "xmlns=")


def _label(text: str) -> str:
    return redact.text(text)


def rate_chart(
    chart_id: str,
    title: str,
    labels: Sequence[str],
    series: Sequence[tuple[str, Sequence[tuple[float, float, float] | None]]],
    legend: bool = True,
) -> str:
    """Pass rates over pushes, in percent, each point with its 95 % interval (a bar through
    it): ``series`` is (name, per push (rate, low, high) or None where the push has none)."""
    import pygal

    chart = pygal.Line(
        **_config(
            chart_id,
            range=(0, 100),
            y_title="pass rate (%)",
            show_dots=True,
            dots_size=3,
            allow_interruptions=True,
            show_legend=legend,
        )
    )
    chart.title = _label(title)
    chart.x_labels = [_label(x) for x in labels]
    for name, points in series:
        values: list[Any] = []
        for point in points:
            if point is None:
                values.append(None)
            else:
                rate, low, high = (round(100 * v, 2) for v in point)
                values.append({"value": rate, "ci": {"low": low, "high": high}})
        chart.add(_label(name), values)
    return _svg(chart, chart_id)


def bar_chart(
    chart_id: str,
    title: str,
    labels: Sequence[str],
    name: str,
    values: Sequence[float | None],
    y_title: str,
) -> str:
    """One quantity per push (tokens, cost, latency) as bars; a push without it has none."""
    import pygal

    chart = pygal.Bar(**_config(chart_id, y_title=y_title, show_legend=False))
    chart.title = _label(title)
    chart.x_labels = [_label(x) for x in labels]
    chart.add(_label(name), list(values))
    return _svg(chart, chart_id)
