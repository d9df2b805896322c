# The two commands a newcomer needs: `make demo` and `make test`. Everything else is set up by
# them (virtualenv, the package, the pinned helm built from Go modules; helmfile too for
# `make test`) and is fast the second time (docs/toolchain.md).
# Day to day: `make check` (lint, typecheck, the unit and render tiers: minutes, not an hour).
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# Re-install only when the project metadata changes.
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml | sha256sum | cut -c1-12)
TOOLS_STAMP := $(VENV)/.tools-installed
# the test-only provider plug-in (tests/plugins/toy), installed beside the package for the tests
PLUGINS_STAMP := $(VENV)/.plugins-$(shell cat tests/plugins/toy/pyproject.toml | sha256sum | cut -c1-12)
DEMO ?= examples/openstack-minimal.yaml

.PHONY: demo test check setup tools node-tools plane lint typecheck test-unit test-render test-plugins \
	test-plane test-cloud bench fuzz property snapshot-update clean help
help:
	@echo "make demo   - set up, then render an example cluster offline ($(DEMO))"
	@echo "make test   - set up, then run the full test suite (every tier), ruff and mypy"
	@echo "make check  - ruff, mypy and the unit and render tiers (the day-to-day loop)"
	@echo "make test-unit|test-render|test-plane|test-cloud - one tier"

$(STAMP): pyproject.toml
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --upgrade pip
	$(BIN)/python -m pip install --quiet --disable-pip-version-check -e '.[test,dev]'
	@rm -f $(VENV)/.installed-*
	@touch $@

# The tests' own provider plug-in, a distribution of its own (the proof that a provider is a
# plug-in: tests/render/test_toy_provider.py); `make demo` does without it.
$(PLUGINS_STAMP): $(STAMP) tests/plugins/toy/pyproject.toml
	$(BIN)/python -m pip install --quiet --disable-pip-version-check --no-deps -e tests/plugins/toy
	@rm -f $(VENV)/.plugins-*
	@touch $@

test-plugins: $(PLUGINS_STAMP)

# Bytecode ahead of time: with PYTHONDONTWRITEBYTECODE set (or a read-only checkout) every
# command would otherwise compile the package from source (docs/performance.md). Fast when
# nothing changed: compileall skips up-to-date files.
setup: $(STAMP) tools
	@$(BIN)/python -m compileall -q scs_templates

# helm only (`make demo` needs no helmfile): a supported helm on PATH, the tools cache, or a
# build from the Go module proxy (minutes, once; README "Quick start").
tools: $(STAMP)
	$(BIN)/scs-templates tools install

demo: setup
	$(BIN)/scs-templates render $(DEMO)

# The programs that read what we write (tests/render/test_node_tools.py, test_completion.py): shellcheck,
# systemd-analyze (systemd), cloud-init, zsh and fish, from Debian. Installed only in CI (CI=true), where
# the tests must not skip (`make test`, `check` and each tier that reads them ask for them); elsewhere
# their tests skip and say this command. policy-rc.d
# (exit 101) keeps the packages' services from starting while apt installs them.
NODE_TOOLS := shellcheck:shellcheck systemd-analyze:systemd cloud-init:cloud-init zsh:zsh fish:fish
node-tools:
	@set -euo pipefail; missing=; \
	for pair in $(NODE_TOOLS); do \
		command -v "$${pair%%:*}" >/dev/null 2>&1 || missing="$$missing $${pair#*:}"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$${CI:-}" != true ]; then \
		echo "node-tools: missing:$$missing (apt-get install$$missing); their tests skip"; exit 0; \
	fi; \
	sudo=; [ "$$(id -u)" = 0 ] || sudo="sudo -n"; \
	guard=; if [ ! -e /usr/sbin/policy-rc.d ]; then \
		printf '#!/bin/sh\nexit 101\n' | $$sudo tee /usr/sbin/policy-rc.d >/dev/null; \
		$$sudo chmod 0755 /usr/sbin/policy-rc.d; guard=1; fi; \
	trap '[ -z "$$guard" ] || $$sudo rm -f /usr/sbin/policy-rc.d' EXIT; \
	$$sudo apt-get update -qq; \
	DEBIAN_FRONTEND=noninteractive $$sudo apt-get install -y -qq --no-install-recommends $$missing

lint: $(STAMP)
	$(BIN)/ruff check scs_templates testenv tests bench
	$(BIN)/ruff format --check scs_templates testenv tests bench

typecheck: $(STAMP)
	$(BIN)/mypy

# The real management plane (testenv/): built from Go modules into ~/.cache, once per tree.
# Without Go it is skipped here and its tests skip with a reason; in CI (CI=true) both fail.
HAVE_GO := command -v go >/dev/null 2>&1 || [ -x /usr/local/go/bin/go ] || [ "$$CI" = true ]
plane: $(STAMP)
	@if $(HAVE_GO); then \
		$(BIN)/python -m testenv build; \
	else echo "plane: no Go toolchain, the real-plane tests will skip"; fi

# The fast loop: everything that needs no Go program and no OpenStack service, on both cores.
JOBS ?= 2
check: setup test-plugins node-tools lint typecheck
	$(BIN)/python -m pytest -n $(JOBS) tests/unit tests/render $(PYTEST_ARGS)

test-unit: $(STAMP) test-plugins
	$(BIN)/python -m pytest -n $(JOBS) tests/unit $(PYTEST_ARGS)

test-render: setup test-plugins node-tools
	$(BIN)/python -m pytest -n $(JOBS) tests/render $(PYTEST_ARGS)

test-plane: setup test-plugins node-tools plane
	$(BIN)/python -m pytest tests/plane $(PYTEST_ARGS)

test-cloud: setup test-plugins node-tools plane
	$(BIN)/python -m pytest tests/cloud $(PYTEST_ARGS)

# The full suite. Every Go program the tests run (the plane, then the other releases'
# kubeadm and kube-apiserver: `python -m testenv build --all`, niced) builds in the
# BACKGROUND from the start, while setup, lint and typecheck run; then the tiers run side by
# side (tests/support/run_tiers.py: unit + render on $(JOBS) workers, the plane tier as two
# pytest processes on one shared management plane, cloud), a test that needs a program
# waits for its build (testenv's build lock) and the modules that need the later builds run
# last in their tier (tests/conftest.py). Warm, the build is a no-op.
# The run ends with each tier's wall clock and the 25 slowest tests (docs/testing.md).
# helmfile (for the helmfile tests) is built after setup, in the foreground, when missing
# (`tools install --all`; docs/toolchain.md); warm, it is a stat.
# The build's log: $(BUILD_LOG); it ends with the recipe (EXIT/INT/TERM/HUP).
BUILD_LOG ?= $(VENV)/testenv-build.log
test: $(STAMP)
	@set -euo pipefail; build=; \
	stop() { if [ -n "$$build" ]; then kill -TERM "$$build" 2>/dev/null || true; \
		wait "$$build" 2>/dev/null || true; build=; fi; }; \
	trap stop EXIT; trap 'exit 130' INT; trap 'exit 143' TERM; trap 'exit 129' HUP; \
	if $(HAVE_GO); then \
		echo "test: building the test programs in the background (log: $(BUILD_LOG))"; \
		$(BIN)/python -m testenv build --all </dev/null >$(BUILD_LOG) 2>&1 & build=$$!; \
	else echo "test: no Go toolchain, the real-plane tests will skip"; fi; \
	$(MAKE) --no-print-directory setup test-plugins node-tools lint typecheck; \
	$(BIN)/scs-templates tools install --all; \
	$(BIN)/python -m tests.support.run_tiers --jobs $(JOBS) -- $(PYTEST_ARGS); \
	if [ -n "$$build" ]; then \
		status=0; wait "$$build" || status=$$?; build=; \
		if [ "$$status" != 0 ]; then \
			echo "test: the background build failed (exit $$status):"; tail -n 30 $(BUILD_LOG); \
			exit 1; \
		fi; \
	fi

bench: setup
	$(BIN)/python bench/run.py

# The readers' fuzz targets for longer than CI runs them (tests/unit/test_fuzz_readers.py).
FUZZ_EXAMPLES ?= 20000
fuzz: setup
	SCS_TEMPLATES_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) $(BIN)/python -m pytest -q tests/unit/test_fuzz_readers.py

# The property tests (validate implies render; the OnCalendar check against systemd) for
# longer than the suite runs them.
PROPERTY_EXAMPLES ?= 2000
property: setup test-plugins
	SCS_TEMPLATES_PROPERTY_EXAMPLES=$(PROPERTY_EXAMPLES) $(BIN)/python -m pytest -q \
		tests/render/test_validate_implies_render.py tests/render/test_oncalendar.py

snapshot-update: setup test-plugins
	$(BIN)/python -m pytest --snapshot-update tests/render/test_snapshots.py

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache
