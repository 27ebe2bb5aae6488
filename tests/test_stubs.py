"""``toolwire/_core.pyi`` against the built extension: signatures (mypy's stubtest) and docstrings
(``scripts/sync_stub_docs.py``: the Rust ``///`` comments are their one source), and the Rust
classes carry their own methods (nothing is patched onto them from Python)."""

import importlib.util
import inspect
import os
import pydoc
import subprocess
import sys
from pathlib import Path

import pytest
import toolwire
from toolwire import _core

ROOT = Path(__file__).resolve().parent.parent
STUB = ROOT / "python" / "toolwire" / "_core.pyi"


def _sync_script():
    spec = importlib.util.spec_from_file_location("sync_stub_docs", ROOT / "scripts" / "sync_stub_docs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_stub_signatures_match_the_extension(tmp_path):
    if importlib.util.find_spec("mypy") is None:
        pytest.skip("mypy is not installed: pip install -e '.[test]'")
    result = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "toolwire._core", "--allowlist", str(ROOT / ".mypy-stubtest-allowlist")],
        cwd=ROOT / "python",
        env={**os.environ, "MYPY_CACHE_DIR": str(tmp_path)},
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_stub_docstrings_are_the_extensions_and_reach_help():
    sync = _sync_script()
    source = STUB.read_text()
    assert sync.sync(source, _core)[1] == [], "run: python scripts/sync_stub_docs.py"
    drifted = source.replace('"""Canonical names of every supported wire format."""', '"""Format names."""')
    assert drifted != source
    synced, changed = sync.sync(drifted, _core)
    assert changed == ["formats"] and synced == source
    page = pydoc.render_doc(toolwire.ToolParser)
    assert "max_call_bytes: the most bytes one tool call may take" in page
    assert "unchecked_arguments" in pydoc.render_doc(toolwire.CallIssue)


def test_rust_classes_are_not_patched_from_python():
    assert type(inspect.getattr_static(toolwire.ParsedMessage, "to_responses")).__name__ == "method_descriptor"
    message = toolwire.ToolParser("hermes").parse("hello")
    ids = iter(["msg_1"])
    items = message.to_responses(id_factory=lambda prefix: next(ids))
    assert [(item["type"], item["id"]) for item in items] == [("message", "msg_1")]
    assert items[0]["content"][0]["text"] == "hello"
