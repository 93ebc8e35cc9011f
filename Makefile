# A fresh clone needs two commands: `make demo` (audit the shipped PandaLM data) and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: install demo test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

demo: $(STAMP)  ## audit the shipped PandaLM test set into reports/pandalm/
	$(BIN)/annotation-audit run data/pandalm/testset-v1.json --out reports/pandalm

test: $(STAMP)  ## the whole test suite (what CI runs)
	$(BIN)/python -m pytest

bench: $(STAMP)  ## speed, side by side with the tools people use today
	$(BIN)/python benchmarks/run.py

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache .hypothesis
