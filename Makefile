# Two commands do all the set-up on a fresh machine: `make demo` and `make test`.
UV := $(shell command -v uv 2>/dev/null || echo python3 -m uv)
RUN := $(UV) run --frozen --no-sync

.PHONY: demo test lint typecheck pytest bench format hypothesis-long

demo:
	@scripts/bootstrap.sh demo
	@$(RUN) ask-user demo

test:
	@scripts/bootstrap.sh test
	$(RUN) ruff check .
	$(RUN) ruff format --check .
	$(RUN) pyright src
	$(RUN) pytest

bench:
	@scripts/bootstrap.sh test
	$(RUN) python -m benchmarks

format:
	$(RUN) ruff format .
	$(RUN) ruff check --fix .

# The property tests with at least 10,000 examples each; not part of `make test`.
hypothesis-long:
	@scripts/bootstrap.sh test
	HYPOTHESIS_PROFILE=long $(RUN) pytest tests/test_properties.py -p no:cacheprovider --no-cov
