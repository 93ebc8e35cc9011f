"""Reading an Excel workbook, side by side with pandas (``python benchmarks/workbook_bench.py``).

Data: ``synth.generate(n, per_item=(5, 5))`` (pairwise, two pools), its six columns written
once as CSV (pyarrow) and once as a one-sheet ``.xlsx`` (openpyxl's write-only mode). Timed,
the better of ``--repeat`` runs each, every cell read as text:

* this toolkit: :func:`audit.ingest.readers.workbooks.read_workbook` (openpyxl, cell by cell,
  with the number formats and cell types its rules need);
* ``pandas.read_excel(dtype=str)`` with openpyxl, and with python-calamine where it is
  installed (values only: no number formats, errors or uncomputed formulas told apart);
* ``pandas.read_csv(dtype=str)`` of the same table as CSV, for scale.

Not a test: nothing asserts on time. ``--out FILE`` writes the table as Markdown.

Usage::

    python benchmarks/workbook_bench.py                       # 10k and 100k judgments
    python benchmarks/workbook_bench.py --sizes 10000 --repeat 1
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import pandas as pd  # noqa: E402

from audit.ingest.readers.workbooks import read_workbook  # noqa: E402
from benchmarks import synth  # noqa: E402
from benchmarks.measure_bench import best_of  # noqa: E402


def write_xlsx(frame: pd.DataFrame, path: Path) -> None:
    import openpyxl

    book = openpyxl.Workbook(write_only=True)
    sheet = book.create_sheet("Judgments")
    sheet.append(list(frame.columns))
    for row in frame.itertuples(index=False):
        sheet.append([v.item() if hasattr(v, "item") else v for v in row])
    book.save(path)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--sizes", default="10000,100000", help="judgments, comma-separated")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--out", help="also write the table to this Markdown file")
    args = p.parse_args(argv)
    readers = {"this toolkit (openpyxl, cell by cell)": lambda x, c: read_workbook(x),
               "pandas.read_excel, openpyxl": lambda x, c: pd.read_excel(
                   x, dtype=str, engine="openpyxl")}
    if importlib.util.find_spec("python_calamine") is not None:
        readers["pandas.read_excel, calamine"] = lambda x, c: pd.read_excel(
            x, dtype=str, engine="calamine")
    readers["pandas.read_csv (the same table as CSV)"] = lambda x, c: pd.read_csv(c, dtype=str)
    lines = [f"load average {os.getloadavg()[0]:.1f} at start, {os.cpu_count()} cores; "
             f"best of {args.repeat}", "",
             "| judgments | cells | reader | seconds | cells per second | time vs this toolkit |",
             "| ---: | ---: | --- | ---: | ---: | ---: |"]
    print("\n".join(lines), flush=True)
    for n in (int(x) for x in args.sizes.split(",")):
        frame = synth.generate(n, per_item=(5, 5), seed=0)
        cells = frame.shape[0] * frame.shape[1]
        with tempfile.TemporaryDirectory() as folder:
            xlsx, csv = Path(folder) / "t.xlsx", Path(folder) / "t.csv"
            write_xlsx(frame, xlsx)
            synth.write(frame, csv)
            ours = None
            for name, read in readers.items():
                seconds = best_of(lambda: read(xlsx, csv), args.repeat)
                ours = ours or seconds
                line = (f"| {n:,} | {cells:,} | {name} | {seconds:.2f} | {cells / seconds:,.0f} "
                        f"| {seconds / ours:.2f}x |")
                lines.append(line)
                print(line, flush=True)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
