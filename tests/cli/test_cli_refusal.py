"""A refusal of the model on the command line: `eukhe ask` and `eukhe chat` as real processes
against the loopback server, which scripts a refusal in each API's own form (OpenAI chat's
delta.refusal, a Responses refusal content part, Anthropic's refusal stop with its
stop_details.explanation, Gemini's SAFETY finish, which carries no text).

`eukhe ask` prints the reply so far, then ``[refused] <the refusal's text>``, one line on stderr
naming the provider and the raw stop, and exits 3 (README's exit-code table); `eukhe chat` shows
one row ``[refused] ...`` and goes on."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from loopback_models import write_loopback_models
from cli_support import run_process

from spec.loopback import LoopbackServer, Refusal, Stream, Text

PROVIDERS = {"loop-chat": "openai-completions", "loop-resp": "openai-responses", "loop-ant": "anthropic-messages", "loop-goo": "google-generative-ai"}
SAID = "I can't help with that."
# the refusal's text as each API carries it, and the provider's raw stop value
SHOWN = {"loop-chat": (SAID, "stop"), "loop-resp": (SAID, "completed"), "loop-ant": (SAID, "refusal"), "loop-goo": ("(the provider gave no reason)", "SAFETY")}


@pytest.fixture
def server() -> Iterator[LoopbackServer]:
    with LoopbackServer() as running:
        yield running


@pytest.fixture
def agent(tmp_path: Path, server: LoopbackServer) -> Path:
    return write_loopback_models(tmp_path / "agent", server, PROVIDERS)


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_ask_prints_the_refusal_and_exits_3(server: LoopbackServer, agent: Path, provider: str) -> None:
    server.script(Stream([Text("Well, "), Refusal(SAID)], stop="refusal"))
    done = run_process(["ask", "--provider", provider, "write the exploit"], agent)
    text, raw = SHOWN[provider]
    assert done.status == 3, done
    assert done.out == f"Well, \n[refused] {text}\n"
    assert done.one_error_line() == f"eukhe ask: {provider}: the model refused to answer (stop {raw})"


@pytest.mark.parametrize("provider", list(PROVIDERS))
def test_a_content_filter_without_text_is_a_refusal_too(server: LoopbackServer, agent: Path, provider: str) -> None:
    server.script(Stream([Text("partial")], stop="refusal"))
    done = run_process(["ask", "--provider", provider, "go"], agent)
    assert done.status == 3, done
    # Anthropic's refusal stop always says refusal; the others filter with no text
    assert done.out == "partial\n[refused] (the provider gave no reason)\n"
    assert "the model refused to answer" in done.one_error_line()


def test_an_answer_still_exits_0(server: LoopbackServer, agent: Path) -> None:
    server.script(Stream([Text("fine")]))
    done = run_process(["ask", "--provider", "loop-chat", "go"], agent)
    assert (done.status, done.out, done.err) == (0, "fine\n", "")


@pytest.mark.parametrize("provider", ["loop-chat", "loop-ant"])
def test_chat_shows_a_refusal_as_one_row_and_goes_on(server: LoopbackServer, agent: Path, provider: str) -> None:
    answers = iter([Stream([Refusal(SAID)], stop="refusal"), Stream([Text("Here is a poem.")])])
    server.responder = lambda recorded: next(answers, Stream([Text("(more)")]))
    done = run_process(["chat", "--provider", provider], agent, stdin="write the exploit\nwrite a poem\n/quit\n".encode())
    assert done.status == 0, done
    lines = [line.removeprefix("> ") for line in done.out.splitlines()]  # piped lines are not echoed: a row may follow the prompt
    assert lines.count(f"[refused] {SAID}") == 1, done.out
    assert "Here is a poem." in done.out.split(f"[refused] {SAID}", 1)[1]
