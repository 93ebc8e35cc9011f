"""Label kinds and scales, and how a raw label is read onto its scale.

============================  ===============================================================
module                        holds
============================  ===============================================================
:mod:`.scale`                 :class:`LabelKind`, :class:`LabelScale` and how it codes labels
:mod:`.observed`              :func:`infer_scale`: a scale from the labels observed
:mod:`.text`                  one raw value: missing, the number it writes, its text
:mod:`.numbers`               many raw values read as numbers at once (:func:`parse_numbers`)
:mod:`.reading`               aliases (``label.map``), and raw labels as the keys compared
:mod:`.column`                a raw label column: distinct values, codes, unstorable text
============================  ===============================================================

A :class:`LabelScale` declares what a label may be and how to compare two labels:

``nominal``
    unordered categories (hate speech yes / no; NLI classes);
``ordinal``
    ordered categories (a Likert item, ConvAbuse's -3..1);
``interval``
    numbers whose differences mean something (a 0-100 quality score);
``preference``
    a pairwise comparison of ``model_a`` and ``model_b`` on a *signed* ordinal scale.

Preference sign convention (the only place it is stated)
-------------------------------------------------------
A preference label is an integer in ``-k .. k``. **Negative means model_a (response A) is better,
positive means model_b (response B) is better, 0 is a tie**; the magnitude is the strength
("slightly" = 1, "clearly" = 2 on a five-point scale). The *winner* of a judgment is the sign of its
label: ``-1`` = A, ``0`` = tie, ``+1`` = B. Preference analyses run either on the full label
(``granularity="label"``) or on the winner only (``granularity="winner"``). Two labels name
*opposite winners* when their signs are -1 and +1; a tie is never opposite to anything.

Reading raw labels (the only place it is done)
----------------------------------------------
A raw label is read once, per distinct raw value, by :meth:`LabelScale.codes`, which both engines
use; what cannot be read is a schema failure naming its row, never a NaN. Numbers are read for
all distinct values at once (:func:`parse_numbers`, the same rules as :func:`parse_number`), so
a scale of half a million observed numbers costs a few array passes, not a Python call each.

* **Numbers.** An interval or preference scale, and an ordinal scale whose values are numbers,
  read every raw label as the number it writes (:func:`parse_number`): ``-0.0``, ``0`` and
  ``0.0`` are one label, as are ``2.50`` and ``2.5``, ``1e0`` and ``1``, `` 1`` and ``1``
  (surrounding whitespace is ignored). Text that writes no finite decimal number (``two``,
  ``nan``, ``inf``, ``1_000``) is not a number. Whole numbers are integers: a scale read from
  ``0.0`` and ``1.0`` has the values ``0, 1``.
* **Text.** A nominal scale (and an ordinal scale declared with text values) compares labels as
  text, exactly as written (:func:`label_text`): ``007`` and ``7`` are two labels, ``A`` and
  `` A`` are two labels, and ``NA`` or ``nan`` is a label (missing only when a spec's
  ``read.na_values`` says so). A *typed* number (a Parquet or JSON number, not text) is its
  shortest text, ``7`` for ``7`` and ``7.0``, so a numeric column and the same column written as
  text give the same labels; a JSON column mixing ``1`` and ``"a"`` is the text labels ``"1"``
  and ``"a"``. Observed nominal labels that are all numbers written in that shortest form are
  shown as numbers (values ``0, 1``, not ``"0", "1"``).
* **Aliases.** A spec's ``label.map``, or a recognised preference vocabulary
  (:mod:`audit.ingest.infer`), reads a raw label as a scale value before the scale is matched. A
  key matches a raw label written the same way, or the same way but for surrounding whitespace;
  a key written as a number (YAML ``1``, not ``"1"``) also matches any label naming that number.
"""

from __future__ import annotations

from .column import distinct_labels, encode, factorize_labels, first_unstorable
from .observed import infer_scale
from .numbers import parse_numbers
from .reading import distinct_numbers
from .scale import (CATEGORY_LIMIT, WINNER_NAMES, Granularity, LabelKind, LabelScale,
                    is_continuous)
from .text import is_missing, label_text, parse_number

__all__ = ["CATEGORY_LIMIT", "WINNER_NAMES", "Granularity", "LabelKind", "LabelScale",
           "distinct_labels", "distinct_numbers", "encode", "factorize_labels",
           "first_unstorable", "infer_scale", "is_continuous", "is_missing", "label_text",
           "parse_number", "parse_numbers"]
