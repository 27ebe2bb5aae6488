"""The README's examples run, and its formats table lists every format."""

import importlib.util
import re
from pathlib import Path

import toolwire

README = (Path(__file__).resolve().parents[1] / "README.md").read_text(encoding="utf-8")


def test_quickstart_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README, flags=re.S)
    assert blocks, "README has no python example"
    namespace: dict = {}
    for block in blocks:
        if "toolwire import grammar" in block and importlib.util.find_spec("xgrammar") is None:
            continue  # the constrained-decoding example needs the grammar extra
        exec(compile(block, "README.md", "exec"), namespace)
    assert "get_weather" in capsys.readouterr().out


def test_formats_table_lists_every_format():
    for name in toolwire.formats():
        assert f"| `{name}` |" in README, f"README formats table misses {name}"


def test_setup_commands_are_the_ci_commands():
    ci = (Path(__file__).resolve().parents[1] / ".ci" / "run").read_text(encoding="utf-8")
    assert "pip install -e '.[test]' && cargo test && pytest" in README
    assert "pip install -e '.[test]' && cargo test && pytest" in ci
    assert "pip install . && toolwire demo" in README
