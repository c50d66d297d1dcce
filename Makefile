# One command per task. Every target installs first when needed.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.DEFAULT_GOAL := help
.PHONY: help install run test lint smoke live eval bench screenshots clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-12s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e '.[dev]'
	touch $(STAMP)

install: $(STAMP) ## Create .venv and install the project with its dev extras

run: install ## Start the service on embedded defaults (http://127.0.0.1:8000)
	$(BIN)/rca setup-local
	$(BIN)/rca serve

test: install lint ## Lint, type-check and run the whole test suite
	$(BIN)/python -m pytest -q

lint: install ## ruff (lint + format check), mypy (strict on backend/app) and the import layers
	$(BIN)/ruff check backend tests data
	$(BIN)/ruff format --check backend tests data
	$(BIN)/mypy
	$(BIN)/lint-imports

smoke: install ## Crash the sample app and run that incident end to end
	$(BIN)/rca smoke

SOAK_KILLS ?= 300
soak: install ## The crash harness with hundreds of SIGKILLs per backend (SOAK_KILLS=300)
	RCA_CRASH_KILLS=$(SOAK_KILLS) $(BIN)/python -m pytest tests/crash -q -s

live: install ## Watch the whole loop: shop, Prometheus, Alertmanager, service on loopback (Ctrl-C stops)
	$(BIN)/python scripts/live.py

eval: install ## Full evaluations (domain incidents, investigation on a real Prometheus, SciFact, loghub); slow, see docs/architecture/retrieval-evaluation.md
	$(BIN)/rca eval incidents data/eval/incidents.jsonl --json eval-results/incidents.json
	$(BIN)/rca eval incidents data/eval/holdout.jsonl --json eval-results/holdout.json
	$(BIN)/rca eval investigation data/eval/investigation --json eval-results/investigation.json
	$(BIN)/rca eval beir ../shared/datasets/scifact --json eval-results/scifact.json
	$(BIN)/rca eval beir ../shared/datasets/loghub_template_ir --json eval-results/loghub.json

bench: install ## Speed benchmarks, side by side in one process (embed, retrieve, graph, collect, ingest; HTTP on 127.0.0.1; scale; inbox)
	$(BIN)/rca bench embed --json bench-results/embed.json
	$(BIN)/rca bench retrieve --json bench-results/retrieve.json
	$(BIN)/rca bench graph --json bench-results/graph.json
	$(BIN)/rca bench collect --json bench-results/collect.json
	$(BIN)/rca bench ingest --json bench-results/ingest.json
	$(BIN)/rca bench http --json bench-results/http.json
	$(BIN)/rca bench scale --json bench-results/scale.json
	$(BIN)/rca bench inbox --json bench-results/inbox.json

screenshots: install ## Save reviewer UI screenshots to docs/architecture/img/ (needs chromium)
	$(BIN)/python scripts/screenshots.py

clean: ## Remove the virtualenv and caches
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
