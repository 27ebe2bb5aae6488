# Task runner. `make test` is the README's test command; `.ci/run` runs that command itself.
PYTHON ?= python3
STUBTEST_ALLOWLIST ?= .mypy-stubtest-allowlist

.PHONY: build test lint fmt bench

build:
	$(PYTHON) -m pip install -e .

test:
	pip install -e '.[test]' && python scripts/fetch_test_data.py && cargo test && pytest

lint:
	cargo fmt --all -- --check
	cargo clippy --workspace --all-targets -- -D warnings
	@if [ -f $(STUBTEST_ALLOWLIST) ]; then \
		echo "$(PYTHON) -m mypy.stubtest toolwire._core --allowlist $(STUBTEST_ALLOWLIST)"; \
		$(PYTHON) -m mypy.stubtest toolwire._core --allowlist $(STUBTEST_ALLOWLIST); \
	else echo "stubtest: no $(STUBTEST_ALLOWLIST), skipped"; fi
	@if command -v ruff >/dev/null; then echo "ruff check python tests benches scripts examples"; ruff check python tests benches scripts examples; \
	else echo "ruff: not installed, skipped"; fi

fmt:
	cargo fmt --all

bench:
	$(PYTHON) benches/report.py --out benches/out/ --quick
