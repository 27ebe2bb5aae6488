"""The fuzz properties through the bindings (see FUZZING.md), with Hypothesis.

For every format, model output is built from the format's own spec (``format_info``: markers,
triggers, reasoning delimiters, their prefixes), calls rendered by ``toolwire.render`` with random
names and JSON arguments (whole or cut short), JSON fragments and plain text, or is arbitrary
text. Checked:

* no exception;
* chunk-split: any split streams to the same message as one-shot parsing (ids from a
  deterministic ``id_factory``, so the whole message is compared);
* the streamed deltas add up to the message; returned arguments are JSON;
* accounting: every input character is content, reasoning, an issue's raw text (with a tool list
  that declares none of the generated names, every completed call is an ``unknown_tool`` issue
  carrying its raw text), a ``too_large`` cut's dropped bytes, or markup (whitespace and the
  format's marker strings, plus the per-format markup of ``rust/core/tests/support/fuzz_markup.json``,
  the table the Rust harness reads too); whitespace may vanish
  around markup, calls and reasoning but not between two content characters;
* token input: a byte-level vocabulary whose special tokens are the format's markers, invalid
  UTF-8 mixed in, ids grouped at random, streams to the same message however grouped.
"""

import json
import os
import re
from pathlib import Path
from types import SimpleNamespace

import toolwire
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

FORMATS = toolwire.formats()
SENTINEL_TOOLS = [
    {
        "type": "function",
        "function": {"name": "zz_fuzz_sentinel_tool", "parameters": {"type": "object", "properties": {}}},
    }
]
NAMES = ["get_weather", "search", "f", "a.b-c:d", "東京", "function", ""]
KEYS = ["location", "days", "query", "x", "a b", "", '"', "é"]
TEXT = [" ", "\n", "x", "NYC", "é", "😀", "東京", "<", ">", "</", "/>", "=", "'", '"', "(", ")", "`",
        "```", "|", "\\", ";", ",", ":", "{", "}", "[", "]", "\r\n", "\u3000", "\ufffd"]
JSON_PIECES = ['"name"', '"arguments"', '"parameters"', '"get_weather"', ": ", ", ", "1", "-2.5e3",
               "123456789012345678901234567890", "true", "null", '\\"', "\\u00e9",
               '{"name": "get_weather", "arguments": {"location": "NYC"}}',
               '[{"name": "f", "arguments": {}}]', '{"a": [1, {"b": null}]}']

# Markup a format drops that its spec does not name: the table the Rust harness reads too.
MARKUP_TABLE = json.loads((Path(__file__).parents[1] / "rust/core/tests/support/fuzz_markup.json").read_text("utf-8"))
EXTRA_FILLERS: dict[str, list[str]] = {}
SPANS: dict[str, list[tuple[str, str]]] = {}
for _entry in MARKUP_TABLE["fillers"]:
    for _name in _entry["formats"]:
        EXTRA_FILLERS.setdefault(_name, []).extend(_entry["texts"])
for _entry in MARKUP_TABLE["spans"]:
    for _name in _entry["formats"]:
        SPANS.setdefault(_name, []).extend((o, c) for o in _entry["opens"] for c in _entry["closes"])


def spec_strings(name):
    info = toolwire.format_info(name)
    out = {m["text"] for m in info["markers"]} | {t["text"] for t in info["triggers"]}
    if info.get("reasoning"):
        out |= {info["reasoning"]["start"], info["reasoning"]["end"]}
    out |= {"<think>", "</think>"}
    template = info.get("template")
    if template:
        out |= {template["begin"].replace("{name}", "get_weather"), template["end"], template["separator"]}
    return sorted(s for s in out if s)


def fillers(name):
    out = set(spec_strings(name))
    template = toolwire.format_info(name).get("template")
    if template:
        out.discard(template["begin"].replace("{name}", "get_weather"))
    return sorted(out | set(EXTRA_FILLERS.get(name, [])))


SPEC_STRINGS = {name: spec_strings(name) for name in FORMATS}
FILLERS = {name: fillers(name) for name in FORMATS}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-1000, 1000) | st.sampled_from(["NYC", "", 'a "q" \\ b\nc', "東京 😀", "42"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(KEYS), inner, max_size=3),
    max_leaves=6,
)


@st.composite
def rendered(draw, name):
    calls = []
    for _ in range(draw(st.integers(1, 3))):
        markers = SPEC_STRINGS[name]
        value = draw(json_values | st.sampled_from(markers).map(lambda m: f"x{m}y"))
        args = draw(st.dictionaries(st.sampled_from(KEYS), json_values, max_size=3))
        args[draw(st.sampled_from(KEYS))] = value
        calls.append({"name": draw(st.sampled_from(NAMES)), "arguments": args})
    content = draw(st.sampled_from([None, "Let me check.", "\n"]))
    text = toolwire.render(name, calls, content=content)
    if draw(st.booleans()):
        text = text[: draw(st.integers(0, len(text)))]
    return text


@st.composite
def outputs(draw):
    name = draw(st.sampled_from(FORMATS))
    strings = SPEC_STRINGS[name]
    piece = st.one_of(
        st.sampled_from(strings),
        st.sampled_from(strings).flatmap(lambda s: st.integers(1, max(1, len(s) - 1)).map(lambda k: s[:k])),
        st.sampled_from(TEXT),
        st.sampled_from(JSON_PIECES),
        rendered(name),
        st.text(max_size=6),
    )
    text = "".join(draw(st.lists(piece, max_size=24)))
    return name, text


def options(draw_reasoning, draw_limit):
    reasoning = [None, True, "think", "closing_only"][draw_reasoning]
    limit = [None, None, 16, 300][draw_limit]
    return reasoning, limit


def parser_for(name, reasoning=None, limit=None, tools=None):
    return toolwire.ToolParser(
        name, tools=tools, reasoning=reasoning, max_call_bytes=limit,
        id_factory=lambda index, fn: f"call_{index}",
    )


def summary(message):
    return (
        message.content,
        message.reasoning_content,
        [(c.index, c.id, c.name, c.arguments) for c in message.tool_calls],
        [(i.index, i.kind, i.detail, i.raw) for i in message.issues],
        message.finish_reason,
    )


def split(text, cuts):
    points = sorted({c % (len(text) + 1) for c in cuts})
    return [text[a:b] for a, b in zip([0, *points], [*points, len(text)])]


def stream(parser, chunks):
    s = parser.stream()
    deltas = []
    for chunk in chunks:
        deltas += s.feed(chunk)
    deltas += s.finish()
    return s.message(), deltas


def check_deltas(message, deltas):
    content = "".join(d.content or "" for d in deltas)
    assert content == (message.content or "") or (message.content is None and not content.strip())
    reasoning = "".join(d.reasoning_content or "" for d in deltas)
    assert reasoning == (message.reasoning_content or "")
    for call in message.tool_calls:
        if call.input is not None:
            continue
        fragments = [tc.arguments for d in deltas for tc in d.tool_calls if tc.index == call.index]
        assert "".join(fragments) == call.arguments
        json.loads(call.arguments)


def dropped_bytes(detail):
    match = re.search(r"and the (\d+) bytes after this raw text", detail)
    return int(match.group(1)) if match else 0


def segments(message):
    # Several issues about one returned call (unknown_tool, missing_markers, ...) share its raw text.
    returned = {call.index for call in message.tool_calls}
    out, last_kept = [], None
    for issue in message.issues:
        dropped = dropped_bytes(issue.detail) if issue.kind == "too_large" else 0
        if not issue.raw and not dropped:
            continue
        if issue.index is not None and issue.index in returned:
            key = (issue.index, issue.raw)
            if key == last_kept:
                continue
            last_kept = key
        out.append((issue.raw.encode(), dropped))
    return out


def accounted(text, message, name, limit=300_000):
    """The accounting property (see the module docstring and ``check_accounting`` in the Rust
    harness): a search over (input offset, content offset, reasoning offset, issue index, offset in
    its raw text), byte by byte. Returns None when the search gave up."""
    inp = text.encode()
    content = (message.content or "").encode()
    reasoning = (message.reasoning_content or "").encode()
    segs = segments(message)
    fill = [f.encode() for f in FILLERS[name]]
    spans = [(o.encode(), c.encode()) for o, c in SPANS.get(name, [])]
    n = len(inp)
    goal = (n, len(content), len(reasoning), len(segs), 0)
    # `last`: what came last, a content byte (AFTER_CONTENT), whitespace that vanished right after
    # one (GAP), or anything else (OTHER). Content may not follow a GAP: whitespace may vanish
    # around markup, calls and reasoning, never inside content.
    other, after_content, gap = 0, 1, 2
    seen, stack = set(), [(0, 0, 0, 0, 0, other)]
    while stack:
        state = stack.pop()
        if state[:5] == goal:
            return True
        if state in seen:
            continue
        seen.add(state)
        if len(seen) > limit:
            return None
        i, c, r, j, k, last = state
        rest = inp[i:]
        nxt = []
        if i < n:
            ch = inp[i:i + 4].decode("utf-8", errors="ignore")[:1]
            if ch and ch.isspace():
                nxt.append((i + len(ch.encode()), c, r, j, k, other if last == other else gap))
        for opener, closer in spans:
            if rest.startswith(opener):
                p = inp.find(closer, i + len(opener))
                if p >= 0:
                    nxt.append((p + len(closer), c, r, j, k, other))
        for f in fill:
            if rest.startswith(f):
                nxt.append((i + len(f), c, r, j, k, other))
            elif rest and f.startswith(rest):
                nxt.append((n, c, r, j, k, other))
        if r < len(reasoning) and i < n and inp[i] == reasoning[r]:
            nxt.append((i + 1, c, r + 1, j, k, other))
        if c < len(content) and i < n and inp[i] == content[c] and last != gap:
            nxt.append((i + 1, c + 1, r, j, k, after_content))
        if j < len(segs):
            raw, dropped = segs[j]
            if k == len(raw):
                # The raw text is complete (or empty): the issue is done after its dropped bytes,
                # which may start later, or after the start of a marker cut short.
                skips = {0} | {p for f in fill for p in range(1, len(f)) if dropped and rest.startswith(f[:p])}
                for skip in skips:
                    if i + skip + dropped <= n:
                        nxt.append((i + skip + dropped, c, r, j + 1, 0, last if skip + dropped == 0 else other))
            else:
                if i < n and inp[i] == raw[k]:
                    nxt.append((i + 1, c, r, j, k + 1, other))
                if rest.startswith(raw[k:]):
                    nxt.append((i + len(raw) - k, c, r, j, len(raw), other))
        stack.extend(nxt)
    return False


# TOOLWIRE_FUZZ_EXAMPLES raises the number of examples per test for a long run.
SETTINGS = settings(
    max_examples=int(os.environ.get("TOOLWIRE_FUZZ_EXAMPLES", "150")),
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)


@SETTINGS
@given(outputs(), st.lists(st.integers(0, 100_000), max_size=16), st.integers(0, 3), st.integers(0, 3))
def test_any_split_streams_to_the_one_shot_message(case, cuts, reasoning_choice, limit_choice):
    name, text = case
    reasoning, limit = options(reasoning_choice, limit_choice)
    parser = parser_for(name, reasoning, limit)
    whole = parser.parse(text)
    message, deltas = stream(parser, split(text, cuts))
    assert summary(message) == summary(whole)
    check_deltas(message, deltas)
    one_by_one, deltas = stream(parser, list(text))
    assert summary(one_by_one) == summary(whole)
    check_deltas(one_by_one, deltas)


@SETTINGS
@given(outputs(), st.integers(0, 3), st.integers(0, 3))
def test_every_character_is_accounted_for(case, reasoning_choice, limit_choice):
    name, text = case
    reasoning, limit = options(reasoning_choice, limit_choice)
    message = parser_for(name, reasoning, limit, tools=SENTINEL_TOOLS).parse(text)
    assert accounted(text, message, name) is not False, (name, text, summary(message))


def test_the_accounting_check_rejects_lost_text():
    call = '<tool_call>{"name": "f", "arguments": {}}</tool_call>'
    text = f"a  b\n{call}\nc d"
    real = parser_for("hermes", tools=SENTINEL_TOOLS).parse(text)
    assert accounted(text, real, "hermes") is True, summary(real)

    def fake(content, raw):
        issue = SimpleNamespace(index=0, kind="unknown_tool", detail="", raw=raw)
        returned_call = SimpleNamespace(index=0)
        return SimpleNamespace(content=content, reasoning_content=None, tool_calls=[returned_call], issues=[issue])

    assert accounted(text, fake("a  bc d", call), "hermes") is True
    for content, raw in [
        ("a  b\nc", call),  # the last character lost
        ("a b\nc d", call),  # two spaces collapsed into one
        ("ab\nc d", call),  # inner whitespace dropped
        ("a  b\nc d!", call),  # a character that is not in the input
        ("c d a  b", call),  # reordered
        ("a  b\nc d", call[1:]),  # the call's first character lost
        ("a  b\nc d", "<tool_call>{}"),  # most of the call lost
    ]:
        assert accounted(text, fake(content, raw), "hermes") is False, (content, raw)


@SETTINGS
@given(st.sampled_from(FORMATS), st.text(max_size=200), st.lists(st.integers(0, 1000), max_size=8))
def test_arbitrary_text(name, text, cuts):
    parser = parser_for(name, tools=SENTINEL_TOOLS)
    whole = parser.parse(text)
    message, deltas = stream(parser, split(text, cuts))
    assert summary(message) == summary(whole)
    check_deltas(message, deltas)
    assert accounted(text, whole, name) is not False, (name, text, summary(whole))


def byte_vocab(specials):
    pieces = [(b, bytes([b]), False) for b in range(256)]
    pieces += [(256 + k, text, True) for k, text in enumerate(specials)]
    return toolwire.Vocab.from_pieces(pieces)


@SETTINGS
@given(outputs(), st.data())
def test_token_ids_stream_the_same_however_grouped(case, data):
    name, text = case
    specials = [m["text"] for m in toolwire.format_info(name)["markers"] if m["special_token"]]
    vocab = byte_vocab(specials)
    parser = toolwire.ToolParser(name, vocab=vocab, id_factory=lambda index, fn: f"call_{index}")
    ids, i = [], 0
    while i < len(text):
        marker = max((m for m in specials if text.startswith(m, i)), key=len, default=None)
        if marker and data.draw(st.integers(0, 4)):
            ids.append(256 + specials.index(marker))
            i += len(marker)
            continue
        if data.draw(st.integers(0, 60)) == 0:
            ids.append(data.draw(st.sampled_from([0x80, 0xBF, 0xC3, 0xE6, 0xF0, 0xFF])))
        ids.extend(text[i].encode())
        i += 1
    whole = parser.stream()
    whole.feed_tokens(ids)
    whole.finish()
    grouped = parser.stream()
    at = 0
    while at < len(ids):
        size = data.draw(st.integers(1, 8))
        grouped.feed_tokens(ids[at:at + size])
        at += size
    grouped.finish()
    assert summary(grouped.message()) == summary(whole.message())


def test_max_call_bytes_reports_too_large():
    parser = toolwire.ToolParser("hermes", max_call_bytes=1024)
    value = "x" * 100_000
    text = f'Sure.<tool_call>{{"name": "f", "arguments": {{"v": "{value}"}}}}</tool_call>After.'
    for message in (parser.parse(text), stream(parser, split(text, range(0, len(text), 997)))[0]):
        assert message.tool_calls == []
        assert message.content == "Sure.After."
        [issue] = message.issues
        assert issue.kind == "too_large"
        assert len(issue.raw) <= 1024 + 1024 // 8 + len("<tool_call>")
        # The raw text, the dropped bytes and the end marker are the whole call region.
        region = len(text) - len("Sure.") - len("After.")
        assert len(issue.raw) + dropped_bytes(issue.detail) + len("</tool_call>") == region
    small = parser.parse('<tool_call>{"name": "f", "arguments": {"v": "ok"}}</tool_call>')
    assert [c.name for c in small.tool_calls] == ["f"] and small.issues == []


def test_the_markup_table_names_only_formats():
    """A misspelt format in the shared markup table would leave that format's fillers out of both harnesses."""
    named = {name for section in ("fillers", "spans") for entry in MARKUP_TABLE[section] for name in entry["formats"]}
    assert named <= set(FORMATS), sorted(named - set(FORMATS))
