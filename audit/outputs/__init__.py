"""Where a command's outputs go, and how they get there: never over an input, always as one set.

Three promises, kept here for every command that writes (``run``, ``check``, ``card``,
``export``):

**Never over an input.** A command finds every local file it will read (:func:`find_inputs`:
the source file or every file of a source folder, the spec and the pools file it names, the
``--pools`` file, a LeWiDi dataset's ``*_annotators_meta.json``, the suite, the baseline) and
resolves every output (:func:`guard_folder`, :func:`guard_file`) *before* it reads any data. An
output that is an input — by path, through a symbolic link, or as a hard link to the same file
(``(st_dev, st_ino)``) — is an :class:`audit.errors.InputError` (exit 2) naming both paths; so is
an output folder that holds an input or lies inside an input folder, a folder that is the
current directory or a mount point (outputs replace the folder as a whole), and a ``--junit`` /
``--json`` file inside an input folder or inside the ``--out`` folder. ``card --card PATH``
writes only a Markdown card: a path named ``*.md`` / ``*.markdown`` that, when it exists, is a
regular UTF-8 text file without NUL or other control characters (:func:`read_card`); the one
file of a source folder it may update is such a card (a Hub dataset's ``README.md``, which
``card`` edits only between its markers and by adding missing YAML keys).

**One set, all or nothing** (write, then rename, as SQLite and git do). An output folder (``run
--out``, ``check --out``, ``card --out``) is written into a staging folder beside it,
``.OUT.tmp-<pid>-<random>`` on the same file system, with a manifest (:data:`MANIFEST`: the run
id and the SHA-256 of every file), every file and folder flushed to disk, and is then swapped in
with one atomic ``renameat2(RENAME_EXCHANGE)`` (Linux; elsewhere two renames, with a moment in
which OUT is absent but never mixed). The old set is then deleted. A reader, a later run, a
``kill -9`` at any instant or a concurrent run into the same folder (the swap holds an exclusive
``flock`` on the parent folder) sees either the old complete set or the new complete set.
Staging folders left by a killed process are deleted by the next write beside them.

The output folder belongs to annotation-audit: after a command it holds exactly that command's
files and the manifest (``run --no-report`` into a folder that had a report leaves no stale
report behind). A folder holding anything annotation-audit did not write (a name that is neither
in its manifest nor one of :data:`RUN_FILES`) is refused, exit 2 naming the file, rather than
moved aside; ``dataset_card.md`` is the exception that proves the rule: its hand-written text
outside the markers is carried into the new set (:func:`audit.report.write_reports`).
``export`` adds ``judgments/``, ``spec.yaml`` and the manifest to OUT, keeps whatever else is
there, and refuses (exit 2, "already exists") when any of the three is already there; the
manifest is moved in last. Single files (``check --junit`` / ``--json``, ``card --card``) are
written to a temporary file beside them and renamed over the target (:func:`write_text`); a
symbolic link is written through to its target and kept.

**Checked when read back.** :func:`verify_outputs` re-hashes a folder against its manifest and
checks ``results.json``'s ``meta.run_id``: a torn set (no manifest), a file of another run or a
file edited afterwards is an :class:`OutputsError` (exit 2) naming the file that does not match.
It runs wherever the toolkit reads its own outputs back: :func:`audit.results.read`, and every
input of ``run`` / ``check`` / ``card`` / ``export`` that lies in an annotation-audit output folder
(an exported ``OUT/judgments`` with ``OUT/spec.yaml``, a ``--baseline`` that is one;
:func:`verify_inputs`).

The run id (:func:`run_id`) is a digest of what the command computed: the SHA-256 of
``results.json`` as written without the id (for ``export``, of the exported files' digests),
16 hex digits. It is deterministic: the same inputs, options and seed give the same id and the
same bytes, and two runs that differ anywhere have different ids.
"""

from __future__ import annotations

from .fs import write_bytes, write_text
from .guard import CARD_SUFFIXES, Inputs, find_inputs, guard_file, guard_folder, read_card
from .layout import (CARD_FILE, EXPORT_NAMES, MANIFEST, OUR_NAMES, RESULTS, RUN_FILES,
                     OutputsError, files_run_id, run_id, write_manifest)
from .sets import Stage, staged, write_card_set, write_run
from .verify import read_verified, verify_inputs, verify_outputs

__all__ = ["CARD_FILE", "CARD_SUFFIXES", "EXPORT_NAMES", "MANIFEST", "OUR_NAMES", "RESULTS",
           "RUN_FILES", "Inputs", "OutputsError", "Stage", "files_run_id", "find_inputs",
           "guard_file", "guard_folder", "read_card", "read_verified", "run_id", "staged",
           "verify_inputs", "verify_outputs", "write_bytes", "write_card_set", "write_manifest",
           "write_run", "write_text"]
