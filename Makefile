# One entry for every habit: contributors and CI call the same targets.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install demo lint typecheck test check bench clean node-deps

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The main job on its built-in default: no API key, no network.
demo: $(STAMP)
	$(BIN)/toolwire demo

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

# The official TypeScript ACP SDK for tests/test_agent_node.py, from its lock file
# (reinstalled when the lock changes). Without npm nothing is installed here; the test
# itself skips when node is missing.
node-deps:
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "npm not found: the Node ACP client test will be skipped"; \
	elif [ ! -d tests/node/node_modules/@agentclientprotocol/sdk ] \
		|| [ tests/node/package-lock.json -nt tests/node/node_modules ]; then \
		npm ci --prefix tests/node --no-audit --no-fund; \
	fi

test: $(STAMP) node-deps
	$(BIN)/pytest

# Set up, then lint, type check and test: what CI runs.
check: lint typecheck test

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache tests/node/node_modules
