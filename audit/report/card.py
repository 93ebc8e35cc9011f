"""The Hugging Face dataset card: rendered, updated in place and checked, a pure function of
results.

:func:`render_card` writes a card (YAML metadata from :class:`~huggingface_hub.DatasetCardData`,
then Markdown) that :class:`huggingface_hub.DatasetCard` reads. Its generated part sits between
:data:`START` and :data:`END` markers, so an existing card is updated in place: the hand-written
text outside the markers and every YAML key the user wrote are kept as written (keys the audit
computes, ``annotations_creators``, ``size_categories`` and ``pretty_name``, are added only when
missing; :mod:`audit.report.hub_tags`). Its sentences come from :mod:`audit.report.prose` and
:mod:`audit.report.limitations`. Dataset strings in the body are escaped by
:func:`audit.escape.markdown.inline` (one line, ``<`` as ``&lt;`` so a name cannot forge a marker
or inject HTML, Markdown punctuation and block starts backslash-escaped, control characters
shown); the YAML metadata is written by a YAML serializer
(:func:`audit.escape.markdown.front_matter`, for a new card and for keys added to an existing
one), never by pasting strings, so every value parses back as written. The file is written by
:func:`audit.report.write_card_file`.

:func:`check_card` validates a card offline: ``DatasetCard.validate()`` posts the YAML to the Hub,
which these machines cannot reach, so the card is parsed as :class:`DatasetCard` parses it
(:func:`parse_card`: the YAML must be a mapping that :class:`DatasetCardData` accepts) and its
tag values checked against the Hub's vocabularies (:data:`audit.report.hub_tags.CREATOR_KINDS`,
:data:`~audit.report.hub_tags.SIZE_VALUES`). :func:`parse_card` repeats ``DatasetCard``'s few
lines of parsing because importing ``huggingface_hub.repocard`` imports the Hub client
(``hf_api``, 0.2 s of every run); ``tests/test_card.py`` checks it against ``DatasetCard`` on
well-formed and broken cards, and every rendered card is also loaded with ``DatasetCard`` there.
"""

from __future__ import annotations

import re

from ..errors import InputError, join_names
from ..escape.markdown import front_matter, inline, one_line
from ..format import number
from ..metrics import display_name, keys
from .hub_tags import (CREATOR_KINDS, DEFAULT_CREATOR, SIZE_VALUES, pool_creators,
                       size_category)
from .limitations import limitations
from .prose import (annotations_per_item, disagreement_sentences, estimate, interval_note,
                    judge_sentences, nan_note, stability_sentences, within_sentences)

START = "<!-- annotation-audit:start -->"
END = "<!-- annotation-audit:end -->"
#: A card's YAML metadata block: ``huggingface_hub.repocard.REGEX_YAML_BLOCK``, the same pattern
#: (``tests/test_card.py`` compares them).
YAML_BLOCK = re.compile(r"^(\s*---(?:\r\n|\r|\n))([\S\s]*?)((?:\r\n|\r|\n)---[ \t]*(\r\n|\n|$))")

#: A dataset string as inert inline Markdown (:func:`audit.escape.markdown.inline`).
md_escape = inline


def html_comment(text) -> str:
    """``text`` safe inside an HTML comment: no ``--`` (so no ``-->`` and no ``--!>``), no
    leading ``>``; Markdown escaping does not apply there (the comment is not rendered)."""
    text = str(text).replace("\n", " ")
    while "--" in text:
        text = text.replace("--", "- -")
    return text.lstrip(">")


def card_data(results: dict, *, creators: dict | None = None,
              default_creator: str = DEFAULT_CREATOR):
    """The :class:`huggingface_hub.DatasetCardData` the audit computes."""
    from huggingface_hub import DatasetCardData

    from .card_meta import yaml_fields

    ds = results.get("dataset") or {}
    kinds = pool_creators(results, creators=creators, default_creator=default_creator)
    ordered = [k for k in CREATOR_KINDS if k in kinds.values()] or ["no-annotation"]

    return DatasetCardData(**{"annotations_creators": ordered,
                              "size_categories": [size_category(ds.get("n_items"))],
                              # the dataset's (file's) name, as the title shows it: one
                              # line, control characters shown (a pretty_name flag or spec
                              # key holding one is refused, card_meta)
                              "pretty_name": one_line(ds.get("name") or "") or None,
                              **yaml_fields(ds.get("card"))})



def _environment():
    from jinja2 import Environment, PackageLoader, StrictUndefined
    from markupsafe import Markup

    def finalize(value):
        return value if isinstance(value, Markup) else md_escape(value)

    return Environment(loader=PackageLoader("audit", "templates"), autoescape=False,
                       finalize=finalize, undefined=StrictUndefined, trim_blocks=True,
                       lstrip_blocks=True, keep_trailing_newline=True)


def annotations_block(results: dict, *, creators: dict | None = None,
                      default_creator: str = DEFAULT_CREATOR) -> str:
    """The generated Markdown, markers included."""
    from markupsafe import Markup

    safe = lambda texts: [Markup(t) for t in texts]  # noqa: E731  (already escaped)
    ds = results.get("dataset") or {}
    meta = results.get("meta") or {}
    kinds = pool_creators(results, creators=creators, default_creator=default_creator)
    pools = [{"name": p, "judge": bool(i.get("judge")), "creator": kinds[p],
              **{k: Markup(number(i.get(k)) if i.get(k) is not None or k != "n_annotators"
                           else "not given")
                 for k in ("n_annotators", "n_annotations", "n_items")}}
             for p, i in (ds.get("pools") or {}).items()]
    rel = results.get("reliability") or {}
    columns = ([("all humans", rel["overall"])] if rel.get("overall") else []) + \
        list((rel.get("by_pool") or {}).items())
    metrics = [m for m in keys(summary=True) if any(m in (s or {}) for _, s in columns)]
    reliability = {"columns": [c for c, _ in columns],
                   "rows": [{"metric": display_name(m),
                             "cells": [Markup(estimate((s or {}).get(m), style="cell"))
                                       for _, s in columns]}
                            for m in metrics]} if metrics else None
    if reliability:
        reliability["note"] = Markup(" ".join(
            note for note in (nan_note(columns, metrics, ds.get("pools") or {}, md_escape),
                              interval_note(columns, metrics, md_escape)) if note))
    boot = meta.get("bootstrap") or {}
    method = (f"{boot.get('method', 'bootstrap')}, {meta.get('n_bootstrap')} resamples, seed "
              f"{meta.get('seed')}")
    return _environment().get_template("dataset_card.md.j2").render(
        start=Markup(START), end=Markup(END), version=Markup(html_comment(meta.get("version", ""))),
        pools=pools, judgments_per_item=Markup(annotations_per_item(results, md_escape)),
        reliability=reliability,
        disagreement=safe(disagreement_sentences(results, md_escape)),
        within=safe(within_sentences(results, md_escape)),
        stability=safe(stability_sentences(results, md_escape)),
        judges=safe(judge_sentences(results, md_escape)),
        limitations=Markup(" ".join(limitations(results, md_escape))),
        method=method).strip() + "\n"


_SKELETON = """---
{{ card_data }}
---

# Dataset Card for {{ title }}

<!-- Hand-written sections belong outside the annotation-audit markers below: the block between
them is regenerated by `annotation-audit card` and `annotation-audit run`. -->

{{ block }}"""


def render_card(results: dict, *, existing: str | None = None, creators: dict | None = None,
                default_creator: str = DEFAULT_CREATOR, path=None) -> str:
    """The dataset card as text; with ``existing``, that card updated in place.

    Parameters
    ----------
    existing
        The text of a card to update: the block between :data:`START` and :data:`END` is
        replaced (or appended when it has no markers); the rest, and its YAML, are kept.
    creators, default_creator
        ``annotations_creators`` overrides (see :func:`pool_creators`).
    path
        Where ``existing`` was read from, for error messages.

    Raises
    ------
    InputError
        ``existing`` has a start marker without an end marker, or YAML that is not a mapping.
    """
    from jinja2 import Template

    data = card_data(results, creators=creators, default_creator=default_creator)
    block = annotations_block(results, creators=creators, default_creator=default_creator)
    if existing is None:
        name = (results.get("dataset") or {}).get("name") or "this dataset"
        return Template(_SKELETON).render(card_data=front_matter(data.to_dict()),
                                          title=md_escape(name), block=block)
    from .card_meta import yaml_fields

    explicit = yaml_fields((results.get("dataset") or {}).get("card"))
    return _update(existing, data.to_dict(), block, path=path, explicit=explicit)


def _update(existing: str, computed: dict, block: str, *, path=None,
            explicit: dict | None = None) -> str:
    """``existing`` with the block replaced and the YAML completed: a key the card already has
    is kept as written, except those the spec or a flag gave this run (``explicit``), which the
    user asked for now and so replace the card's value (the YAML is then re-written)."""
    import yaml

    match = YAML_BLOCK.search(existing)
    if match:
        yaml_text, body = match.group(2), existing[match.end():]
        try:
            user = yaml.safe_load(yaml_text)
        except yaml.YAMLError as err:
            raise InputError(f"the card's YAML metadata does not parse: {err}", path=path) from None
        user = {} if user is None else user
        if not isinstance(user, dict):
            raise InputError("the card's YAML metadata is not a mapping", path=path)
    elif _OPENS_YAML.match(existing):
        raise InputError("the card opens a YAML metadata block with '---' on its first line but "
                         "no '---' line closes it: close it, or the metadata would be read as "
                         "Markdown text", path=path)
    else:
        yaml_text, body, user = "", existing, {}
    replace = {k: v for k, v in (explicit or {}).items() if k in user and user[k] != v}
    if replace:
        yaml_text = front_matter({**user, **replace})
        user = {**user, **replace}
    added = {k: v for k, v in computed.items() if k not in user}
    if added:
        extra = front_matter(added)
        yaml_text = f"{yaml_text.rstrip()}\n{extra}" if yaml_text.strip() else extra
    start = body.find(START)
    if start >= 0:
        end = body.find(END, start)
        if end < 0:
            raise InputError(f"the card has {START} but no {END} after it", path=path)
        body = body[:start] + block.rstrip("\n") + body[end + len(END):]
    else:
        body = body.rstrip("\n") + ("\n\n" if body.strip() else "\n") + block
    if not body.startswith(("\n", "\r\n")):
        body = "\n" + body
    text = f"---\n{yaml_text}\n---\n{body}"
    return _line_breaks_of(existing, text)


#: The start of a YAML metadata block: ``---`` alone on the first line.
_OPENS_YAML = re.compile(r"\s*---[ \t]*(?:\r\n|\r|\n)")


def _line_breaks_of(existing: str, text: str) -> str:
    """``text`` with the line breaks the existing card mostly uses: a card written on Windows
    (CRLF) stays CRLF, so updating it changes only the lines the audit changed, not every
    line in the user's diff."""
    if existing.count("\r\n") * 2 <= existing.count("\n"):
        return text
    return text.replace("\r\n", "\n").replace("\n", "\r\n")


def parse_card(text: str) -> tuple[dict, str]:
    """The card's metadata (``DatasetCardData(...).to_dict()``) and body, as
    :class:`huggingface_hub.DatasetCard` reads them: the YAML block at the top (:data:`YAML_BLOCK`)
    loaded with ``yaml.safe_load`` (none: empty metadata), the text after it the body.

    Raises
    ------
    ValueError, yaml.YAMLError, TypeError
        As ``DatasetCard(text)`` does: YAML that does not parse, is not a mapping, or holds
        values :class:`~huggingface_hub.DatasetCardData` does not accept.
    """
    import yaml
    from huggingface_hub import DatasetCardData

    match = YAML_BLOCK.search(text)
    if match:
        body = text[match.end():]
        data = yaml.safe_load(match.group(2))
        data = {} if data is None else data
        if not isinstance(data, dict):
            raise ValueError("repo card metadata block should be a dict")
    else:
        body, data = text, {}
    return DatasetCardData(**data, ignore_metadata_errors=False).to_dict(), body


def check_card(text: str) -> list[str]:
    """Problems that would stop the Hub from accepting the card; empty when it is valid.

    Offline: the card must parse as :class:`huggingface_hub.DatasetCard` parses it
    (:func:`parse_card`: YAML a mapping that :class:`~huggingface_hub.DatasetCardData`
    accepts), and its ``annotations_creators`` and ``size_categories`` must come from the Hub's
    vocabularies. Also checks the markers.
    """
    try:
        meta, body = parse_card(text)
    except Exception as err:  # yaml errors, ValueError, TypeError, as DatasetCard raises them
        return [f"metadata does not parse: {err}"]
    problems = []
    for key, allowed in (("annotations_creators", CREATOR_KINDS),
                         ("size_categories", SIZE_VALUES)):
        values = meta.get(key)
        values = [values] if isinstance(values, str) else values or []
        bad = [v for v in values if v not in allowed]
        if bad:
            problems.append(f"{key}: {join_names(map(str, bad))} not one of "
                            f"{join_names(allowed)}")
    # the markers belong to the body (a YAML value may quote them)
    if body.count(START) != 1 or body.count(END) != 1 or body.find(START) > body.find(END):
        problems.append(f"expected one {START} ... {END} block")
    return problems
