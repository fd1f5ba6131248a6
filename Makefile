# Two commands for a new user: `make demo` (watch a game) and `make test` (run the checks).
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin

.PHONY: demo test check lint typecheck clean

$(BIN)/tablectl: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	touch $@

demo: $(BIN)/tablectl
	$(BIN)/tablectl demo

lint: $(BIN)/tablectl
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

test: lint
	$(BIN)/pytest -q

check: test

clean:
	rm -rf $(VENV) build *.egg-info
