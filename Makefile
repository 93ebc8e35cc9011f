# A fresh clone needs two commands: `make demo` (audit the shipped PandaLM data) and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
RUNTIME := $(VENV)/.installed-runtime
STAMP  := $(VENV)/.installed
SPARK  := $(VENV)/.installed-spark

.PHONY: install demo test bench bench-spark clean

# the demo needs only the runtime dependencies; the tests add the test extra on top
$(RUNTIME): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e .
	touch $(RUNTIME)

$(STAMP): $(RUNTIME)
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

# the Spark engine's extra, for the tests (the demo and the pandas engine do not need it)
$(SPARK): $(STAMP)
	$(BIN)/python -m pip install -q -e '.[test,spark]'
	touch $(SPARK)

install: $(STAMP)

demo: $(RUNTIME)  ## audit the shipped PandaLM test set into reports/pandalm/
	$(BIN)/annotation-audit run data/pandalm/testset-v1.json --out reports/pandalm \
	  --license apache-2.0 --language en --task-category text-classification --tag preference \
	  --pretty-name "PandaLM test set (human annotations)"

test: $(SPARK)  ## the whole test suite on every core (what CI runs; Spark tests skip without Java)
	$(BIN)/python -m pytest -n auto --dist loadscope

bench: $(STAMP)  ## speed, side by side with the tools people use today
	$(BIN)/python benchmarks/run.py

bench-spark: $(SPARK)  ## pandas vs Spark engine on 10M, 50M and 100M synthetic judgments (slow: ~50 min)
	$(BIN)/python benchmarks/spark_bench.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
