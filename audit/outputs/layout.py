"""What an output folder holds: the file names, the manifest, and the run id.

``manifest.json`` (:data:`MANIFEST`) is written last into every output folder::

    {"tool": "annotation-audit", "version": "...", "command": "run", "run_id": "...",
     "files": {"report.html": {"sha256": "...", "bytes": 123}, ...}}

with files sorted by their path relative to the folder (``/``-separated) and nothing time- or
host-dependent, so the same run writes the same manifest.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

from ..errors import InputError
from .fs import sha256_file

#: The manifest every output folder holds.
MANIFEST = "manifest.json"
RESULTS = "results.json"
#: The files ``run`` writes (``results.json`` alone with ``--no-report``; ``items.csv`` with
#: ``--items-csv``, see :mod:`audit.items`), and ``advise --out``'s advised items
#: (:mod:`audit.report.advice_table`).
RUN_FILES = (RESULTS, "report.html", "dataset_card.md", "croissant_rai.json", "croissant.json",
             "items.parquet", "items.csv", "advice.parquet", "advice.csv")
CARD_FILE = "dataset_card.md"
#: What ``export`` adds to its OUT (see :mod:`audit.export`).
EXPORT_NAMES = ("judgments", "spec.yaml")
#: Names annotation-audit writes: found in a folder but not in its manifest, they are left from
#: another run.
OUR_NAMES = RUN_FILES + EXPORT_NAMES + (MANIFEST,)
#: The largest manifest read (it lists every file of an export).
MAX_MANIFEST_BYTES = 64 * 2**20
RUN_ID_DIGITS = 16
TOOL = "annotation-audit"


class OutputsError(InputError):
    """An output folder whose files do not match its manifest: torn (no manifest), mixed (a file
    of another run) or edited after the run. ``path`` is the file that does not match."""


def write_manifest(folder, *, command: str, run_id: str | None = None) -> dict:
    """Hash every file in ``folder`` and write :data:`MANIFEST` there; return the file table.

    ``run_id`` None (``export``) is the digest of the file table (:func:`files_run_id`).
    """
    folder = Path(folder)
    files = {}
    for root, dirs, names in os.walk(folder):
        dirs.sort()
        for name in sorted(names):
            path = Path(root) / name
            rel = path.relative_to(folder).as_posix()
            if rel == MANIFEST:
                continue
            files[rel] = {"sha256": sha256_file(path), "bytes": path.stat().st_size}
    from .. import __version__

    files = dict(sorted(files.items()))
    manifest = {"tool": TOOL, "version": __version__, "command": command,
                "run_id": run_id if run_id is not None else files_run_id(files),
                "files": files}
    (folder / MANIFEST).write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n",
                                   encoding="utf-8")
    return files


def run_id(results: dict) -> str:
    """The run id of a result dict: the first :data:`RUN_ID_DIGITS` hex digits of the SHA-256
    of its ``results.json`` text without ``meta.run_id`` (see :mod:`audit.outputs`)."""
    from ..results import dumps

    meta = {k: v for k, v in (results.get("meta") or {}).items() if k != "run_id"}
    text = dumps({**results, "meta": meta})
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:RUN_ID_DIGITS]


def stamped(results: dict) -> tuple[str, str]:
    """The run id of ``results`` (:func:`run_id`) and the text of ``results.json`` with it as
    ``meta.run_id``, from one serialisation (one contract check, one encoding).

    The id is a digest of the text without it; a key appended to a JSON object written with
    ``indent=2`` is that text with ``,\n    "run_id": "..."`` before the line that closes
    ``meta`` (at the top level, a line that is exactly two spaces and ``}``: a line break
    inside a value is written ``\n``, so none can look like one). A ``meta`` already holding
    ``run_id`` anywhere but last, or holding nothing else, is written by :func:`run_id` and a
    second serialisation instead, as before.
    """
    from ..results import dumps

    meta = results.get("meta")
    keys = list(meta) if isinstance(meta, dict) else []
    body = {k: v for k, v in meta.items() if k != "run_id"} if keys else {}
    if not body or ("run_id" in keys and keys[-1] != "run_id"):
        ident = run_id(results)
        return ident, dumps({**results, "meta": {**(meta or {}), "run_id": ident}})
    text = dumps({**results, "meta": body})
    ident = hashlib.sha256(text.encode("utf-8")).hexdigest()[:RUN_ID_DIGITS]
    opening = text.index('\n  "meta": {') if not text.startswith('{\n  "meta": {') else 0
    closing = text.index("\n  }", opening)
    entry = ",\n    " + json.dumps("run_id") + ": " + json.dumps(ident, ensure_ascii=False)
    return ident, text[:closing] + entry + text[closing:]


def files_run_id(files: dict) -> str:
    """The run id of a set of files without a result dict (``export``): a digest of their
    names and SHA-256s."""
    text = "".join(f"{name}\0{entry['sha256']}\n" for name, entry in sorted(files.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:RUN_ID_DIGITS]


def read_manifest(path: Path, *, shown=None, foreign: bool = False) -> dict:
    """Read and check a manifest; ``foreign``: one not written by annotation-audit is a plain
    :class:`InputError` (a folder that is not ours), else an :class:`OutputsError`."""
    shown = path if shown is None else shown
    error = InputError if foreign else OutputsError
    try:
        if os.path.islink(path) or not path.is_file():
            raise ValueError("not a regular file")
        if path.stat().st_size > MAX_MANIFEST_BYTES:
            raise ValueError(f"larger than {MAX_MANIFEST_BYTES:,} bytes")
        data = path.read_bytes()
    except (OSError, ValueError) as err:
        raise error(f"is not an annotation-audit manifest ({err})", path=shown) from None
    return parse_manifest(data, shown, error=error)


def parse_manifest(data: bytes, shown, *, error=None) -> dict:
    """Parse a manifest's bytes; a file name outside the folder (absolute, ``..``) is refused,
    so a hostile manifest cannot make a check read elsewhere."""
    error = OutputsError if error is None else error
    try:
        manifest = json.loads(data.decode("utf-8"))
    except (ValueError, RecursionError) as err:
        raise error(f"is not an annotation-audit manifest ({err})", path=shown) from None
    if not (isinstance(manifest, dict) and manifest.get("tool") == TOOL
            and isinstance(manifest.get("run_id"), str)
            and isinstance(manifest.get("files"), dict)):
        raise error("is not an annotation-audit manifest (no tool, run_id and files)",
                    path=shown)
    for name, entry in manifest["files"].items():
        parts = name.split("/")
        if (name.startswith("/") or any(p in ("", ".", "..") for p in parts) or "\\" in name
                or "\0" in name or not isinstance(entry, dict)
                or not isinstance(entry.get("sha256"), str)):
            raise error(f"lists {name!r}, which is not a file inside its folder", path=shown)
    return manifest
