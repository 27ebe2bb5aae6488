"""Fetch the public test data that can come from a package registry into `.test-data/`.

The official JSON-Schema-Test-Suite ships inside the `jsonschema` sdist on PyPI
(`jsonschema-<version>/json/`), so `pip download` gets it with the user's own index settings;
the archive is checked against a pinned SHA-256 and only the suite's data files are kept, laid out
as in `shared/data` (`.test-data/json-schema-test-suite/tests/draft2020-12/...`). The suite tests
(`rust/core/tests/json_schema_suite.rs`) look for it under `$TOOLWIRE_SHARED_DATA`, then
`../shared/data`, then here.

The ai-dynamo conformance corpus is not on any registry: its tests skip without it and say where
to put it. Running this script again does nothing once the data is in place.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / ".test-data" / "json-schema-test-suite"
#: Where the tests look before `.test-data/` (tests/_data.py, json_schema_suite.rs).
SHARED = [Path(os.environ["TOOLWIRE_SHARED_DATA"])] if os.environ.get("TOOLWIRE_SHARED_DATA") else []
SHARED.append(ROOT.parent / "shared" / "data")
SDIST = "jsonschema-4.26.0.tar.gz"
SDIST_SHA256 = "0c26707e2efad8aa1bfc5b7ce170f3fccc2e4918ff85989ba9ffa9facb2be326"
PREFIX = "jsonschema-4.26.0/json/"
KEEP = ("tests/draft2020-12/", "remotes/", "LICENSE", "README.md")


def download(into: Path) -> Path:
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--no-binary", ":all:"]
    subprocess.run([*command, "--dest", str(into), "jsonschema==4.26.0"], check=True)
    archive = into / SDIST
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != SDIST_SHA256:
        raise SystemExit(f"{SDIST}: SHA-256 {digest}, expected {SDIST_SHA256}")
    return archive


def extract(archive: Path, target: Path) -> int:
    count = 0
    with tarfile.open(archive) as tar:
        for member in tar.getmembers():
            inner = member.name[len(PREFIX) :] if member.name.startswith(PREFIX) else None
            if not member.isfile() or inner is None or not inner.startswith(KEEP) or ".." in Path(inner).parts:
                continue
            path = target / inner
            path.parent.mkdir(parents=True, exist_ok=True)
            source = tar.extractfile(member)
            assert source is not None
            path.write_bytes(source.read())
            count += 1
    return count


def main() -> None:
    for found in [*(root / "json-schema-test-suite" for root in SHARED), TARGET]:
        if (found / "tests" / "draft2020-12").is_dir():
            print(f"JSON-Schema-Test-Suite already in {found}: nothing to fetch")
            return
    TARGET.parent.mkdir(parents=True, exist_ok=True)
    # Staged next to the target, so that the last step is one rename: an interrupted run leaves
    # no half-filled suite for the tests to find.
    with tempfile.TemporaryDirectory(dir=TARGET.parent) as tmp:
        try:
            archive = download(Path(tmp))
        except subprocess.CalledProcessError:
            if os.environ.get("TOOLWIRE_REQUIRE_DATA") == "1":
                raise SystemExit("could not download the jsonschema sdist (TOOLWIRE_REQUIRE_DATA=1)") from None
            print("could not download the jsonschema sdist: the JSON-Schema-Test-Suite test will skip")
            return
        staging = Path(tmp) / "suite"
        count = extract(archive, staging)
        # Tells the suite test that this copy is older than the one its skip lists follow.
        (staging / "FETCHED_FROM").write_text(f"{SDIST} from PyPI (sha256 {SDIST_SHA256})\n")
        staging.rename(TARGET)
    print(f"JSON-Schema-Test-Suite ({count} files, from the {SDIST} sdist) in {TARGET.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
