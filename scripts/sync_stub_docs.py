"""Copy the docstrings of the built extension into ``python/toolwire/_core.pyi``.

The Rust ``///`` comments in ``rust/python/src/`` are the one source of the ``toolwire._core``
docs: PyO3 turns them into the ``__doc__`` that ``help()`` shows. Editors and type checkers read
the stub instead, so this script writes each runtime docstring into the stub (classes, functions,
methods and properties; dunder methods are left alone), and ``--check`` (run by
``tests/test_stubs.py``) fails when the two have drifted. Rebuild the extension
(``pip install -e .``) before running it.

    python scripts/sync_stub_docs.py          # rewrite the stub's docstrings
    python scripts/sync_stub_docs.py --check  # exit 1, listing what differs
"""

from __future__ import annotations

import ast
import inspect
import sys
from pathlib import Path
from typing import Any

STUB = Path(__file__).resolve().parent.parent / "python" / "toolwire" / "_core.pyi"


def _runtime_doc(module: Any, path: list[str]) -> str | None:
    obj = module
    for name in path:
        obj = inspect.getattr_static(obj, name, None)
        if obj is None:
            return None
    if isinstance(obj, staticmethod):
        obj = obj.__func__
    doc = getattr(obj, "__doc__", None)
    return inspect.cleandoc(doc) if doc else None


def _documented(tree: ast.Module) -> list[tuple[list[str], ast.ClassDef | ast.FunctionDef]]:
    nodes: list[tuple[list[str], ast.ClassDef | ast.FunctionDef]] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef):
            nodes.append(([node.name], node))
        if isinstance(node, ast.ClassDef):
            for member in node.body:
                if isinstance(member, ast.FunctionDef) and not member.name.startswith("__"):
                    nodes.append(([node.name, member.name], member))
    return nodes


def _docstring_block(doc: str, indent: str) -> list[str]:
    lines = doc.replace('"""', '\\"\\"\\"').split("\n")
    lines[0] = '"""' + lines[0]
    if len(lines) == 1:
        return [indent + lines[0] + '"""']
    return [indent + lines[0]] + [indent + line if line else "" for line in lines[1:]] + [indent + '"""']


def sync(source: str, module: Any) -> tuple[str, list[str]]:
    """The stub text with the runtime docstrings, and the dotted names whose docs changed."""
    lines = source.split("\n")
    edits: list[tuple[int, int, list[str]]] = []
    changed: list[str] = []
    for path, node in _documented(ast.parse(source)):
        wanted = _runtime_doc(module, path)
        first = node.body[0]
        has_doc = isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant) and isinstance(first.value.value, str)
        current = inspect.cleandoc(first.value.value) if has_doc else None  # type: ignore[union-attr]
        if current == wanted:
            continue
        changed.append(".".join(path))
        indent = " " * (node.col_offset + 4)
        block = _docstring_block(wanted, indent) if wanted else []
        if has_doc:
            start, end = first.lineno - 1, first.end_lineno or first.lineno
            if not block and len(node.body) == 1:
                block = [indent + "..."]
            edits.append((start, end, block))
        elif first.lineno == node.lineno:  # `def f(...) -> T: ...` on one line
            line = lines[node.lineno - 1]
            assert line.rstrip().endswith(": ..."), line
            edits.append((node.lineno - 1, node.lineno, [line.rstrip()[: -len(" ...")]] + block))
        else:
            edits.append((first.lineno - 1, first.lineno - 1, block))
    for start, end, block in sorted(edits, reverse=True):
        lines[start:end] = block
    return "\n".join(lines), changed


def main(argv: list[str]) -> int:
    from toolwire import _core

    source = STUB.read_text()
    synced, changed = sync(source, _core)
    if "--check" in argv:
        for name in changed:
            print(f"{STUB.name}: the docstring of {name} differs from the built extension's", file=sys.stderr)
        return 1 if changed else 0
    if synced != source:
        STUB.write_text(synced)
    print(f"{len(changed)} docstring(s) updated in {STUB}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
