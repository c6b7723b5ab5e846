# Two commands for a newcomer: `make demo` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: install demo test lint stop bench clean

$(BIN)/memtrace: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ./clients/python -e '.[dev]'
	touch $(BIN)/memtrace

install: $(BIN)/memtrace ## create .venv and install MemTrace with its dev tools

demo: install ## start Neo4j + the service, ingest the example trace, show its failed cases
	$(BIN)/memtrace demo

lint: install ## ruff and mypy
	$(BIN)/ruff check .
	$(BIN)/mypy

test: lint ## lint, then every test against a real Neo4j the tests start themselves
	$(BIN)/pytest

stop: ## stop what `make demo` started
	-$(BIN)/memtrace stop

bench: install ## ingestion and subgraph benchmarks (writes benchmarks/results/)
	$(BIN)/python -m benchmarks.ingestion

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
