"""Where the tests find public data that is never copied into the repository.

In order: `$TOOLWIRE_SHARED_DATA`, `shared/data` next to the checkout (as on CI), `.test-data/` in
it (what `python scripts/fetch_test_data.py` fetches from a registry). A test whose data is in none
of them skips and says how to get it, unless `TOOLWIRE_REQUIRE_DATA=1` (set by `.ci/run`), which
turns the skip into a failure.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def data_roots() -> list[Path]:
    roots = [Path(os.environ["TOOLWIRE_SHARED_DATA"])] if os.environ.get("TOOLWIRE_SHARED_DATA") else []
    return [*roots, REPO.parent / "shared" / "data", REPO / ".test-data"]


def find_data(relative: str) -> Path | None:
    """The first ``root / relative`` that is a directory, or None."""
    return next((root / relative for root in data_roots() if (root / relative).is_dir()), None)


def require_data(relative: str, how_to_get: str) -> Path:
    """``find_data(relative)``, or skip the calling module (fail under ``TOOLWIRE_REQUIRE_DATA=1``)."""
    found = find_data(relative)
    if found is not None:
        return found
    why = f"{relative} not found under {', '.join(str(r) for r in data_roots())}; {how_to_get}"
    if os.environ.get("TOOLWIRE_REQUIRE_DATA") == "1":
        pytest.fail(f"{why} (TOOLWIRE_REQUIRE_DATA=1)", pytrace=False)
    pytest.skip(why, allow_module_level=True)
