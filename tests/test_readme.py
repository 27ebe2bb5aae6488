"""The README's and docs' examples run, each on its own, and the formats table lists every format."""

import importlib.util
import re
from pathlib import Path

import pytest
import toolwire

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
README = (ROOT / "README.md").read_text(encoding="utf-8")
TEST_COMMAND = "pip install -e '.[test]' && python scripts/fetch_test_data.py && cargo test && pytest"

#: Modules an example may import that the core install lacks, and the extra that brings them.
OPTIONAL = {"xgrammar": "grammar", "torch": "torch", "transformers": "demo"}


def snippets() -> list:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        for i, match in enumerate(re.finditer(r"```python\n(.*?)```", text, flags=re.DOTALL)):
            line = text.count("\n", 0, match.start()) + 2
            found.append(pytest.param(page, line, match.group(1), id=f"{page.relative_to(ROOT)}:{line}"))
    return found


def needs(code: str) -> list[str]:
    """The optional modules a snippet needs that are not installed (``toolwire.grammar`` needs xgrammar)."""
    imported = set(re.findall(r"^\s*(?:import|from)\s+(\w+)", code, flags=re.MULTILINE))
    if re.search(r"from toolwire import .*\bgrammar\b|import toolwire\.grammar", code):
        imported.add("xgrammar")
    return sorted(m for m in imported & set(OPTIONAL) if importlib.util.find_spec(m) is None)


@pytest.mark.parametrize(("page", "line", "code"), snippets())
def test_snippet_runs_on_its_own(page, line, code, capsys):
    missing = needs(code)
    if missing:
        extras = ", ".join(sorted({f"'toolwire[{OPTIONAL[m]}]'" for m in missing}))
        pytest.skip(f"needs {', '.join(missing)} (pip install {extras})")
    exec(compile(code, f"{page.name}:{line}", "exec"), {"__name__": "__snippet__"})  # noqa: S102 (the docs run as written)
    capsys.readouterr()


def test_every_page_has_a_title_and_is_linked_from_the_readme():
    for page in PAGES[1:]:
        assert page.read_text(encoding="utf-8").startswith("# "), page
        assert f"(docs/{page.name})" in README, f"README does not link {page.name}"


def test_readme_stays_short():
    assert len(README.splitlines()) <= 200


def test_formats_table_lists_every_format():
    table = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    for name in toolwire.formats():
        assert f"| `{name}` |" in table, f"docs/formats.md misses {name} (python scripts/update_readme_formats.py)"


def test_formats_table_is_what_the_script_writes():
    spec = importlib.util.spec_from_file_location("update_readme_formats", ROOT / "scripts" / "update_readme_formats.py")
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    page = (ROOT / "docs" / "formats.md").read_text(encoding="utf-8")
    section = page.split(script.START, 1)[1].split(script.END, 1)[0]
    assert section.strip() == script.body().strip(), "run python scripts/update_readme_formats.py"


def test_setup_commands_are_the_ci_commands():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    makefile = (ROOT / "Makefile").read_text(encoding="utf-8")
    assert TEST_COMMAND in README
    assert TEST_COMMAND in ci
    assert TEST_COMMAND in makefile
    assert "pip install . && toolwire demo" in README
