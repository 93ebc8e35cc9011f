"""Renderers: each a pure function of the result dict (terminal summary, HTML, dataset card)."""

from __future__ import annotations

from pathlib import Path


def write_reports(results: dict, out_dir, **card_options) -> dict[str, Path]:
    """Write every file renderer's output into ``out_dir``; return ``{name: path}``.

    ``report`` is ``report.html`` (:mod:`audit.report.html`), ``card`` is ``dataset_card.md``
    (:mod:`audit.report.card`) and ``croissant_rai`` is ``croissant_rai.json``. An existing
    ``dataset_card.md`` is updated in place between its markers. ``card_options`` go to
    :func:`audit.report.card.write_card` (``creators``, ``default_creator``).
    """
    from .card import write_card, write_croissant_rai
    from .html import write_html

    out = Path(out_dir)
    return {"report": write_html(results, out / "report.html"),
            "card": write_card(results, out / "dataset_card.md", **card_options),
            "croissant_rai": write_croissant_rai(results, out / "croissant_rai.json")}
