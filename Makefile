# Task runner. `make test` is the README's test command; `.ci/run` runs that command itself.
PYTHON ?= python3
STUBTEST_ALLOWLIST ?= .mypy-stubtest-allowlist

.PHONY: build test lint fmt bench

build:
	$(PYTHON) -m pip install -e .

test:
	pip install -e '.[test]' && python scripts/fetch_test_data.py && cargo test && pytest

# Files that modules declared by macros or build scripts keep out of `cargo fmt`'s sight: the
# formats (`registry!` in formats/mod.rs) and the case files the build script lists.
MACRO_MODULES = rust/core/src/formats/*.rs rust/core/tests/cases/*.rs

lint:
	cargo fmt --all -- --check
	rustfmt --edition 2021 --check $(MACRO_MODULES)
	cargo clippy --workspace --all-targets -- -D warnings
	# The cargo-fuzz targets (outside the workspace) share tests/support/fuzzing.rs: they must build.
	cargo check --manifest-path fuzz/Cargo.toml
	@if [ -f $(STUBTEST_ALLOWLIST) ]; then \
		echo "$(PYTHON) -m mypy.stubtest toolwire._core --allowlist $(STUBTEST_ALLOWLIST)"; \
		$(PYTHON) -m mypy.stubtest toolwire._core --allowlist $(STUBTEST_ALLOWLIST); \
	else echo "stubtest: no $(STUBTEST_ALLOWLIST), skipped"; fi
	@if command -v ruff >/dev/null; then echo "ruff check python tests benches scripts examples"; ruff check python tests benches scripts examples; \
	else echo "ruff: not installed, skipped"; fi

fmt:
	cargo fmt --all
	rustfmt --edition 2021 $(MACRO_MODULES)

bench:
	$(PYTHON) benches/report.py --out benches/out/ --quick
