"""Every scripted stream, rendered in each API's form by the loopback server's renderers, cut into
network pieces at arbitrary bytes (a UTF-8 character may be split), reads back through the one
SSE reader and the API's reader as the reply that was scripted: the text, the thinking, the
calls with their arguments, the stop reason and the usage (Hypothesis)."""

from __future__ import annotations

import codecs
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from eukhe.inference.wire.anthropic import AnthropicReader
from eukhe.inference.wire.base import Reader
from eukhe.inference.wire.events import Event, Stop, TextDelta, ThinkingDelta, ToolCall, Usage
from eukhe.inference.wire.google import GoogleReader
from eukhe.inference.wire.openai_chat import ChatReader
from eukhe.inference.wire.openai_responses import ResponsesReader
from eukhe.inference.wire.sse import SseParser
from spec.loopback import RENDER, Call, Stream, Text, Thinking, Tokens

READERS: dict[str, type[Reader]] = {
    "openai-completions": ChatReader,
    "openai-responses": ResponsesReader,
    "anthropic-messages": AnthropicReader,
    "google-generative-ai": GoogleReader,
}

texts = st.text(min_size=1, max_size=30)
arguments = st.dictionaries(st.text(max_size=8), st.one_of(st.integers(-(10**12), 10**12), st.text(max_size=12), st.booleans(), st.none()), max_size=4)
parts = st.lists(
    st.one_of(
        texts.map(Text),
        texts.map(Thinking),
        st.tuples(st.from_regex(r"[a-z_]{1,12}", fullmatch=True), arguments, st.integers(1, 6)).map(lambda t: Call(t[0], json.dumps(t[1], ensure_ascii=False), None, t[2])),
    ),
    max_size=8,
)
tokens = st.builds(Tokens, st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**6), st.just(0), st.integers(0, 1000))


def read(api: str, data: bytes, cuts: list[int]) -> list[Event]:
    decoder = codecs.getincrementaldecoder("utf-8")()
    parser = SseParser()
    reader = READERS[api]("p")
    out: list[Event] = []
    points = sorted({c % (len(data) + 1) for c in cuts})
    for start, end in zip([0, *points], [*points, len(data)]):
        for sse in parser.feed(decoder.decode(data[start:end])):
            out.extend(reader.feed(sse))
            if reader.done:
                break
    out.extend(reader.finish())
    return out


@pytest.mark.parametrize("api", list(READERS))
@settings(deadline=None, max_examples=80)
@given(parts=parts, stop=st.sampled_from(["stop", "length", "toolUse", "refusal"]), usage=tokens, cuts=st.lists(st.integers(0, 10**6), max_size=10))
def test_a_scripted_stream_reads_back_as_scripted(api: str, parts: list[Any], stop: str, usage: Tokens, cuts: list[int]) -> None:
    usage = Tokens(usage.input, usage.output + usage.reasoning, usage.cache_read, 0, usage.reasoning)
    frames = RENDER[api](Stream(parts, stop=stop, usage=usage), "m")
    data = b"".join(f for f in frames if isinstance(f, bytes))
    got = read(api, data, cuts)
    assert "".join(e.text for e in got if isinstance(e, TextDelta)) == "".join(p.text for p in parts if isinstance(p, Text))
    assert "".join(e.text for e in got if isinstance(e, ThinkingDelta)) == "".join(p.text for p in parts if isinstance(p, Thinking))
    calls = [e for e in got if isinstance(e, ToolCall)]
    scripted = [p for p in parts if isinstance(p, Call)]
    assert [(c.index, c.id, c.name) for c in calls] == [(i, f"call_{i}", p.name) for i, p in enumerate(scripted)]
    assert [json.loads(c.arguments) for c in calls] == [json.loads(p.arguments) for p in scripted]
    expected = stop
    if api in ("openai-responses", "google-generative-ai") and stop in ("stop", "toolUse"):
        expected = "toolUse" if scripted else "stop"  # these APIs have no stop reason of their own for calls
    assert isinstance(got[-1], Stop) and got[-1].reason == expected
    read_usage = [e for e in got if isinstance(e, Usage)]
    assert len(read_usage) == 1
    assert (read_usage[0].input, read_usage[0].output, read_usage[0].cache_read) == (usage.input, usage.output, usage.cache_read)
