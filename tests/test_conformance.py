"""Conformance against the public ai-dynamo tool-calling corpus (``fixtures-batch-v1``).

The corpus lives outside the repository, at ``conformance/ai-dynamo/frontend-crates/conformance/
toolcalling/fixtures-batch-v1`` under the shared data folder (``tests/_data.py`` says where that is;
CI has it); it is never copied here, and without it this module skips. Layout::

    inputs/<family>/*.yaml               cases: model_text + tools (some cases are n/a: no model_text)
    dynamo-<ver>/<family>/*.yaml         expected.dynamo: {calls: [{name, arguments}], normal_text}
    vllm-<ver>/<family>/*.yaml           expected.vllm   (same shape, or {unavailable: why})
    sglang-<ver>/<family>/*.yaml         expected.sglang (same shape, or {unavailable: why})

For every family that is a toolwire format (by name or alias) and every case with ``model_text``:

* ``test_matches_dynamo``: one-shot parsing with the case's tools gives Dynamo's calls (name and
  arguments as JSON values, type-strict) and Dynamo's ``normal_text`` as our ``content`` (None and
  "" are the same; whitespace around calls is not content for us; Dynamo's batch parsers drop prose
  that follows the calls while we keep it, so a difference that is exactly such trailing prose is
  not a mismatch). Cases where toolwire differs on purpose are listed in ``DIVERGENCES``, with the
  reason, what we return (asserted) and what vLLM and SGLang returned (asserted against the
  corpus); a listed case that now matches Dynamo fails so the list cannot go stale. Cases that show
  toolwire bugs are listed in ``KNOWN_BUGS`` and run as strict xfails, so they flip when fixed.
* ``test_chunked_stream_matches_parse``: streaming the same text in 1-, 3- and 7-character chunks
  gives exactly the message of one-shot parsing (content, reasoning, calls, issues), and the deltas
  add up to that message.
* ``test_every_format_on_every_corpus_text``: every corpus text, through every toolwire format,
  parses and streams without an exception, yields JSON-object arguments, and streams
  character by character to the one-shot message.

Families with no toolwire format yet are skipped with a reason naming the family.

``python tests/test_conformance.py`` prints the per-family counts.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import toolwire
import yaml
from _data import require_data

CORPUS = require_data(
    "conformance/ai-dynamo/frontend-crates/conformance/toolcalling/fixtures-batch-v1/inputs",
    "the corpus is on no package registry: clone https://github.com/ai-dynamo/frontend-crates (commit 8d4b1bff) "
    "as conformance/ai-dynamo/frontend-crates under a folder and point TOOLWIRE_SHARED_DATA at that folder",
).parent


CHUNK_SIZES = (1, 3, 7)
PEERS = ("vllm", "sglang")


# ---------------------------------------------------------------------------------------------
# Deliberate differences from Dynamo.
#
# Key: "<family>/<case id>". Each entry says why we differ, what toolwire returns for the case
# (asserted: calls as {name, arguments}, content, issue kinds) and what vLLM and SGLang returned
# (asserted against the corpus: {calls, normal_text} or "unavailable").
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Divergence:
    reason: str
    ours: dict[str, Any]
    vllm: Any
    sglang: Any


DIVERGENCES: dict[str, Divergence] = {
    # --- harmony -------------------------------------------------------------------------------
    # Text outside any Harmony message (no <|channel|> header) is content for us: the prompt may
    # have opened the message, and dropping model output silently loses text. Dynamo and vLLM
    # drop bare text because it is not a valid Harmony response; SGLang keeps it as we do.
    # model_text: 'Hello, how can I help you today?'
    "harmony/TOOLCALLING.batch.3": Divergence(
        reason="bare text outside any Harmony message is content for us; Dynamo drops it",
        ours={"calls": [], "content": "Hello, how can I help you today?", "issues": []},
        vllm={"calls": [], "normal_text": ""},
        sglang={"calls": [], "normal_text": "Hello, how can I help you today?"},
    ),
    # model_text: '   '
    "harmony/TOOLCALLING.batch.9.b": Divergence(
        reason="whitespace-only output outside any Harmony message is kept as content; Dynamo drops it",
        ours={"calls": [], "content": "   ", "issues": []},
        vllm={"calls": [], "normal_text": ""},
        sglang={"calls": [], "normal_text": "   "},
    ),
    # --- glm47 ---------------------------------------------------------------------------------
    # A call to a tool that is not in the request is returned, with an `unknown_tool` issue, in
    # every toolwire format (the caller decides; nothing the model wrote is lost). Dynamo does
    # that for most families too, but its GLM-4.7 parser validates names and drops the block;
    # vLLM forwards the call as we do; SGLang drops it.
    # model_text: '<tool_call>unknown_tool<arg_key>location</arg_key><arg_value>NYC</arg_value></tool_call>'
    "glm47/TOOLCALLING.batch.13": Divergence(
        reason="unknown tool names are returned with an unknown_tool issue; Dynamo's GLM-4.7 parser drops the call",
        ours={"calls": [{"name": "unknown_tool", "arguments": {"location": "NYC"}}], "content": None, "issues": ["unknown_tool"]},
        vllm={"calls": [{"name": "unknown_tool", "arguments": {"location": "NYC"}}], "normal_text": ""},
        sglang={"calls": [], "normal_text": ""},
    ),
}


# ---------------------------------------------------------------------------------------------
# Suspected toolwire bugs, run as strict xfails: when one is fixed the test XPASSes and fails,
# asking for the entry to be removed. ``checks`` names the tests concerned: "dynamo" and/or
# "stream1", "stream3", "stream7".
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class KnownBug:
    reason: str
    checks: frozenset[str] = field(default_factory=lambda: frozenset({"dynamo"}))


KNOWN_BUGS: dict[str, KnownBug] = {}


# ---------------------------------------------------------------------------------------------
# Corpus loading
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    family: str
    case_id: str
    text: str
    tools: list[dict[str, Any]]
    expected: dict[str, Any]  # impl ("dynamo", "vllm", "sglang") -> expectation block

    @property
    def key(self) -> str:
        return f"{self.family}/{self.case_id}"


def _impl_dir(prefix: str) -> Path:
    found = sorted(p for p in CORPUS.glob(f"{prefix}-*") if p.is_dir())
    assert len(found) == 1, f"expected exactly one {prefix}-<version> folder in {CORPUS}, found {found}"
    return found[0]


def _openai_tool(tool: dict[str, Any]) -> dict[str, Any]:
    function = {"name": tool["name"], "parameters": tool.get("parameters", {"type": "object", "properties": {}})}
    if "description" in tool:
        function["description"] = tool["description"]
    return {"type": "function", "function": function}


def _load_yaml(path: Path) -> dict[str, Any]:
    with path.open(encoding="utf-8") as f:
        return yaml.safe_load(f) or {}


def load_cases() -> list[Case]:
    impl_dirs = {"dynamo": _impl_dir("dynamo"), **{peer: _impl_dir(peer) for peer in PEERS}}
    cases = []
    for family_dir in sorted(p for p in (CORPUS / "inputs").iterdir() if p.is_dir()):
        family = family_dir.name
        for path in sorted(family_dir.glob("*.yaml")):
            doc = _load_yaml(path)
            expected_docs = {}
            for impl, folder in impl_dirs.items():
                ref = folder / family / path.name
                expected_docs[impl] = (_load_yaml(ref).get("cases") or {}) if ref.is_file() else {}
            for case_id, body in (doc.get("cases") or {}).items():
                if "model_text" not in body:
                    continue  # n/a for this family, or a streaming-chunks case
                expected = {}
                for impl, entries in expected_docs.items():
                    block = (entries.get(case_id) or {}).get("expected", {}).get(impl)
                    if block is not None:
                        expected[impl] = block
                cases.append(
                    Case(
                        family=family,
                        case_id=case_id,
                        text=body["model_text"],
                        tools=[_openai_tool(t) for t in body.get("tools") or []],
                        expected=expected,
                    )
                )
    return cases


def _format_table() -> dict[str, str]:
    table = {}
    for name in toolwire.formats():
        table[name] = name
        for alias in toolwire.format_info(name).get("aliases", []):
            table.setdefault(alias, name)
    return table


def format_for(family: str) -> str | None:
    """The toolwire format for a corpus family, by name or alias; None when there is none."""
    table = _format_table()
    if family in table:
        return table[family]
    try:  # format lookup also normalises spelling (case, '-' vs '_', dots)
        return toolwire.format_info(family)["name"]
    except toolwire.ToolwireError:
        return None


CASES = load_cases()
CASES_BY_KEY = {case.key: case for case in CASES}


# ---------------------------------------------------------------------------------------------
# Comparison helpers
# ---------------------------------------------------------------------------------------------


def canon(value: Any) -> Any:
    """A type-strict comparable form of a JSON value (True != 1, 1 != 1.0)."""
    if value is None:
        return ("null",)
    if isinstance(value, bool):
        return ("bool", value)
    if isinstance(value, int):
        return ("int", value)
    if isinstance(value, float):
        return ("float", value)
    if isinstance(value, str):
        return ("str", value)
    if isinstance(value, list):
        return ("list", tuple(canon(v) for v in value))
    if isinstance(value, dict):
        return ("dict", tuple(sorted((str(k), canon(v)) for k, v in value.items())))
    raise TypeError(f"not a JSON value: {value!r}")


def our_result(message: toolwire.ParsedMessage) -> dict[str, Any]:
    """What we return, in the shape used by ``Divergence.ours``."""
    return {
        "calls": [{"name": c.name, "arguments": json.loads(c.arguments)} for c in message.tool_calls],
        "content": message.content,
        "issues": [i.kind for i in message.issues],
    }


def peer_result(case: Case, impl: str) -> Any:
    """What a peer returned, in the shape used by ``Divergence.vllm`` / ``.sglang``."""
    block = case.expected.get(impl)
    if block is None:
        return "missing"
    if "unavailable" in block:
        return "unavailable"
    return {"calls": block.get("calls") or [], "normal_text": block.get("normal_text")}


def _markers(fmt: str) -> list[str]:
    info = toolwire.format_info(fmt)
    texts = [m["text"] for m in info.get("markers") or [] if m.get("text")]
    texts += [t["text"] for t in info.get("triggers") or [] if t.get("text") and not t.get("soft")]
    return texts


def _is_trailing_prose(ours: str, dynamo: str, case: Case, fmt: str) -> bool:
    """True when our content is Dynamo's plus prose that follows the calls in the model text
    (Dynamo's batch parsers drop text after the calls; we keep all text)."""
    ours, dynamo = ours.strip(), dynamo.strip()
    if not ours.startswith(dynamo):
        return False
    tail = ours[len(dynamo) :].strip()
    if not tail or not case.text.rstrip().endswith(tail):
        return False
    return not any(marker.strip() and marker.strip() in tail for marker in _markers(fmt))


def dynamo_differences(case: Case, fmt: str, message: toolwire.ParsedMessage) -> list[str]:
    """How our parse differs from Dynamo's (empty: it matches)."""
    expected = case.expected["dynamo"]
    diffs = []
    ours_calls = [(c.name, canon(json.loads(c.arguments))) for c in message.tool_calls]
    their_calls = [(c["name"], canon(c.get("arguments") or {})) for c in expected.get("calls") or []]
    if ours_calls != their_calls:
        diffs.append(
            "calls: ours "
            + json.dumps([{"name": c.name, "arguments": json.loads(c.arguments)} for c in message.tool_calls])
            + " dynamo "
            + json.dumps(expected.get("calls") or [], ensure_ascii=False)
        )
    ours_text = message.content or ""
    their_text = expected.get("normal_text") or ""
    same = ours_text == their_text
    if not same and (ours_calls or their_calls):
        # Whitespace around calls is not content for us (content is None then).
        same = ours_text.strip() == their_text.strip() or _is_trailing_prose(ours_text, their_text, case, fmt)
    if not same:
        diffs.append(f"content: ours {message.content!r} dynamo {expected.get('normal_text')!r}")
    return diffs


def parser_for(case: Case, fmt: str) -> toolwire.ToolParser:
    return toolwire.ToolParser(fmt, tools=case.tools)


def stream_chunks(parser: toolwire.ToolParser, text: str, size: int):
    stream = parser.stream()
    deltas = []
    for start in range(0, len(text), size):
        deltas += stream.feed(text[start : start + size])
    deltas += stream.finish()
    return stream.message(), deltas


def message_summary(message: toolwire.ParsedMessage):
    return (
        message.content,
        message.reasoning_content,
        [(c.index, c.name, c.arguments) for c in message.tool_calls],
        [(i.index, i.kind, i.raw) for i in message.issues],
    )


# ---------------------------------------------------------------------------------------------
# Parametrisation
# ---------------------------------------------------------------------------------------------


def _skip_unsupported(case: Case) -> list:
    if format_for(case.family) is None:
        return [pytest.mark.skip(reason=f"family {case.family!r} is not (yet) a toolwire format or alias")]
    return []


def _bug_marks(case: Case, check: str) -> list:
    bug = KNOWN_BUGS.get(case.key)
    if bug is not None and check in bug.checks:
        return [pytest.mark.xfail(strict=True, reason=f"known toolwire bug (remove from KNOWN_BUGS once fixed): {bug.reason}")]
    return []


def _dynamo_params():
    for case in CASES:
        yield pytest.param(case, id=case.key, marks=_skip_unsupported(case) + _bug_marks(case, "dynamo"))


def _stream_params():
    for case in CASES:
        for size in CHUNK_SIZES:
            yield pytest.param(
                case, size, id=f"{case.key}-chunk{size}", marks=_skip_unsupported(case) + _bug_marks(case, f"stream{size}")
            )


# ---------------------------------------------------------------------------------------------
# Tests
# ---------------------------------------------------------------------------------------------


def test_corpus_is_loaded():
    assert CASES, f"no cases with model_text under {CORPUS / 'inputs'}"
    missing = [c.key for c in CASES if "dynamo" not in c.expected]
    assert not missing, f"cases without expected.dynamo: {missing}"


def test_divergence_and_bug_lists_name_corpus_cases():
    unknown = sorted(k for k in [*DIVERGENCES, *KNOWN_BUGS] if k not in CASES_BY_KEY)
    assert not unknown, f"DIVERGENCES/KNOWN_BUGS name cases that are not in the corpus: {unknown}"
    both = sorted(set(DIVERGENCES) & set(KNOWN_BUGS))
    assert not both, f"cases listed both as deliberate divergence and as known bug: {both}"
    for key, bug in KNOWN_BUGS.items():
        assert bug.checks and bug.checks <= {"dynamo", *(f"stream{n}" for n in CHUNK_SIZES)}, key


@pytest.mark.parametrize("case", list(_dynamo_params()))
def test_matches_dynamo(case: Case):
    fmt = format_for(case.family)
    message = parser_for(case, fmt).parse(case.text)
    diffs = dynamo_differences(case, fmt, message)
    divergence = DIVERGENCES.get(case.key)
    if divergence is None:
        assert not diffs, f"{case.key} ({fmt}) differs from Dynamo for {case.text!r}:\n" + "\n".join(diffs)
        return
    assert diffs, f"{case.key} now matches Dynamo: remove it from DIVERGENCES"
    for peer in PEERS:
        assert getattr(divergence, peer) == peer_result(case, peer), f"{case.key}: recorded {peer} result is stale"
    assert canon(our_result(message)) == canon(divergence.ours), (
        f"{case.key}: our behaviour changed; update DIVERGENCES\nnow: {our_result(message)!r}"
    )


@pytest.mark.parametrize(("case", "size"), list(_stream_params()))
def test_chunked_stream_matches_parse(case: Case, size: int):
    fmt = format_for(case.family)
    parser = parser_for(case, fmt)
    parsed = parser.parse(case.text)
    streamed, deltas = stream_chunks(parser, case.text, size)
    assert message_summary(streamed) == message_summary(parsed)
    content = "".join(d.content or "" for d in deltas)
    assert content == (streamed.content or "") or (not streamed.content and not content.strip())
    reasoning = "".join(d.reasoning_content or "" for d in deltas)
    assert reasoning == (streamed.reasoning_content or "")
    for call in streamed.tool_calls:
        fragments = [tc.arguments for d in deltas for tc in d.tool_calls if tc.index == call.index]
        assert "".join(fragments) == call.arguments
        names = [tc.name for d in deltas for tc in d.tool_calls if tc.index == call.index and tc.name]
        assert names == [call.name]


@pytest.mark.parametrize("fmt", toolwire.formats())
def test_every_format_on_every_corpus_text(fmt: str):
    """Any corpus text through any format (mostly the wrong one): no exception, JSON-object
    arguments, and character-by-character streaming gives the one-shot message."""
    for case in CASES:
        parser = parser_for(case, fmt)
        parsed = parser.parse(case.text)
        streamed = stream_chunks(parser, case.text, 1)[0]
        assert message_summary(streamed) == message_summary(parsed), (fmt, case.key)
        for call in parsed.tool_calls:
            assert isinstance(json.loads(call.arguments), dict), (fmt, case.key, call.arguments)


# ---------------------------------------------------------------------------------------------
# Per-family report: python tests/test_conformance.py
# ---------------------------------------------------------------------------------------------


def family_counts() -> dict[str, dict[str, Any]]:
    rows: dict[str, dict[str, Any]] = {}
    for case in CASES:
        fmt = format_for(case.family)
        row = rows.setdefault(
            case.family, {"format": fmt, "cases": 0, "match": 0, "divergent": 0, "known_bugs": 0, "skipped": 0, "unlisted": []}
        )
        row["cases"] += 1
        if fmt is None:
            row["skipped"] += 1
        elif case.key in KNOWN_BUGS:
            row["known_bugs"] += 1
        elif case.key in DIVERGENCES:
            row["divergent"] += 1
        elif not dynamo_differences(case, fmt, parser_for(case, fmt).parse(case.text)):
            row["match"] += 1
        else:
            row["unlisted"].append(case.case_id)
    return rows


if __name__ == "__main__":
    print(f"{'family':16} {'format':14} {'cases':>5} {'match':>5} {'diverg':>6} {'bugs':>4} {'skip':>4}")
    for family, row in family_counts().items():
        print(
            f"{family:16} {row['format'] or '-':14} {row['cases']:5} {row['match']:5} {row['divergent']:6} "
            f"{row['known_bugs']:4} {row['skipped']:4}" + (f"  UNLISTED: {row['unlisted']}" if row["unlisted"] else "")
        )
