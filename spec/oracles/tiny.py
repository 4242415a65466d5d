"""Judges of the tiny laws, transcribed from inference.md S9 as data (never from bend.tiny).

Each table is the seed's sentence it comes from, as a mapping from what a process sees to what
it does; the laws compare the model's choice with these tables point by point.
"""

from __future__ import annotations

from collections.abc import Iterable

# S9 worker 2-4: "Same tag → use it (joined). Other tag → shutdown ... client starts a new one
# (replaced). No live socket → client starts one (started)." A worker that is closing has
# removed its socket and refuses new requests (worker 3): for a newcomer it is no live worker.
ON_PING: dict[str, str] = {"none": "start", "same": "join", "other": "replace", "closing": "start"}

# S9 worker 3: "worker removes socket, answers bye ... client starts a new one (replaced)".
# A connection that closes instead of answering bye leaves no worker to ask: start as well.
ON_SHUTDOWN: dict[str, str] = {"bye": "start", "gone": "start"}

# S9 worker 4 and 6: a started worker is checked; a worker that never came up is a crash
# reported with the log path (typed Crashed).
ON_LAUNCH: dict[str, str] = {"spawned": "check", "failed": "crashed"}

# S9 worker 4: "a live worker answers → it exits, client uses the live one": after a start the
# client pings; the same tag is used, another tag is a worker to replace (bounded rounds, then
# contended), nothing answering is a crash, a closing worker means start again. The bound on
# launches is ours (derived: the seed does not bound the rounds): 3 launches per election.
ATTEMPTS = 3
ON_CHECK: dict[str, str] = {"same": "use", "other": "replace", "none": "crashed", "closing": "start"}
ON_CHECK_EXHAUSTED: dict[str, str] = {"same": "use", "other": "contended", "none": "crashed", "closing": "contended"}

# S9 worker 4: the started worker "holds the bind lock only while checking and binding; a live
# worker answers → it exits". A socket file with nobody behind it is removed before binding.
SEAT: dict[str, str] = {"live": "exit", "stale": "clear_and_bind", "absent": "bind"}

# S9 "Roles": the role's catalog models; "translate: lfm2.5-350m before lfm2.5-230m".
ROLE_CATALOG: dict[str, tuple[str, ...]] = {
    "tiny": ("lfm2.5-230m", "lfm2.5-350m"),
    "judge": ("lfm2.5-230m", "lfm2.5-350m"),
    "translate": ("lfm2.5-350m", "lfm2.5-230m"),
    "speech": ("kokoro",),
    "dictation": ("whisper-base", "whisper-small"),
}
TEXT_ROLES: frozenset[str] = frozenset({"tiny", "judge", "translate"})  # "session provider model (text roles)"

# S9 Catalog: "Models: lfm2.5-230m, lfm2.5-350m (text, ONNX q4); whisper-base, whisper-small
# (speech to text); kokoro (Kokoro-82M, text to speech)".
CATALOG_IDS: frozenset[str] = frozenset({"lfm2.5-230m", "lfm2.5-350m", "whisper-base", "whisper-small", "kokoro"})


def first_available(chain: Iterable[str], available: frozenset[str]) -> str | None:
    """S9 roles 3, read literally: scan the chain in order, the first one available."""
    for candidate in chain:
        if candidate in available:
            return candidate
    return None


def expected_chain(role: str, primary: str | None, fallback: tuple[str, ...] | None, session: str | None) -> list[str]:
    """S9 roles 1 written out: primary, then the fallback chain, else the role's catalog models
    and (text roles) the session model; a name repeated keeps its first place."""
    names = [] if primary is None else [primary]
    if fallback is not None:
        names += list(fallback)
    else:
        names += list(ROLE_CATALOG[role])
        if role in TEXT_ROLES and session is not None:
            names.append(session)
    out: list[str] = []
    for name in names:
        if name not in out:
            out.append(name)
    return out


# S9 worker 6: "Lines ≤ 256 MiB each side: longer request → bad_request; longer answer → out of
# protocol; bytes discarded." Read literally over a whole byte stream: every complete line (up
# to its newline) is either itself, when its length is at most the limit, or refused; a last
# line without its newline is the end of the stream (the other side died mid-line).
OVER = "over-limit"


def lines_of(stream: bytes, limit: int) -> list[bytes | str]:
    out: list[bytes | str] = []
    *complete, _partial = stream.split(b"\n")
    for line in complete:
        out.append(line if len(line) <= limit else OVER)
    return out


# S9 Translation: "Empty reply, or same letters and digits as input (case-insensitive) →
# TranslationError::Empty/TranslationError::Unchanged ... Letterless input exempt." and "One-line
# text stops at first line end"; the reply carries the prefill "<Language>:" or not.
def translation_verdict(language: str, text: str, reply: str) -> str:
    body = reply.removeprefix(f"{language}:")
    if "\n" not in text.strip("\n"):
        body = body.strip(" \t").partition("\n")[0]
    body = body.strip()
    if body == "":
        return "Empty"
    letters = [c for c in text if c.isalpha()]
    # case-insensitive as Unicode case folding has it: "SS" echoes "ß"
    if letters and "".join(c for c in body if c.isalnum()).casefold() == "".join(c for c in text if c.isalnum()).casefold():
        return "Unchanged"
    return "ok"
