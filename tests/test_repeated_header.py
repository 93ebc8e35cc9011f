"""A record that repeats the header line: what ``cat a.csv b.csv > all.csv`` leaves in the data
(the second file's header, with its byte-order mark when it had one). It was read as a
judgment, exit 0 on both engines: item ``item``, annotator ``annotator``, label ``label``, one
more item, one more annotator and, on a nominal scale, one more category, counted as a
disagreement; on a numeric scale the message was about ratings that must be numbers. It is now
exit 2 on both engines, naming the file, the first such record (its line on the pandas engine,
its item and annotator on Spark, as each names judgments) and how many there are. A record
whose cells are only some of the names (an annotator called ``annotator``) is data. Found by
helper-66's sweep of ids as files write them."""

from __future__ import annotations

import warnings

import pytest
from click.testing import CliRunner

from audit.cli import cli
from audit.errors import InputError
from audit.ingest import load

LONG = "item,annotator,label\n1,a,x\n1,b,y\n{header}\n2,a,x\n2,b,x\n"
CASES = {
    "plain": (LONG.format(header="item,annotator,label"), "csv", None),
    "with its byte-order mark": ("\ufeff" + LONG.format(header="\ufeffitem,annotator,label"),
                                 "csv", None),
    "quoted, CRLF": (LONG.format(header='"item","annotator","label"').replace("\n", "\r\n"),
                     "csv", None),
    "TSV": (LONG.format(header="item,annotator,label").replace(",", "\t"), "tsv", None),
    "an empty header cell": ("item,annotator,label,\n1,a,x,\n1,b,y,\nitem,annotator,label,\n"
                             "2,a,x,\n2,b,x,\n", "csv", None),
    "numbers": ("item,model,annotator,label\n1,m,a,1\n1,m,b,2\n"
                "item,model,annotator,label\n2,m,a,3\n2,m,b,2\n", "csv", None),
    "mapped by a spec": ("seg,rater,score\n1,a,x\n1,b,y\nseg,rater,score\n2,a,x\n2,b,x\n", "csv",
                         "columns: {item: seg, annotator: rater, label: score}\n"),
    "wide": ("item,r1,r2\n1,x,y\n2,x,x\nitem,r1,r2\n3,y,y\n", "csv",
             "layout: wide\nannotator_columns: [r1, r2]\n"),
}
MESSAGE = "a record repeats the header line (1 in all; files joined with their header lines?)"


def files(tmp_path, name):
    text, ext, spec = CASES[name]
    path = tmp_path / f"t.{ext}"
    path.write_bytes(text.encode("utf-8"))
    spec_path = None
    if spec is not None:
        spec_path = tmp_path / "s.yaml"
        spec_path.write_text(spec)
    return path, spec_path


def refusal(path, spec, engine="pandas") -> str:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(InputError) as err:
            load(path, spec=spec, engine=engine)
    return str(err.value)


@pytest.mark.parametrize("name", list(CASES))
def test_a_repeated_header_is_refused_naming_its_line(tmp_path, name):
    path, spec = files(tmp_path, name)
    said = refusal(path, spec)
    assert said.startswith(f"{path}, line 4: {MESSAGE}"), said


def test_the_cli_exits_2_and_counts_them(tmp_path):
    path = tmp_path / "all.csv"
    path.write_text(LONG.format(header="item,annotator,label") + "item,annotator,label\n3,a,x\n")
    result = CliRunner().invoke(cli, ["run", str(path), "--no-report", "--quiet",
                                      "--out", str(tmp_path / "o")])
    assert result.exit_code == 2, result.output
    (line,) = [x for x in result.output.splitlines() if x.startswith("error:")]
    assert f"{path}, line 4: a record repeats the header line (2 in all;" in line


def test_some_cells_naming_their_column_are_data(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("item,annotator,label\n1,annotator,label\n1,b,x\nitem,a,x\n2,b,label\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = load(path)
    assert sorted(table.frame["annotator"].astype(str)) == ["a", "annotator", "b", "b"]


@pytest.mark.spark
@pytest.mark.parametrize("name", list(CASES))
def test_the_spark_engine_refuses_it_alike(spark, tmp_path, name):
    path, spec = files(tmp_path, name)
    said = refusal(path, spec, engine="spark")
    first = "'seg', annotator 'rater'" if "spec" in name else \
        "'item', annotator 'r1'" if name == "wide" else \
        "'\\ufeffitem', annotator 'annotator'" if "mark" in name else \
        "'item', annotator 'annotator'"
    assert said.startswith(f"{path}, item {first}: {MESSAGE}"), said


@pytest.mark.spark
def test_the_spark_engine_reads_cells_naming_their_column(spark, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("item,annotator,label\n1,annotator,label\n1,b,x\nitem,a,x\n2,b,label\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = load(path, engine="spark")
    assert sorted(table.frame["annotator"].astype(str)) == ["a", "annotator", "b", "b"]
