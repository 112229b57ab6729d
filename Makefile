# `make run` and `make test` are self-sufficient: the first use creates .venv and installs optreg into it.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.optreg-installed

.PHONY: run test bench schema hydra-configs clean

$(STAMP): pyproject.toml constraints.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	# the optimizer libraries read as dialects (tests/test_library_dialects.py); --no-deps: none pulls another torch
	$(BIN)/python -m pip install --quiet --no-deps -c constraints.txt pytorch_optimizer torchao bitsandbytes
	touch $(STAMP)

run: $(STAMP)  ## train the built-in model with the embedded quickstart config (ARGS="config.yaml key=value")
	$(BIN)/optreg run $(ARGS)

test: $(STAMP)  ## the test suite, on every core (pytest-xdist; ARGS="-k name" to select, ARGS="-n 0" on one)
	$(BIN)/python -m pytest -q -n auto --dist worksteal $(ARGS)

bench: $(STAMP)  ## the benchmarks whose figures are in the README (installs the `bench` extra)
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[bench]'
	$(BIN)/python benchmarks/bench_import.py
	$(BIN)/python benchmarks/bench_schedules.py
	$(BIN)/python benchmarks/bench_optimizers.py

hydra-configs: $(STAMP)  ## regenerate the Hydra config groups from the registry
	$(BIN)/optreg hydra-configs

schema: $(STAMP)  ## regenerate optreg.schema.json
	$(BIN)/optreg schema -o optreg.schema.json

clean:
	rm -rf $(VENV) build dist *.egg-info
