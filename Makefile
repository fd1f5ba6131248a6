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

# The suite on every CPU (pytest-xdist), with one worker more than CPUs: the end-to-end
# tests spend part of their time waiting on timers, subprocesses and servers, and the
# extra worker fills that time (on the 2-CPU development machine, quiet: 2 workers 404 s,
# 3 workers 310 s, 4 workers 326 s). worksteal hands a worker that runs dry part of
# another's queue, so one long test at the end does not leave a CPU idle.
# TEST_JOBS=0 runs it in this one process.
TEST_JOBS ?= $(shell echo $$(( $$(nproc 2>/dev/null || echo 1) + 1 )))

test: lint
	$(BIN)/pytest -q -n $(TEST_JOBS) --dist worksteal

check: test

clean:
	rm -rf $(VENV) build *.egg-info
