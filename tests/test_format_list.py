"""One list of source formats: the loader's adapters, detection's ``FORMATS``, the CLI's
``--format`` choices, README's ``--format`` line and its "Loading data" table agree, and every
format the Spark engine refuses by name is one of them."""

from __future__ import annotations

import re
from pathlib import Path

from audit import cli
from audit import ingest
from audit.ingest import spark

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def test_the_adapters_are_the_formats():
    assert list(ingest._ADAPTERS) == list(ingest.FORMATS)


def test_the_cli_offers_every_format():
    assert cli.FORMATS == ["auto", *ingest.FORMATS]


def test_readme_names_every_format():
    line = re.search(r"`--format ([a-z|-]+)`", README)
    assert line is not None and line.group(1).split("|") == cli.FORMATS
    table = README.split("## Loading data", 1)[1].split("\n\n", 2)[1]
    rows = re.findall(r"^\| `([a-z][a-z-]*)` \|", table, flags=re.MULTILINE)
    assert sorted(rows) == sorted(ingest.FORMATS)


def test_spark_refuses_known_formats_only():
    assert set(spark.NAMED) < set(ingest.FORMATS)
