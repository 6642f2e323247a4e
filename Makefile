# The two commands that matter: `make run` (the main job) and `make test`.
# Both set everything up on a fresh machine with only Python 3.11+ installed.

PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed-stamp
DEMO   ?= demo-workspace

.PHONY: setup run test lint format bench models screenshots clean

setup: $(STAMP)

$(STAMP): pyproject.toml scripts/llama_cmake_args.sh scripts/install_chromium.sh
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "charmemory needs Python 3.11 or newer")'
	@echo "==> creating $(VENV) and installing charmemory with its dev tools"
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade "pip>=24,<27"
	@echo "==> installing the embedded model's runtime, llama-cpp-python: the first time"
	@echo "    compiles llama.cpp (5 to 12 minutes on 2 cores); pip caches the result"
	CMAKE_ARGS="$$(bash scripts/llama_cmake_args.sh)" $(BIN)/python -m pip install --progress-bar off -e '.[dev,local]'
	@bash scripts/install_chromium.sh
	@touch $(STAMP)

# The local embedding model and the embedded chat model (1.1 GB, verified by sha256).
models: setup
	$(BIN)/charmemory local-models install

run: models
	$(BIN)/charmemory demo --workspace $(DEMO)

test: models
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts
	$(BIN)/pytest

lint: setup
	$(BIN)/ruff check src tests bench scripts
	$(BIN)/ruff format --check src tests bench scripts

format: setup
	$(BIN)/ruff check --fix src tests bench scripts
	$(BIN)/ruff format src tests bench scripts

bench: models
	$(BIN)/python bench/retrieval.py
	$(BIN)/python bench/retrieval_quality.py
	$(BIN)/python bench/extraction_cost.py
	$(BIN)/python bench/scale.py
	$(BIN)/python bench/startup.py --baseline a126782  # the commit before start-up was cut
	$(BIN)/python bench/extraction_quality.py
	$(BIN)/python bench/world_info.py
	$(BIN)/python bench/chat_overhead.py
	$(BIN)/python bench/api_load.py
	$(BIN)/python bench/web_pages.py

# The web UI's screenshots in docs/screenshots/, taken by its browser journeys.
screenshots: setup
	CHARMEMORY_SCREENSHOTS=1 $(BIN)/pytest tests/web -m browser

clean:
	rm -rf $(VENV) $(DEMO) .pytest_cache .ruff_cache .hypothesis
