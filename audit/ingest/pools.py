"""Annotator -> pool mappings: read from a file, matched to the data's ids, folded when tiny.

Accepted files:

* CSV / TSV with a column ``annotator`` and a column ``pool`` (or the column named by
  ``pool_column``);
* JSON object ``{annotator: pool}``;
* JSON metadata object ``{annotator: {field: value, ...}}`` (LeWiDi's ``*_annotators_meta.json``)
  or JSON array of records, with ``pool_column`` naming the field that becomes the pool, e.g.
  ``Nationality``. Any field works;
* YAML (``.yaml`` / ``.yml``) mapping, either shape of the JSON objects, read as a spec is
  (YAML 1.2's core schema: ``007`` and ``yes`` stay text);
* an Excel rater sheet (``.xlsx``), read as the CSV is (:mod:`.readers.workbooks`).

Annotator keys are written as the data's ids are (:func:`audit.contract.ids.id_text`), wherever
the mapping comes from (a CSV / TSV / Parquet / JSON file, a spec's ``pools.map``, a mapping
passed in): a key ``1.0`` (a float column, a YAML ``1.0:``) is ``1``, so it names the annotator a
CSV writes ``1`` and a Parquet float column holds as ``1.0``; text keys stay text (``007``).
Keys read from a file, whatever its format (a CSV / TSV / Parquet column, a JSON object's keys,
a metadata object's keys, a JSON array's records), are read without surrounding blanks
(:func:`file_key`); a spec's ``pools.map`` and a mapping passed in keep their keys as written.
Two keys that write the same text with different pools are an error naming the key.

Pool names are text. A metadata value becomes a pool name by one deterministic rule
(:func:`pool_name`): text is stripped of surrounding blanks; a number as an id is written
(:func:`audit.contract.ids.id_text`: ``26`` and ``26.0`` are one pool, other numbers by their
shortest round-trip form); ``true`` / ``false``; a list or object as compact JSON with sorted
keys (a list keeps its order, as its authors wrote it). A value that is absent, null, NaN, empty text or
an empty list / object gives the pool :data:`MISSING_POOL`, with one warning naming how many
annotators have it. So does the text a missing value is written as when a table holding it is
turned into text (:data:`MISSING_TEXTS`: ``nan``, ``NaN``, ``<NA>``): LeWiDi 2025's
``CSC_annotators_meta.json`` writes ``"Gender": "nan"`` for the 17 annotators it has no gender
for, which is no group of people; the warning says how many values were written so. Other
texts stay pools (``None`` may be an answer, as ``DATA_EXPIRED`` is Prolific's): a data file's
``pool`` column is read as its labels are (text as written; an empty cell is a missing id).

Ids are matched exactly first, then as the mapping writes keys read from a file, without
surrounding blanks (the data's ``" ann1"`` is the file's ``" ann1"``, read as ``ann1``). Data ids
the mapping does not name are then matched by number when
the two sides number annotators with different prefixes (the data's ``Ann17`` and a metadata key
``17``, ``ann_17`` or ``Annotator17``): same digits, leading zeros included (``Ann07`` is not
``7``), prefixes equal up to case and separators, or one empty, or one the start of the other,
and only where exactly one key fits. A warning says how many ids were matched that way, with an
example. Annotators still unmatched get the pool :data:`UNKNOWN_POOL` and one warning naming how
many they are.

Tiny pools: with ``min_pool_annotators=N`` (:func:`fold_pools`), every pool that fewer than ``N``
annotators of the data hold, and every placeholder pool (:data:`PLACEHOLDER_POOLS`: ``nan``,
``DATA_EXPIRED``, ``CONSENT_REVOKED``, empty...), is renamed :data:`OTHER_POOL`. Judgments are
never dropped; the folded pools and their annotator and judgment counts go into one warning and
``table.info["pools_folded"]``. :data:`UNKNOWN_POOL` (annotators the mapping lacks) and judge pools
are never folded: folding them would hide that the metadata is incomplete, or mix people with
an automatic judge. Without ``N`` (the default) no pool is folded: the pools are the values as
their authors wrote them. ``N = 1`` folds the placeholders only.
"""

from __future__ import annotations

import decimal
import json
import numbers
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import pandas as pd

from ..contract import columns as C
from ..contract.ids import id_text
from ..errors import InputError, join_names
from .common import warn
from .readers import read_json, read_table
from .sources import existing_path

#: Pool given to annotators a pool mapping does not name.
UNKNOWN_POOL = "unknown"
#: Pool given to annotators the mapping names with no value (absent field, null, NaN, empty).
MISSING_POOL = "missing"
#: Pool that tiny and placeholder pools are folded into (``min_pool_annotators``).
OTHER_POOL = "other"
#: Pool names (compared case-insensitively) that say a value is missing rather than give one:
#: always folded into :data:`OTHER_POOL` when folding is asked for. ``DATA_EXPIRED`` and
#: ``CONSENT_REVOKED`` are what Prolific writes for a participant whose data was withdrawn.
PLACEHOLDER_POOLS = frozenset({"", MISSING_POOL, "nan", "none", "null", "na", "n/a",
                               "data_expired", "consent_revoked"})
#: Texts (compared without case or surrounding blanks) that are a missing value written out:
#: ``str`` of a float NaN and of pandas' NA. A metadata value so written is no pool
#: (:func:`pool_name` gives :data:`MISSING_POOL`).
MISSING_TEXTS = frozenset({"nan", "<na>"})

_NUMBERED = re.compile(r"^(?P<prefix>.*?)(?P<number>\d+)$")
_SEPARATORS = re.compile(r"[\s_\-.#:/]+")


def pool_name(value) -> str:
    """A metadata value as a pool name (module docstring); missing -> :data:`MISSING_POOL`."""
    if value is None:
        return MISSING_POOL
    if isinstance(value, (bool, np.bool_)):
        return "true" if value else "false"
    if isinstance(value, (numbers.Real, decimal.Decimal)):
        text = id_text(value)
        return MISSING_POOL if text is None else text
    if isinstance(value, str):
        text = value.strip()
        return text if text and not is_missing_text(text) else MISSING_POOL
    if isinstance(value, (Mapping, list, tuple)):
        if not value:
            return MISSING_POOL
        return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"),
                          default=str)
    if value is pd.NA or value is pd.NaT:
        return MISSING_POOL
    return str(value).strip() or MISSING_POOL


def is_missing_text(value) -> bool:
    """True for text that writes a missing value (:data:`MISSING_TEXTS`)."""
    return isinstance(value, str) and value.strip().casefold() in MISSING_TEXTS


def read_pools(source, *, pool_column: str | None = None) -> dict[str, str]:
    """Read an annotator -> pool mapping from a CSV / TSV / JSON / YAML file, or an Excel rater
    sheet (see the module docstring).

    Raises
    ------
    InputError
        The file is missing or unreadable, lacks the annotator or pool column, names an
        annotator twice with different pools, or ``pool_column`` is not a field of the metadata
        (the message lists the fields).
    """
    path = existing_path(source, what="pools file")
    if path.suffix.lower() in (".yaml", ".yml"):
        data = _read_yaml(path)
        if not isinstance(data, dict):
            empty = "the pools file is empty; " if data is None else ""
            raise InputError(f"{empty}expected a YAML mapping of annotator: pool (or annotator: "
                             "{field: value} with --pool-column)", path=str(path))
        return _from_json_object(data, path, pool_column)
    if path.suffix.lower() == ".json":
        data = read_json(path)
        if isinstance(data, list):
            return _from_frame(pd.DataFrame.from_records(data), path, pool_column)
        if not isinstance(data, dict):
            raise InputError("expected a JSON object mapping annotator -> pool or -> metadata",
                             path=str(path))
        return _from_json_object(data, path, pool_column)
    return _from_frame(read_table(path), path, pool_column)


def _read_yaml(path: Path):
    """A YAML pools file as plain data (None when empty), read as a spec is
    (:func:`.yamlmodel.read`: YAML 1.2's core schema, so ``yes`` stays text and ``007`` stays
    ``007``; no tags, bounded aliases; a key given twice in one mapping refused)."""
    from . import yamlmodel, yamlsafe
    from .spec import _yaml_message

    try:
        return yamlmodel.read(yamlsafe.read_yaml_text(path, what="pools file"))[0]
    except yamlsafe.YamlProblem as err:
        raise InputError(_yaml_message(err), path=str(path)) from None
    except yamlmodel.YamlInvalid as err:
        raise InputError(f"line {err.problem.line}: {err.problem.message}", path=str(path),
                         key=err.problem.key) from None


def _from_json_object(data: dict, path: Path, pool_column: str | None) -> dict[str, str]:
    nested = [k for k, v in data.items() if isinstance(v, dict)]
    if not nested:
        if pool_column is not None:
            raise InputError(f"--pool-column {pool_column!r} given, but this file maps annotators "
                             "straight to pools (no metadata fields)", path=str(path))
        mapping = _by_key(data, pool_name, path=str(path), where=None, key_text=file_key)
        return _with_missing(mapping, path, None, data.values())
    if len(nested) != len(data):
        bad = next(k for k, v in data.items() if not isinstance(v, dict))
        raise InputError("mixes metadata objects and plain values", path=str(path), key=bad)
    fields = sorted({str(f) for v in data.values() for f in v})
    if pool_column is None:
        raise InputError(f"an annotator metadata file needs --pool-column; fields: "
                         f"{join_names(fields)}", path=str(path))
    if pool_column not in fields:
        raise InputError(f"no field {pool_column!r} in the annotator metadata; fields: "
                         f"{join_names(fields)}", path=str(path), key=pool_column)
    values = {k: v.get(pool_column) for k, v in data.items()}
    mapping = _by_key(values, pool_name, path=str(path), where=None, key_text=file_key)
    return _with_missing(mapping, path, pool_column, values.values())


def _from_frame(frame: pd.DataFrame, path: Path, pool_column: str | None) -> dict[str, str]:
    pool_col = pool_column or C.POOL
    for col in (C.ANNOTATOR, pool_col):
        if col not in frame.columns:
            raise InputError(f"no column {col!r} in the pools file; columns: "
                             f"{join_names(frame.columns)}", path=str(path), column=col)
    no_id = frame[C.ANNOTATOR].isna().to_numpy()
    if no_id.any():
        raise InputError("empty annotator", path=str(path), column=C.ANNOTATOR,
                         row=int(no_id.argmax()))
    ann = frame[C.ANNOTATOR].map(file_key)
    pool = frame[pool_col].map(pool_name)
    clash = pd.DataFrame({"a": ann, "p": pool}).drop_duplicates().duplicated("a", keep=False)
    if clash.any():
        who = ann[clash.to_numpy()].iloc[0]
        raise InputError(f"annotator {who!r} is given more than one pool", path=str(path),
                         column=C.ANNOTATOR)
    return _with_missing(dict(zip(ann, pool)), path, pool_col, frame[pool_col])


def file_key(value) -> str | None:
    """An annotator key read from a pools file, any format (module docstring): text without
    surrounding blanks, any other value by :func:`audit.contract.ids.id_text`. A rater sheet
    exported beside the data keeps the data's blanks (``" ann1"``) in a CSV as in a JSON
    object; the data's id is matched to the key without them (:func:`match_keys`)."""
    return value.strip() if isinstance(value, str) else id_text(value)


def _with_missing(mapping: dict[str, str], path: Path | str, field: str | None,
                  values: Iterable = ()) -> dict[str, str]:
    """``mapping``, with one warning counting the annotators whose pool is
    :data:`MISSING_POOL` and, of ``values`` (the pools as the source writes them), those written
    as a missing value's text (:data:`MISSING_TEXTS`)."""
    empty = [k for k, v in mapping.items() if v == MISSING_POOL]
    if empty:
        what = f"no {field!r}" if field else "no pool"
        written = Counter(v.strip() for v in values if is_missing_text(v))
        texts = (f"; {sum(written.values())} written as the text "
                 f"{join_names(sorted(written))}, which is read as no value" if written else "")
        warn(f"{path}: {len(empty)} annotator(s) have {what} (e.g. "
             f"{join_names(empty, limit=3)}{texts}); their pool is {MISSING_POOL!r}")
    return mapping


def resolve_pools(pools, *, pool_column: str | None = None, base: Path | None = None):
    """``pools`` as a mapping: None stays None, a Mapping is used as is, a path is read.

    A relative path is taken relative to ``base`` (a spec file's folder) when given.
    """
    if pools is None:
        return None
    if isinstance(pools, Mapping):
        return _with_missing(_by_key(pools, pool_name, path=None), "pools", None, pools.values())
    path = Path(pools)
    if base is not None and not path.is_absolute():
        path = base / path
    return read_pools(path, pool_column=pool_column)


def pools_mapping(pools, *, pool_column: str | None, spec) -> dict[str, str] | None:
    """The annotator -> pool mapping a load uses, first match wins: ``pools`` (a file or a
    mapping, :func:`resolve_pools`), the spec's ``pools.map``, the spec's ``pools.file``; None
    when there is none (pools then come from a column of the data, or the default pool)."""
    mapping = resolve_pools(pools, pool_column=pool_column)
    if mapping is None and spec.pools_map is not None:
        mapping = _by_key(spec.pools_map, str, path=spec.path and str(spec.path),
                          where="pools.map")
    if mapping is None and spec.pools_file is not None:
        mapping = resolve_pools(spec.pools_file, pool_column=spec.pools_column, base=spec.base)
    return mapping


def _by_key(mapping: Mapping, name, *, path: str | None, where: str | None = "pools",
            key_text=id_text) -> dict[str, str]:
    """``mapping`` with each annotator key written by ``key_text`` (as the data's ids are,
    :func:`id_text`; a file's keys by :func:`file_key`) and each pool by ``name``. A missing
    key, or two keys of the same text (``1`` and ``"1"``, a file's ``"a"`` and ``" a"``) with
    different pools, is an InputError naming the key: ``<where>.<id>``, or (``where`` None,
    a file's own keys) the key as the file writes it."""
    out: dict[str, str] = {}
    for key, value in mapping.items():
        text = key_text(key)
        if text is None:
            raise InputError(f"a key of {where or 'the pools file'} is missing (null or NaN); "
                             "keys are annotator ids", path=path, key=where)
        pool = name(value)
        if out.get(text, pool) != pool:
            raise InputError(f"annotator {text!r} is given more than one pool ({out[text]!r} "
                             f"and {pool!r}) by keys that write the same id", path=path,
                             key=f"{where}.{text}" if where else str(key))
        out[text] = pool
    return out


def _numbered(text: str):
    m = _NUMBERED.match(text.strip())
    if m is None:
        return None
    return _SEPARATORS.sub("", m.group("prefix")).casefold(), m.group("number")


def _prefixes_agree(a: str, b: str) -> bool:
    return a.startswith(b) or b.startswith(a)


def match_keys(ids: Iterable[str], keys: Iterable[str]) -> dict[str, str]:
    """The mapping key that names each data id: the id itself, else the id without surrounding
    blanks, else the one key with its number.

    See the module docstring for the rule. Ids no key names are left out. A key serves one id
    at most.
    """
    keys = [str(k) for k in keys]
    key_set = set(keys)
    out = {}
    rest = []
    for i in dict.fromkeys(str(i) for i in ids):
        if i in key_set:
            out[i] = i
        elif i.strip() != i and i.strip() in key_set:  # a file's keys are stripped
            out[i] = i.strip()
        else:
            rest.append(i)
    if not rest:
        return out
    taken = set(out.values())
    by_number = defaultdict(list)
    for k in keys:
        if k not in taken:
            parts = _numbered(k)
            if parts is not None:
                by_number[parts[1]].append((parts[0], k))
    if not by_number:
        return out
    found = {}
    for i in rest:
        parts = _numbered(i)
        if parts is None:
            continue
        fits = [k for prefix, k in by_number.get(parts[1], ()) if _prefixes_agree(parts[0], prefix)]
        if len(fits) == 1:
            found[i] = fits[0]
    used = Counter(found.values())
    out.update({i: k for i, k in found.items() if used[k] == 1})
    return out


def warn_matched_by_number(key_of: Mapping[str, str], n_ids: int, *, source: str) -> None:
    """One warning when some of ``n_ids`` data ids matched their mapping key by number
    (``key_of`` from :func:`match_keys`); both engines say it in these words."""
    by_number = {i: k for i, k in key_of.items() if i != k}
    if by_number:
        i, k = next(iter(by_number.items()))
        warn(f"{source}: {len(by_number)} of {n_ids} annotator id(s) matched the pools "
             f"mapping by number or without surrounding blanks, not exactly (e.g. the data's "
             f"{i!r} is the key {k!r}); "
             f"{len(key_of) - len(by_number)} matched exactly")


def assign_pools(annotators: pd.Series, mapping: Mapping[str, str], *, source: str) -> pd.Series:
    """The pool of each annotator id (see the module docstring for how ids are matched).

    Ids matched by number, not exactly, and ids the mapping lacks (pool :data:`UNKNOWN_POOL`)
    each give one warning with their count.
    """
    from ..contract.schema import string_categorical

    ids = string_categorical(annotators)  # the ids as the table writes them (audit.contract.ids)
    names = ids.categories.to_numpy(dtype=object)
    key_of = match_keys(names, mapping)
    warn_matched_by_number(key_of, len(names), source=source)
    of_name = np.array([mapping[key_of[i]] if i in key_of else None for i in names] + [None],
                       dtype=object)
    codes = np.asarray(ids.codes)
    pools = of_name[codes]  # code -1 (a missing id, a schema failure of its own): None
    missing = pd.isna(pools) & (codes >= 0)
    if missing.any():
        absent = [i for i in names if i not in key_of]
        warn(f"{source}: {len(absent)} annotator(s) ({int(missing.sum())} judgment(s)) are not in "
             f"the pools mapping (e.g. {join_names(absent, limit=3)}); their pool is "
             f"{UNKNOWN_POOL!r}")
    pools[pd.isna(pools)] = UNKNOWN_POOL
    return pd.Series(pools, index=annotators.index, dtype=object)


def check_min_pool_annotators(value) -> int | None:
    """``min_pool_annotators`` as an int >= 1, or None (no folding); an InputError otherwise."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise InputError(f"--min-pool-annotators must be a whole number >= 1; got {value!r}",
                         key="min_pool_annotators")
    return int(value)


def is_placeholder(pool: str) -> bool:
    """True for a pool name that stands for a missing value (:data:`PLACEHOLDER_POOLS`)."""
    return str(pool).strip().casefold() in PLACEHOLDER_POOLS


def fold_pools(raw: pd.DataFrame, min_annotators: int | None, *, source: str,
               keep: Iterable[str] = ()) -> tuple[pd.DataFrame, dict]:
    """Fold tiny and placeholder pools of ``raw[pool]`` into :data:`OTHER_POOL`.

    Parameters
    ----------
    raw
        One row per judgment with ``annotator`` and, when the data has pools, ``pool``.
    min_annotators
        A pool held by fewer annotators (counted in ``raw``) is folded; None folds nothing.
    keep
        Pools never folded (judge pools); :data:`UNKNOWN_POOL` is never folded either.

    Returns
    -------
    raw, info
        ``raw`` with the pools renamed (same rows), and ``{"pools_folded": {...}}`` for the
        table's ``info`` (``{}`` when ``min_annotators`` is None): the threshold, the pool
        folded into, each folded pool with its reason and counts, and the totals.
    """
    n = check_min_pool_annotators(min_annotators)
    if n is None:
        return raw, {}
    record = {"min_annotators": n, "into": OTHER_POOL, "pools": [], "n_annotators": 0,
              "n_judgments": 0}
    if C.POOL not in raw.columns:
        return raw, {"pools_folded": record}
    codes, uniques = pd.factorize(raw[C.POOL], use_na_sentinel=True)
    names = pd.Index([str(u) for u in uniques])
    ann_codes = pd.factorize(raw[C.ANNOTATOR], use_na_sentinel=True)[0]
    pairs = pd.DataFrame({"pool": codes, "ann": ann_codes})[codes >= 0]
    n_ann = pairs.drop_duplicates().groupby("pool").size().reindex(range(len(names)), fill_value=0)
    n_judg = pairs.groupby("pool").size().reindex(range(len(names)), fill_value=0)
    never = {UNKNOWN_POOL, *map(str, keep)}
    folded = []
    for code in sorted(range(len(names)), key=lambda c: names[c]):
        pool = names[code]
        if pool in never:
            continue
        reason = ("placeholder" if is_placeholder(pool) else
                  f"fewer than {n} annotators" if n_ann[code] < n else None)
        if reason:
            folded.append({"pool": pool, "reason": reason, "n_annotators": int(n_ann[code]),
                           "n_judgments": int(n_judg[code])})
    if not folded:
        return raw, {"pools_folded": record}
    folded_names = {f["pool"] for f in folded}
    into = OTHER_POOL if OTHER_POOL not in set(names) - folded_names else f"{OTHER_POOL} (folded)"
    hit = (codes >= 0) & names.isin(folded_names)[codes]
    raw = raw.copy()
    raw[C.POOL] = raw[C.POOL].astype(object).where(~hit, into)
    record.update(into=into, pools=folded,
                  n_annotators=int(pd.unique(ann_codes[hit]).size),
                  n_judgments=int(hit.sum()))
    listed = ", ".join(f"{f['pool']!r} ({f['n_annotators']} annotator(s), {f['n_judgments']} "
                       f"judgment(s))" for f in folded[:5])
    more = f" and {len(folded) - 5} more" if len(folded) > 5 else ""
    warn(f"{source}: --min-pool-annotators {n}: folded {len(folded)} pool(s) into {into!r}: "
         f"{listed}{more}; {record['n_annotators']} annotator(s), {record['n_judgments']} "
         f"judgment(s) in all, none dropped")
    return raw, {"pools_folded": record}
