"""utils::stream_repeat::tests (inference.md S6 Tests): chunking and the stream, on production
(eukhe.inference.guard), and rules::infer_guard::tests (the compiled core is reached)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bend import infer as model
from eukhe.inference import guard as g
from spec.oracles import infer as oracle

# The observed loop (S6.5): qwen3.8-27b thinking looped 1,359 lines on a 7-line cycle, no line twice
# in a row; the guard cuts at line 77. The seed gives the cut line, not the transcript: a cut at
# line 77 with k = 64 means 13 lines came before the cycle (77 - 64), which is what this stream has.
PREAMBLE = [f"Let me think about step {i} of the plan." for i in range(13)]
CYCLE = [
    "Wait, I need to check the file again.",
    "The function reads the config first.",
    "Then it opens the socket.",
    "Hmm, but the socket needs the port.",
    "The port comes from the config.",
    "So the config is read first.",
    "Let me re-check.",
]
OBSERVED = PREAMBLE + [CYCLE[i % 7] for i in range(1359)]


def feed_lines(guard: g.Guard, lines: list[str], block: str = "thinking") -> tuple[int, g.StreamRepeating] | None:
    for number, line in enumerate(lines, 1):
        cut = guard.feed(block, line + "\n")
        if cut is not None:
            return number, cut
    return None


def test_a_line_is_a_chunk_only_once_its_newline_arrives() -> None:
    guard = g.Guard(2)
    assert guard.feed("text", "same") is None
    assert guard.feed("text", " line") is None
    assert guard.chunks_read == 0
    assert guard.feed("text", "\nsame line") is None  # the first line is a chunk now; the second is not yet
    assert guard.chunks_read == 1
    cut = guard.feed("text", "\n")
    assert cut is not None and cut.period == 1 and cut.last_line == "same line"
    assert g.split("", "a\nb") == ("b", ["a"])
    assert g.split("b", "c\r\nd\n") == ("", ["bc", "d"])


def test_blank_and_whitespace_lines_are_not_chunks() -> None:
    guard = g.Guard(2)
    assert guard.feed("text", "\n\n   \n\t\n \u3000 \n") is None
    assert guard.chunks_read == 0
    assert guard.feed("text", "x\n\n  \nx\n") is not None  # blank lines between repeats do not break the run
    assert g.split("", "  \n\r\n\t\n") == ("", [])


def test_interleaved_blocks_keep_their_own_partial_lines_and_share_one_run() -> None:
    guard = g.Guard(4)
    # Two blocks write the same line in pieces, interleaved: each block's partial line is its own.
    assert guard.feed("thinking", "loo") is None
    assert guard.feed("text", "loo") is None
    assert guard.feed("thinking", "p\n") is None
    assert guard.feed("text", "p\n") is None
    assert guard.chunks_read == 2
    assert guard.feed("thinking", "loop\n") is None
    # the fourth chunk of one run, from either block, cuts: the blocks share one run
    cut = guard.feed("text", "loop\n")
    assert cut is not None and cut.period == 1 and cut.last_line == "loop"
    # a line cut across blocks is not stitched together: "lo" + "op" in two blocks is no "loop"
    other = g.Guard(2)
    assert other.feed("a", "lo") is None and other.feed("b", "op\n") is None and other.feed("a", "\n") is None
    assert other.chunks_read == 2


def test_a_new_attempt_restarts_the_guard() -> None:
    guard = g.Guard(3)
    assert feed_lines(guard, ["x", "x"]) is None
    assert guard.feed("text", "half") is None
    guard.restart()
    assert guard.chunks_read == 0 and guard.cut is None
    assert feed_lines(guard, ["x", "x"]) is None  # the two earlier x's are forgotten
    assert guard.feed("text", "\n") is None  # the partial "half" is forgotten: nothing completes
    assert guard.chunks_read == 2
    cut = guard.feed("text", "x\n")
    assert cut is not None and guard.feed("text", "anything\n") is cut  # the cut holds until a restart
    guard.restart()
    assert guard.feed("text", "x\n") is None


def test_a_loop_with_no_newline_is_cut_in_bounded_chunks() -> None:
    guard = g.Guard()
    sent = 0
    cut = None
    while cut is None and sent < 10**6:
        cut = guard.feed("text", "ab" * 100)
        sent += 200
    assert cut is not None
    assert cut.period == 1 and len(cut.last_line.encode()) == g.MAX_CHUNK_BYTES
    assert guard.chunks_read == 64  # 64 chunks of 4096 bytes of "abab...": one chunk k times
    assert sent <= 65 * g.MAX_CHUNK_BYTES + 200


def test_a_long_line_is_chunked_on_character_boundaries() -> None:
    for width_char in ("é", "€", "😀", "a"):
        line = ("x" + width_char * 3000) * 3
        rest, chunks = g.split("", line + "\n")
        assert rest == ""
        assert "".join(chunks) == line
        assert all(len(c.encode()) <= g.MAX_CHUNK_BYTES for c in chunks)
        assert all(len(c.encode()) > g.MAX_CHUNK_BYTES - 4 for c in chunks[:-1])
    rest, chunks = g.split("", "€" * 2000)  # 6000 bytes, no newline: one full chunk, the rest waits
    assert len(chunks) == 1 and len(chunks[0].encode()) == 4095 and chunks[0] + rest == "€" * 2000


def test_the_observed_thinking_loop_is_cut_at_its_77th_line() -> None:
    guard = g.Guard(64)
    found = feed_lines(guard, OBSERVED)
    assert found is not None
    line, cut = found
    assert line == 77 and cut.period == 7 and cut.last_line == OBSERVED[76]
    # no line twice in a row: a one-chunk-k-times check misses it
    assert all(a != b for a, b in zip(OBSERVED, OBSERVED[1:]))
    ids = {text: i for i, text in enumerate(dict.fromkeys(OBSERVED))}
    stream = tuple(ids[text] for text in OBSERVED)
    assert oracle.guard_says(64, stream) == (76, 7)
    assert not any(len(set(stream[i : i + 64])) == 1 for i in range(len(stream) - 63))


def test_the_observed_thinking_loop_fails_as_repeating_by_default() -> None:
    settings = {g.LIMIT_CVAR: oracle.STREAM_REPEAT_DEFAULT}
    guard = g.Guard.from_settings(settings.__getitem__)
    assert guard.limit == 64 == g.DEFAULT_LIMIT == g.Guard().limit
    found = feed_lines(guard, OBSERVED)
    assert found is not None
    error = found[1]
    assert isinstance(error, Exception) and error.kind == "stream_repeating" and error.retryable
    assert error.repeated_lines == {"period": 7, "last_line": OBSERVED[76]}
    assert "7 lines" in str(error) and OBSERVED[76] in str(error)


def test_the_compiled_core_is_reached() -> None:
    # rules::infer_guard::tests: production's guard drives bend.infer.guard_feed (no copy).
    assert vars(g)["compiled"] is model
    state = model.guard_start(8)
    for chunk in (1, 2) * 3:
        state, verdict = model.guard_feed(state, chunk)
        assert verdict == model.KEPT
    state, verdict = model.guard_feed(state, 1)
    state, verdict = model.guard_feed(state, 2)
    assert verdict == 2 and model.periods(8) == 2


def test_a_bad_window_is_refused() -> None:
    for bad in (-1, 2**32, True, 1.5, "64"):
        try:
            g.Guard(bad)  # type: ignore[arg-type]
        except ValueError as error:
            assert g.LIMIT_CVAR in str(error)
        else:
            raise AssertionError(f"window {bad!r} accepted")


def test_a_long_last_line_is_shortened_in_the_message() -> None:
    error = g.StreamRepeating(1, "z" * 500)
    assert error.last_line == "z" * 500 and "z" * 200 + "…" in str(error) and "1 line;" in str(error)


@given(st.lists(st.sampled_from(["a", "b", "\n", " ", "é", "😀", "\r", "ab\n", "x" * 50]), max_size=60), st.data())
def test_the_chunks_do_not_depend_on_where_the_deltas_split(pieces: list[str], data: st.DataObject) -> None:
    text = "".join(pieces)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(text)), max_size=8)))
    partial, whole = g.split("", text, 16)
    got: list[str] = []
    rest = ""
    at = 0
    for cut in [*cuts, len(text)]:
        rest, chunks = g.split(rest, text[at:cut], 16)
        got += chunks
        at = cut
    assert got == whole and rest == partial
    assert all(len(c.encode("utf-8", "surrogatepass")) <= 16 and c.strip() for c in got)
