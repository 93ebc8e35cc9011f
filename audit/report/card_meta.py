"""The dataset card's publishing metadata: ``license``, ``language``, ``task_categories``,
``tags``, ``pretty_name`` (and the Croissant document's ``description`` and ``url``).

The values come from the spec's ``card:`` section (:mod:`audit.ingest.spec`) and the CLI's
``--license``, ``--language``, ``--task-category``, ``--tag`` and ``--pretty-name`` flags, which
override it key by key (a list flag given once replaces the spec's whole list):

.. code-block:: yaml

    card:
      license: cc-by-4.0
      language: [en]
      task_categories: [text-classification]
      tags: [preference, annotation-audit]
      pretty_name: PandaLM test set
      description: Pairwise preferences of three annotators over 999 instruction responses.
      url: https://github.com/WeOpenML/PandaLM

:func:`card_metadata` parses them once into a plain dict, which :func:`audit.pipeline.run`
stores as ``results["dataset"]["card"]`` (only when something is set, so results.json is
unchanged otherwise); the card (:func:`audit.report.card.card_data`) and the Croissant document
(:mod:`audit.report.croissant`) are rendered from it.

Validation is offline. ``DatasetCard.validate()`` posts the card to the Hub, so the Hub's rules
that can be checked locally are reproduced: ``license`` is one of the Hub's license identifiers
(:data:`HUB_LICENSES`, from https://huggingface.co/docs/hub/repositories-licenses); ``language``
is a code the ``datasets`` library ships (``datasets/utils/resources/languages.json``: ISO 639-1,
639-2 and 639-3 codes and the special values ``code`` and ``multilingual``); ``task_categories``
are Hub task ids (:data:`HUB_TASKS`); tags are one line of at most :data:`MAX_TAG` characters.
The card written with them still has to load with :class:`huggingface_hub.DatasetCard` and
round-trip through :func:`huggingface_hub.metadata_save` / :func:`~huggingface_hub.metadata_load`,
which the tests check. A value that fails is an :class:`audit.errors.InputError` naming the key
(``card.license`` or the flag) and, for the spec, its file.
"""

from __future__ import annotations

import re
from pathlib import Path

from ..errors import InputError, join_names

#: The keys of the spec's ``card:`` section: list-valued, then single values.
LIST_KEYS = ("language", "task_categories", "tags")
TEXT_KEYS = ("license", "pretty_name", "description", "url")
KEYS = ("license", "language", "task_categories", "tags", "pretty_name", "description", "url")
#: Keys written into the card's YAML header (``description`` and ``url`` go to Croissant only).
YAML_KEYS = ("license", "language", "task_categories", "tags", "pretty_name")
#: The CLI flag that sets each key, for messages.
FLAGS = {"license": "--license", "language": "--language", "task_categories": "--task-category",
         "tags": "--tag", "pretty_name": "--pretty-name"}
MAX_TAG = 100

#: The Hub's license identifiers (https://huggingface.co/docs/hub/repositories-licenses, 2025;
#: huggingface_hub ships no list). ``other`` with a ``license_name`` covers the rest.
HUB_LICENSES = (
    "apache-2.0", "mit", "openrail", "bigscience-openrail-m", "creativeml-openrail-m",
    "bigscience-bloom-rail-1.0", "bigcode-openrail-m", "afl-3.0", "artistic-2.0", "bsl-1.0",
    "bsd", "bsd-2-clause", "bsd-3-clause", "bsd-3-clause-clear", "c-uda", "cc", "cc0-1.0",
    "cc-by-2.0", "cc-by-2.5", "cc-by-3.0", "cc-by-4.0", "cc-by-sa-3.0", "cc-by-sa-4.0",
    "cc-by-nc-2.0", "cc-by-nc-3.0", "cc-by-nc-4.0", "cc-by-nd-4.0", "cc-by-nc-nd-3.0",
    "cc-by-nc-nd-4.0", "cc-by-nc-sa-2.0", "cc-by-nc-sa-3.0", "cc-by-nc-sa-4.0",
    "cdla-sharing-1.0", "cdla-permissive-1.0", "cdla-permissive-2.0", "wtfpl", "ecl-2.0",
    "epl-1.0", "epl-2.0", "etalab-2.0", "eupl-1.1", "eupl-1.2", "agpl-3.0", "gfdl", "gpl",
    "gpl-2.0", "gpl-3.0", "lgpl", "lgpl-2.1", "lgpl-3.0", "isc", "h-research", "intel-research",
    "lppl-1.3c", "ms-pl", "apple-ascl", "apple-amlr", "mpl-2.0", "odc-by", "odbl",
    "openrail++", "osl-3.0", "postgresql", "ofl-1.1", "ncsa", "unlicense",
    "zlib", "pddl", "lgpl-lr", "deepfloyd-if-license", "fair-noncommercial-research-license",
    "llama2", "llama3", "llama3.1", "llama3.2", "llama3.3", "llama4", "gemma",
    "unknown", "other")

#: The Hub's task ids (the ``task_categories`` it files datasets under).
HUB_TASKS = (
    "text-classification", "token-classification", "table-question-answering",
    "question-answering", "zero-shot-classification", "translation", "summarization",
    "feature-extraction", "text-generation", "text2text-generation", "fill-mask",
    "sentence-similarity", "text-to-speech", "text-to-audio", "automatic-speech-recognition",
    "audio-to-audio", "audio-classification", "audio-text-to-text", "voice-activity-detection",
    "depth-estimation", "image-classification", "object-detection", "image-segmentation",
    "text-to-image", "image-to-text", "image-to-image", "image-to-video",
    "unconditional-image-generation", "video-classification", "reinforcement-learning",
    "robotics", "tabular-classification", "tabular-regression", "tabular-to-text",
    "table-to-text", "multiple-choice", "text-ranking", "text-retrieval", "time-series-forecasting",
    "text-to-video", "image-text-to-text", "visual-question-answering",
    "document-question-answering", "zero-shot-image-classification", "graph-ml", "mask-generation",
    "zero-shot-object-detection", "text-to-3d", "image-to-3d", "image-feature-extraction",
    "video-text-to-text", "keypoint-detection", "visual-document-retrieval", "any-to-any",
    "video-to-video", "other")


def hub_languages() -> frozenset[str]:
    """The language codes the ``datasets`` library accepts in a card (its ``languages.json``),
    read from the installed package without importing it (``import datasets`` takes seconds)."""
    import json
    from importlib.util import find_spec

    spec = find_spec("datasets")
    path = Path(spec.origin).parent / "utils" / "resources" / "languages.json"
    return frozenset(json.loads(path.read_text(encoding="utf-8")))


def _where(key: str, flags: set, spec_path) -> dict:
    if key in flags:
        return {"key": FLAGS.get(key, key)}
    return {"key": f"card.{key}", "path": spec_path if spec_path is not None else "spec"}


def card_metadata(spec_card: dict | None = None, *, spec_path=None, license: str | None = None,
                  language=(), task_categories=(), tags=(), pretty_name: str | None = None
                  ) -> dict:
    """The card's publishing metadata: the spec's ``card:`` section with the flags over it.

    Parameters
    ----------
    spec_card
        The spec's ``card:`` section (:attr:`audit.ingest.spec.DatasetSpec.card`), validated for
        shape by the spec reader.
    spec_path
        The spec file, for messages.
    license, language, task_categories, tags, pretty_name
        The CLI flags; a given list replaces the spec's list for that key.

    Returns
    -------
    dict
        The keys of :data:`KEYS` that are set, in that order; lists de-duplicated in order.

    Raises
    ------
    InputError
        A value outside the Hub's vocabularies (module docstring), an empty or multi-line text,
        naming the flag or the spec key.
    """
    meta = {k: v for k, v in (spec_card or {}).items() if v not in (None, [], ())}
    flags = set()
    for key, value in (("license", license), ("pretty_name", pretty_name)):
        if value is not None:
            meta[key] = value
            flags.add(key)
    for key, values in (("language", language), ("task_categories", task_categories),
                        ("tags", tags)):
        if values:
            meta[key] = list(values)
            flags.add(key)
    out = {}
    for key in KEYS:
        if key not in meta:
            continue
        where = _where(key, flags, spec_path)
        value = meta[key]
        if key in LIST_KEYS:
            items = [value] if isinstance(value, str) else list(value)
            out[key] = list(dict.fromkeys(_text(v, key, where) for v in items))
        else:
            out[key] = _text(value, key, where)
    _check_vocabularies(out, flags, spec_path)
    return out


def _text(value, key: str, where: dict) -> str:
    if not isinstance(value, str):
        raise InputError(f"{key} must be text; got {value!r}", **where)
    text = value.strip()
    if not text:
        raise InputError(f"{key} is empty", **where)
    if key != "description" and re.search(r"[\x00-\x1f\x7f\x85\u2028\u2029]", text):
        raise InputError(f"{key} must be one line without control characters; got {value!r}",
                         **where)
    return text


def _check_vocabularies(meta: dict, flags: set, spec_path) -> None:
    def bad(key, values, allowed, what):
        wrong = [v for v in values if v not in allowed]
        if wrong:
            raise InputError(f"{join_names(wrong)} is not {what}; see {_HELP[key]}",
                             **_where(key, flags, spec_path))

    if "license" in meta:
        bad("license", [meta["license"]], HUB_LICENSES, "a Hugging Face Hub license identifier")
    if "language" in meta:
        bad("language", meta["language"], hub_languages(),
            "an ISO 639-1/2/3 code the Hub accepts (or 'code', 'multilingual')")
    if "task_categories" in meta:
        bad("task_categories", meta["task_categories"], HUB_TASKS, "a Hugging Face Hub task id")
    for tag in meta.get("tags", []):
        if len(tag) > MAX_TAG:
            raise InputError(f"a tag is at most {MAX_TAG} characters; got {len(tag)}",
                             **_where("tags", flags, spec_path))
    if "url" in meta and not re.match(r"https?://[^\s/]+", meta["url"]):
        raise InputError(f"url must be an http(s) address; got {meta['url']!r}",
                         **_where("url", flags, spec_path))


_HELP = {"license": "https://huggingface.co/docs/hub/repositories-licenses",
         "language": "https://huggingface.co/languages",
         "task_categories": "https://huggingface.co/tasks"}


def yaml_fields(meta: dict | None) -> dict:
    """The keys of ``meta`` that go into the card's YAML header (:data:`YAML_KEYS`)."""
    return {k: meta[k] for k in YAML_KEYS if meta and k in meta}


def kept_values(results: dict, card_text: str) -> list[str]:
    """Messages for each publishing key that ``card_text`` (an updated card) has with a value
    other than the one the spec or a flag gave. :func:`audit.report.card.render_card` writes
    those values over the card's own, so this is empty unless that rule is broken: a check
    that what was asked for is what was written."""
    import yaml

    from .card import YAML_BLOCK

    wanted = yaml_fields((results.get("dataset") or {}).get("card"))
    match = YAML_BLOCK.search(card_text)
    if not wanted or not match:
        return []
    have = yaml.safe_load(match.group(2)) or {}
    return [f"the card's YAML keeps its own {key}: {have[key]!r}, not {value!r} from "
            f"{FLAGS[key]} or the spec's card.{key}; edit or remove it in the card to change it"
            for key, value in wanted.items() if key in have and have[key] != value]


def from_spec(spec, flags: dict | None = None, *, allow_outside: bool = False) -> dict:
    """:func:`card_metadata` of a spec (a path, a dict or a
    :class:`audit.ingest.spec.DatasetSpec`, or None) and the CLI's ``flags``
    (``{"license": ..., "language": [...], ...}``); ``{}`` when neither sets anything."""
    section, path = {}, None
    if spec is not None:
        from ..ingest.spec import read_spec

        parsed = read_spec(spec, allow_outside=allow_outside)
        section, path = parsed.card, parsed.path
    if not section and not flags:
        return {}
    return card_metadata(section, spec_path=path, **(flags or {}))
