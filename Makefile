# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
UV := $(shell command -v uv 2>/dev/null || echo python3 -m uv)
RUN := $(UV) run --frozen --no-sync
# Python here may come with PYTHONDONTWRITEBYTECODE=1 (container images set it): then no `.pyc` is ever written, and
# every Python process compiles each module it imports from source again. The suite starts hundreds (each xdist
# worker, the `ask-user` commands, servers and workers), and each xdist worker rewrote and compiled the asserts of
# every test module anew: some 9 s of CPU per process that collects them. The first process writes them here.
unexport PYTHONDONTWRITEBYTECODE

.PHONY: demo build docs test test-floor floor-tests pydantic-ai-sides test-under-load lint typecheck pytest bench format hypothesis-long messages

demo:
	@scripts/bootstrap.sh demo
	@$(RUN) ask-user demo

# The wheel and the source archive, into dist/ (`uv build`). Through $(UV), as every target here: where
# scripts/bootstrap.sh installed uv with pip, `uv` may not be on PATH, and `uv build` typed by hand fails there.
build:
	@scripts/bootstrap.sh demo
	$(UV) build

# The documentation site (mkdocs.yml, docs/): built with --strict, so a warning, a broken link or a reference to a
# name that does not exist fails it. `make test` builds it too, in tests/test_docs.py, which also checks what it holds.
docs:
	@scripts/bootstrap.sh test
	NO_MKDOCS_2_WARNING=1 $(RUN) mkdocs build --strict

# The suite runs in TEST_WORKERS processes (pytest-xdist): most tests wait on real processes (a pty, Chromium,
# PostgreSQL, DBOS workers), so more workers than the 2 cores keep both busy. Whole files are handed to idle
# workers, the longest first (tests/durations.json, by tests/conftest.py): the minutes-long files start at once and
# the last ones take seconds, and a file's module fixtures are made once. Coverage is measured in every process and
# checked package by package. pyright and the floor run (test-floor) go on beside the suite, niced: they take the
# CPU it leaves and never slow a test; their output is shown after its own, and any of the four failing fails
# `make test`.
#
# pytest runs under a PATH on which no `uv` is found (scripts/path_without_uv.py): what a fresh machine has once
# scripts/bootstrap.sh installed uv with `pip install --user`, which puts `uv` in ~/.local/bin, often not on PATH.
# There only `python3 -m uv` starts it, as $(UV) does here and `uv_command` in tests/ask_user_support.py does for
# the tests that start uv (the wheel's, the README's examples in fresh virtualenvs). Run this way on every machine,
# the suite cannot pass only because the developer's own `uv` happens to be on PATH, as it did while 46 tests
# failed on such machines. A whole-suite run, rather than one dedicated test, because any test may start uv.
# A directory holding `uv` is replaced by a copy of links to all else in it, not dropped: `python3`, git and the
# other tools often live beside `uv`. Where `python3` has no uv module (uv installed on its own), PATH is kept.
TEST_WORKERS ?= 4
LOGS := test-artifacts/logs
NO_UV_PATH := test-artifacts/path-without-uv
test:
	@scripts/bootstrap.sh test
	$(RUN) ruff check .
	$(RUN) ruff format --check .
	@mkdir -p $(LOGS)
	@echo '$(RUN) pyright src  (beside the suite; its output follows it)'
	@echo '$(MAKE) floor-tests pydantic-ai-sides  (beside the suite: the test-floor run, then the floor and the newest Pydantic AI; its output follows it)'
	@without_uv=$$(python3 scripts/path_without_uv.py $(NO_UV_PATH) "$$PATH") || exit 1; \
	nice -n 10 $(RUN) pyright src > $(LOGS)/pyright.log 2>&1 & typing=$$!; \
	nice -n 10 $(MAKE) --no-print-directory floor-tests pydantic-ai-sides > $(LOGS)/test-floor.log 2>&1 & floor=$$!; \
	echo 'PATH=<PATH without uv> $(RUN) pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=20'; \
	PATH="$$without_uv" $(RUN) pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=20; tests=$$?; \
	if [ $$tests -eq 0 ]; then $(RUN) python scripts/coverage_floors.py; tests=$$?; fi; \
	wait $$typing; typed=$$?; echo '--- pyright src'; cat $(LOGS)/pyright.log; \
	wait $$floor; floored=$$?; echo '--- make floor-tests pydantic-ai-sides'; cat $(LOGS)/test-floor.log; \
	for part in "pytest and coverage:$$tests" "pyright:$$typed" "test-floor and the other Pydantic AIs:$$floored"; do \
		[ "$${part##*:}" -eq 0 ] || { echo "make test: $${part%:*} failed (exit $${part##*:})" >&2; failed=1; }; \
	done; \
	exit $${failed:-0}

# The core's tests against the lowest versions pyproject.toml allows (pydantic-ai-slim's floor above all),
# in a throwaway environment with no extra installed: the floor we publish is one we ran.
FLOOR_TESTS := tests/test_answers.py tests/test_capability.py tests/test_events.py tests/test_one_id.py \
	tests/test_properties.py tests/test_public_api.py tests/test_schema.py tests/test_scripted.py \
	tests/test_seed_examples.py tests/test_store_contract.py tests/test_opt_in_options.py tests/test_waiting_handler.py
test-floor:
	@scripts/bootstrap.sh demo
	@$(MAKE) --no-print-directory floor-tests

# test-floor's tests, for `make test` (which set up already) to run beside the suite.
floor-tests:
	$(UV) run --isolated --no-dev --resolution lowest-direct \
		--with 'pytest>=8' --with 'pytest-timeout>=2.3' --with 'anyio>=4' --with 'hypothesis>=6.100' --with 'pydantic-ai-slim[anthropic]' \
		python -c "from importlib.metadata import version; print('floor: pydantic-ai-slim', version('pydantic-ai-slim'))"
	$(UV) run --isolated --no-dev --resolution lowest-direct \
		--with 'pytest>=8' --with 'pytest-timeout>=2.3' --with 'anyio>=4' --with 'hypothesis>=6.100' --with 'pydantic-ai-slim[anthropic]' \
		env HYPOTHESIS_PROFILE=floor python -m pytest -q -p no:cacheprovider -o addopts='' -m 'not extras' $(FLOOR_TESTS) \
		--deselect tests/test_public_api.py::test_the_check_of_imported_modules_would_see_a_heavy_import

# Every benchmark's figures beside its goals (benchmarks/bench_*.py), the full run. `make test` runs each in quick
# mode instead (`python -m benchmarks --quick`, tests/test_benchmarks.py): tiny sizes, to prove they still run.
# The lock has the Pydantic AI `pip install` resolves today, and the whole suite runs on it. Two more: the floor
# pyproject.toml declares (2.68), which users may still have, and the newest release, resolved when this runs (the
# lock's today: then it says so and stops). On each, in an environment of its own, pyright and the tests that meet
# the API where releases differ (scripts/pydantic_ai_side.py says which, and why not the whole suite: it would double
# `make test`'s ten minutes). ASK_USER_PYDANTIC_AI_FLOOR / ASK_USER_PYDANTIC_AI_LATEST pin either side's version.
pydantic-ai-sides:
	python3 scripts/pydantic_ai_side.py floor
	python3 scripts/pydantic_ai_side.py latest

bench:
	@scripts/bootstrap.sh test
	$(RUN) python -m benchmarks

format:
	$(RUN) ruff format .
	$(RUN) ruff check --fix .

# The whole of `make test` while a bounded CPU load generator keeps every core busy: a slow machine must never
# look like a failure (the tests that drive real processes, pseudo-terminals, Chromium, PostgreSQL, DBOS and Temporal
# workers, above all). Not part of `make test`.
test-under-load:
	@scripts/bootstrap.sh test
	@$(RUN) python scripts/cpu_load.py --seconds 3600 & load=$$!; \
		$(MAKE) --no-print-directory test; status=$$?; \
		kill $$load 2>/dev/null; wait $$load 2>/dev/null; exit $$status

# The property tests with at least 10,000 examples each; not part of `make test`.
hypothesis-long:
	@scripts/bootstrap.sh test
	HYPOTHESIS_PROFILE=long $(RUN) pytest tests/test_properties.py -p no:cacheprovider --no-cov

# The message catalogs (README, "Languages"): extract every _(), ngettext(), N_() and Nn_() in src into the template,
# merge it into each language's .po, and compile the .mo files that are committed beside them.
LOCALE := src/pydantic_ai_ask_user/locale
messages:
	@scripts/bootstrap.sh test
	$(RUN) pybabel extract --no-location --sort-output --project=pydantic-ai-ask-user -k Nn_:1,2 \
		-o $(LOCALE)/pydantic_ai_ask_user.pot src/pydantic_ai_ask_user
	$(RUN) pybabel update --no-fuzzy-matching -D pydantic_ai_ask_user -i $(LOCALE)/pydantic_ai_ask_user.pot -d $(LOCALE)
	$(RUN) pybabel compile --statistics -D pydantic_ai_ask_user -d $(LOCALE)
