# The two commands a newcomer runs: `make demo` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
# Python writes the bytecode it compiles (where the environment says not to, the suite's
# hundred-odd processes would each compile ember's ~650 modules, and pytest rewrite every
# test file, anew: about 14 s of collection per pytest process, 0.8 s per `import ember`)
unexport PYTHONDONTWRITEBYTECODE
# The tests that chose a kernel (tests/native_line.py): the NumPy line reruns those
KERNEL_TRACE := .kernel-trace

.PHONY: demo test lint bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip

$(VENV)/.demo-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q -e ".[examples]"
	touch $@

# (--no-compile: pip would compile every module of every package, ~30 s; the suite's first
# imports compile and write the few thousand it uses, ~6 s)
$(VENV)/.test-installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install -q --no-compile -e ".[dev,examples,tensorboard]"
	touch $@

demo: $(VENV)/.demo-installed
	$(BIN)/python examples/digits.py

test: $(VENV)/.test-installed
	$(BIN)/ruff check src tests benchmarks examples fuzz tools
	rm -rf $(KERNEL_TRACE)
	EMBER_TEST_KERNEL_TRACE=$(KERNEL_TRACE) $(BIN)/python -m pytest -n 2 tests
	EMBER_KERNELS=numpy EMBER_TEST_KERNEL_FILES=$(KERNEL_TRACE) \
		$(BIN)/python -m pytest -n 2 tests/ops tests/optim tests/graph tests/nn tests/native tests/mlx
	EMBER_MLX_LAZY=0 $(BIN)/python -m pytest -n 2 tests/mlx/core tests/mlx/nn tests/mlx/optimizers

# The benchmarks also need JAX (the anchors beside the compiled rows: benchmarks/anchors.py).
$(VENV)/.bench-installed: pyproject.toml $(VENV)/.test-installed
	$(BIN)/pip install -q -e ".[bench]"
	touch $@

bench: $(VENV)/.bench-installed
	$(BIN)/python -m benchmarks.run $(ARGS)

clean:
	rm -rf $(VENV) build src/*.egg-info
