"""The uses of the roles (S9 Roles and Uses): resolve a role's model, translate, the judge's
classifier, titles in the background, and the translation eval.

Availability (roles 2): a local model is available when installed; a provider model when it is
the session's usable model. The pick is ``bend.tiny.pick`` (through ``roles.choose``).

A role's chain comes from the settings (``settings``: ``modelRoles.<role>``,
``retry.fallbackChains.<role>``, read by ``eukhe.tiny.settings`` through the settings layer);
``primary`` and ``fallback`` given explicitly take the place of the settings' values.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

from eukhe.tiny import catalog, roles, tasks
from eukhe.tiny.client import TinyClient
from eukhe.tiny.settings import TinySettings


def installed_models(agent_dir: Path) -> frozenset[str]:
    return frozenset(m.id for m in catalog.CATALOG if catalog.install_state(agent_dir, m) == catalog.INSTALLED)


def resolve(
    role: str,
    agent_dir: Path,
    *,
    primary: str | None = None,
    fallback: tuple[str, ...] | None = None,
    session_model: str | None = None,
    session_usable: bool = False,
    settings: TinySettings | None = None,
) -> str:
    primary, fallback = _configured(role, primary, fallback, settings)
    candidates = roles.chain(role, primary, fallback, session_model)
    local = installed_models(agent_dir)

    def available(name: str) -> bool:
        return name in local or (session_usable and name == session_model)

    return roles.choose(role, candidates, available)


def _configured(
    role: str, primary: str | None, fallback: tuple[str, ...] | None, settings: TinySettings | None
) -> tuple[str | None, tuple[str, ...] | None]:
    if settings is None:
        return primary, fallback
    return (settings.primary(role) if primary is None else primary), (settings.fallback(role) if fallback is None else fallback)


def translate(
    agent_dir: Path,
    language: str,
    text: str,
    *,
    primary: str | None = None,
    fallback: tuple[str, ...] | None = None,
    settings: TinySettings | None = None,
) -> str:
    """Translate English ``text`` into ``language`` on the translate role's local model."""
    model = resolve("translate", agent_dir, primary=primary, fallback=fallback, settings=settings)
    request = tasks.translate_request(language, text)
    with TinyClient(agent_dir, model) as client:
        reply = client.chat(request.messages, prefill=request.prefill, stop=request.stop, max_tokens=request.max_tokens)
    return tasks.parse_translation(language, text, reply)


# --------------------------------------------------------------------- speech, dictation


def client_for(agent_dir: Path, model_id: str) -> TinyClient:
    """A client whose launch tag carries the catalog model's dtype (q4 for models outside it)."""
    known = {m.id: m.dtype for m in catalog.CATALOG}
    return TinyClient(agent_dir, model_id, dtype=known.get(model_id, "q4"))


def speak(
    agent_dir: Path,
    text: str,
    *,
    voice: str = "af_heart",
    speed: float = 1.0,
    primary: str | None = None,
    fallback: tuple[str, ...] | None = None,
    settings: TinySettings | None = None,
) -> bytes:
    """``text`` spoken by the speech role's local model: WAV bytes (24 kHz, 16-bit, mono)."""
    model = resolve("speech", agent_dir, primary=primary, fallback=fallback, settings=settings)
    with client_for(agent_dir, model) as client:
        return client.speak(text, voice=voice, speed=speed)


def transcribe(
    agent_dir: Path,
    wav: bytes,
    *,
    language: str = "en",
    primary: str | None = None,
    fallback: tuple[str, ...] | None = None,
    settings: TinySettings | None = None,
) -> str:
    """The text of a WAV file on the dictation role's model (local only: S9 Dictation 4)."""
    model = resolve("dictation", agent_dir, primary=primary, fallback=fallback, settings=settings)
    with client_for(agent_dir, model) as client:
        return client.transcribe(wav, language).strip()


# ------------------------------------------------------------------------------ judge

LOCAL_PREFIX = "local/"


def local_classifiers() -> tuple[str, ...]:
    """The local provider exposes each text catalog model as classifier ``local/<id>``."""
    return tuple(f"{LOCAL_PREFIX}{m.id}" for m in catalog.CATALOG if m.kind == "text")


def judge_model(
    agent_dir: Path,
    *,
    primary: str | None = None,
    fallback: tuple[str, ...] | None = None,
    provider_classifiers: frozenset[str] = frozenset(),
    settings: TinySettings | None = None,
) -> str:
    """The classifier of a model-less ``models.classify()``: the first model of role judge's
    chain that is an available classifier (an installed local model, as ``local/<id>``, or a
    provider classifier with configured auth); none is Unavailable naming role and chain."""
    primary, fallback = _configured("judge", primary, fallback, settings)
    ids = {m.id for m in catalog.CATALOG}
    candidates = tuple(f"{LOCAL_PREFIX}{n}" if n in ids else n for n in roles.chain("judge", primary, fallback, None))
    local = {f"{LOCAL_PREFIX}{m}" for m in installed_models(agent_dir)}
    offered = set(local_classifiers())

    def available(name: str) -> bool:
        return (name in local and name in offered) or name in provider_classifiers

    return roles.choose("judge", candidates, available)


# ----------------------------------------------------------------------------- titles

TITLE_TOKENS = 24
TITLE_PROMPT = "Write a short title (at most six words) for a conversation that starts with this message. Answer with the title only.\n\n"


def parse_title(reply: str) -> str | None:
    markup = "\"'`*#"
    line = reply.strip().split("\n", 1)[0].strip().strip(markup).strip()
    if line.lower().startswith("title:"):
        line = line[6:].strip().strip(markup).strip()  # "**Title:** ..." leaves the label's closing "**"
    return line[:80] or None


def ask_title(client: TinyClient, first_message: str) -> str | None:
    """The title a tiny model gives the session that starts with ``first_message`` (role tiny,
    S9): one line, so the worker stops at the first line end."""
    return parse_title(client.chat([{"role": "user", "content": TITLE_PROMPT + first_message}], max_tokens=TITLE_TOKENS, stop=["\n"]))


def start_title(
    agent_dir: Path,
    first_message: str,
    on_title: Callable[[str | None], None],
    *,
    generate: bool = True,
    scripted: bool = False,
    top_level: bool = True,
    named: bool = False,
    settings: TinySettings | None = None,
) -> threading.Thread | None:
    """Start titling a session in the background (role tiny): a thread, so the turn never
    waits. No task when titles.generate is false (``generate``, or the settings' value), the
    session is scripted, a child, or named by the user; any failure gives ``on_title(None)``."""
    if not generate or (settings is not None and not settings.titles) or scripted or not top_level or named:
        return None

    def run() -> None:
        title: str | None = None
        try:
            model = resolve("tiny", agent_dir, settings=settings)
            with TinyClient(agent_dir, model) as client:
                title = ask_title(client, first_message)
        except Exception:  # a title is best effort: any failure is no title
            title = None
        on_title(title)

    thread = threading.Thread(target=run, name="eukhe-title", daemon=True)
    thread.start()
    return thread


# ------------------------------------------------------------------------------- eval

# One reference translation per sentence and language (S9 Eval: "chrF = mean (0 to 100) vs one
# reference").
EVAL_REFERENCES: dict[str, tuple[str, ...]] = {
    "German": ("Hallo", "Guten Morgen", "mein Freund", "Vielen Dank.", "Wo ist der Bahnhof?", "Ich hätte gern einen Kaffee, bitte.", "Das Wetter ist heute schön.", "Wie viel kostet das?", "Ich verstehe nicht.", "Bis morgen."),
    "French": ("Bonjour", "Bonjour", "mon ami", "Merci beaucoup.", "Où est la gare ?", "Je voudrais un café, s'il vous plaît.", "Il fait beau aujourd'hui.", "Combien ça coûte ?", "Je ne comprends pas.", "À demain."),
    "Spanish": ("Hola", "Buenos días", "mi amigo", "Muchas gracias.", "¿Dónde está la estación de tren?", "Quisiera un café, por favor.", "Hoy hace buen tiempo.", "¿Cuánto cuesta esto?", "No entiendo.", "Hasta mañana."),
    "Portuguese": ("Olá", "Bom dia", "meu amigo", "Muito obrigado.", "Onde fica a estação de comboios?", "Eu queria um café, por favor.", "O tempo está bom hoje.", "Quanto custa isto?", "Eu não entendo.", "Até amanhã."),
}  # fmt: skip


def run_eval(reply_of: Callable[[str, str], str]) -> dict[str, dict[str, float]]:
    """The seed's eval on any model: ``reply_of(language, sentence)`` gives the raw reply of one
    greedy request built by the new recipe; echoes count replies equal to the input (after the
    prefill and the first line end), chrF is the mean against the reference."""
    results: dict[str, dict[str, float]] = {}
    for language in tasks.EVAL_LANGUAGES:
        echoes = 0
        scores: list[float] = []
        for sentence, reference in zip(tasks.EVAL_SENTENCES, EVAL_REFERENCES[language]):
            reply = reply_of(language, sentence)
            body = reply.removeprefix(f"{language}:").strip(" \t").split("\n", 1)[0].strip()
            echoes += body == sentence
            scores.append(tasks.chrf(body, reference))
        results[language] = {"echoes": echoes, "chrf": sum(scores) / len(scores)}
    return results


def eval_on_local(agent_dir: Path, model_id: str) -> dict[str, dict[str, float]]:
    with TinyClient(agent_dir, model_id) as client:

        def reply_of(language: str, sentence: str) -> str:
            r = tasks.translate_request(language, sentence)
            return client.chat(r.messages, prefill=r.prefill, stop=r.stop, max_tokens=r.max_tokens)

        return run_eval(reply_of)
