"""Renderers: each a pure function of the result dict (terminal summary, HTML, dataset card)."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from pathlib import Path


def write_reports(results: dict, out_dir, *, card_from=None, card_shown=None, inputs=None,
                  ready: Callable[[], object] | None = None,
                  sha256: Callable[[Path], str] | None = None,
                  **card_options) -> dict[str, Path]:
    """Write every file renderer's output into ``out_dir``; return ``{name: path}``.

    ``report`` is ``report.html`` (:mod:`audit.report.html`; it links ``advice.csv`` when that
    is already in ``out_dir``, :mod:`audit.report.advice_table`), ``card`` is ``dataset_card.md``
    (:mod:`audit.report.card`) and ``croissant_rai`` is ``croissant_rai.json``. Each file is
    written atomically (:func:`audit.outputs.write_text`); the three as one set, with
    ``results.json`` and a manifest, are written by :func:`audit.outputs.write_run`
    (``annotation-audit run --out``), which calls this on its staging folder.

    Parameters
    ----------
    card_from
        The card whose hand-written text and YAML are kept (updated between its markers);
        default ``out_dir/dataset_card.md``. :func:`audit.outputs.write_run` passes the
        published folder's card while it writes the new set elsewhere. It must be a Markdown
        card (:func:`audit.outputs.read_card`).
    card_shown
        The card's path as the user knows it, for warnings (default its real path).
    inputs
        The run's :class:`audit.outputs.Inputs`: ``croissant`` is ``croissant.json``
        (:mod:`audit.report.croissant`), listing the source files and the ``items.parquet``
        already in ``out_dir``, with their SHA-256.
    ready
        Called before anything reads the other files of ``out_dir`` (whether ``advice.csv`` is
        there, the files ``croissant.json`` hashes): :func:`audit.outputs.write_run` writes
        them meanwhile in another thread and passes the wait for it. The card,
        ``croissant_rai.json`` and the report's view and template
        (:func:`audit.report.html.html_renderer`) need nothing there and are done first.
    sha256
        How ``croissant.json`` hashes a file (:func:`audit.report.croissant.croissant`).
    card_options
        Go to :func:`audit.report.card.render_card` (``creators``, ``default_creator``).
    """
    from ..outputs import write_text
    from ..results import dumps
    from .croissant import croissant_rai, write_croissant
    from .html import html_renderer

    out = Path(out_dir)
    from .advice_table import ADVICE_CSV

    card = write_card_file(results, out / "dataset_card.md", card_from=card_from,
                           card_shown=card_shown, **card_options)
    rai = write_text(out / "croissant_rai.json", dumps(croissant_rai(results)))
    render = html_renderer(results)  # all but whether advice.csv is there to link
    if ready is not None:
        ready()
    html = render((out / ADVICE_CSV).is_file())
    return {"report": write_text(out / "report.html", html), "card": card,
            "croissant_rai": rai,
            "croissant": write_croissant(results, out, inputs=inputs, sha256=sha256)}


def write_card_file(results: dict, path, *, card_from=None, card_shown=None,
                    **card_options) -> Path:
    """Write the dataset card to ``path`` atomically, updating the card at ``card_from``
    (default ``path``) in place between its markers; return ``path``.

    Warns (:class:`audit.errors.AuditWarning`) when the card has metadata the Hub would reject
    (a hand-written tag outside the vocabularies), or keeps a hand-written key over the value the
    spec or a flag gave (:func:`audit.report.card_meta.kept_values`), naming ``card_shown``.

    Raises
    ------
    InputError
        The existing card is not a Markdown card (:func:`audit.outputs.read_card`), or its
        markers or YAML are broken (:func:`audit.report.card.render_card`).
    """
    import os

    from ..errors import AuditWarning
    from ..outputs import read_card, write_text
    from .card import check_card, render_card
    from .card_meta import kept_values

    path = Path(path)
    source = Path(card_from) if card_from is not None else path
    shown = Path(card_shown) if card_shown is not None else source
    existing = read_card(source, shown=shown) if os.path.lexists(source) else None
    text = render_card(results, existing=existing, path=shown, **card_options)
    for problem in check_card(text) + kept_values(results, text):
        warnings.warn(f"{shown}: {problem}", AuditWarning, stacklevel=2)
    return write_text(path, text)
