# The two commands a newcomer runs: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e ".[examples]"
	touch $@

$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e ".[dev,examples,tensorboard]"
	touch $@

demo: $(VENV)/.demo-installed
	$(BIN)/python examples/digits.py

test: $(VENV)/.test-installed
	$(BIN)/ruff check src tests benchmarks examples fuzz tools
	$(BIN)/python -m pytest -n 2 tests
	EMBER_KERNELS=numpy $(BIN)/python -m pytest -n 2 tests/ops tests/optim tests/graph tests/nn tests/native

bench: $(VENV)/.test-installed
	$(BIN)/python -m benchmarks.run $(ARGS)

clean:
	rm -rf $(VENV) build src/*.egg-info
