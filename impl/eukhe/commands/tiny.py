"""Tiny model commands (inference.md S9).

    eukhe tiny-models list                         installed, missing, incomplete
    eukhe tiny-models download ID|all [--base-url URL]
    eukhe translate LANGUAGE TEXT
    eukhe translate-eval MODEL                     echoes and chrF of the seed's eval
    eukhe say TEXT [--out F.wav] [--voice V] [--speed S]   the speech role's model speaks
    eukhe transcribe F.wav [--language L]          the dictation role's model reads a WAV file
    eukhe tiny-worker ID --backend onnx --agent-dir DIR   (hidden: started by clients)

Bad input exits 2, checked before any model is looked up: an unknown model id, a --base-url
(or tinyModels.baseUrl, EUKHE_TINY_MODELS_URL) that is not an http(s) URL with a host, a --voice
that is not a voice file's name, a --out in no directory, a file to transcribe that cannot be read
or is not a PCM WAV file. A fault of the environment exits 1: a download that failed (its typed
error, one line), no model for the role (Unavailable), an agent dir that is not a directory.
Paths (the WAV file, --out) may hold any bytes.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Any

from eukhe import paths as agent_paths
from eukhe.cli import EnvironmentFault, UsageError, clip, require_dir, show_path


def register(sub: Any) -> None:
    models = sub.add_parser("tiny-models", help="local tiny models: list, download (S9)")
    verbs = models.add_subparsers(dest="verb", required=True, parser_class=type(models))
    verbs.add_parser("list", help="each catalog model: installed, missing or incomplete").set_defaults(run=run_list)
    get = verbs.add_parser("download", help="download and verify a catalog model, or all")
    get.add_argument("model_id", help="a catalog model id, or all")
    get.add_argument("--base-url", help="where files are fetched (default: the setting tinyModels.baseUrl, else EUKHE_TINY_MODELS_URL, else https://huggingface.co)")
    get.set_defaults(run=run_download)

    translate = sub.add_parser("translate", help="translate English text with the translate role's local model (S9)")
    translate.add_argument("language", help="the target language by name, e.g. German")
    translate.add_argument("text", help="the English text")
    translate.set_defaults(run=run_translate)

    evaluate = sub.add_parser("translate-eval", help="the seed's translation eval (echoes, chrF) on a local model")
    evaluate.add_argument("model_id", help="an installed local model id")
    evaluate.set_defaults(run=run_translate_eval)

    say = sub.add_parser("say", help="speak text with the speech role's local model (S9)")
    say.add_argument("text", help="the text to speak")
    say.add_argument("--out", help="write the speech to this WAV file instead of playing it")
    say.add_argument("--voice", default="af_heart", help="the voice (a file voices/<voice>.bin of the model)")
    say.add_argument("--speed", type=float, default=1.0, help="the speaking speed (1 is normal)")
    say.set_defaults(run=run_say)

    transcribe = sub.add_parser("transcribe", help="transcribe a WAV file with the dictation role's local model (S9)")
    transcribe.add_argument("file", help="a PCM WAV file")
    transcribe.add_argument("--language", default="en", help="the spoken language's code, e.g. en")
    transcribe.set_defaults(run=run_transcribe)

    worker = sub.add_parser("tiny-worker")
    worker.add_argument("model_id", help="the local model id this worker serves")
    worker.add_argument("--backend", required=True, choices=["onnx"], help="the inference backend")
    worker.add_argument("--agent-dir", dest="worker_agent_dir", required=True, help="the agent dir whose run/tiny/ holds the socket (never taken from the environment)")
    worker.add_argument("--device", default="cpu", choices=["cpu"], help="the device the model runs on")
    worker.add_argument("--dtype", default="q4", help="the weights' data type, part of the launch tag")
    worker.set_defaults(run=run_worker)


def _settings(agent_dir: Path) -> Any:
    """The tiny settings of the agent dir and the working dir's project (eukhe.tiny.settings)."""
    from eukhe.tiny.settings import TinySettings

    return TinySettings.load(agent_dir, Path.cwd())


def run_list(args: argparse.Namespace) -> int:
    from eukhe.tiny import catalog

    agent_dir = agent_paths.agent_dir(args.agent_dir)
    require_dir(agent_dir, "the agent dir")  # a regular file there: a fault of the environment, not "missing" models
    for model in catalog.CATALOG:
        print(f"{model.id}\t{catalog.install_state(agent_dir, model)}\t{model.kind}")
    return 0


def run_download(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, DownloadColumn, TextColumn

    from eukhe.commands.progress_bar import terminal_bar
    from eukhe.tiny import catalog, download

    agent_dir = agent_paths.agent_dir(args.agent_dir)
    try:
        chosen = list(catalog.CATALOG) if args.model_id == "all" else [catalog.find(args.model_id)]
    except catalog.UnknownModel as error:
        raise UsageError(f"eukhe tiny-models download: {error}") from error
    from eukhe.tiny.settings import TinySettings

    base = args.base_url or TinySettings.load(agent_dir, Path.cwd()).base_url
    source = "--base-url" if args.base_url else "the setting tinyModels.baseUrl" if base else download.BASE_URL_ENV
    check_base_url(base or os.environ.get(download.BASE_URL_ENV) or None, source)
    status = 0
    with terminal_bar(TextColumn("{task.description}"), BarColumn(), DownloadColumn()) as bar:
        for model in chosen:
            task = bar.add_task(model.id, total=None)

            def moved(path: str, done: int, size: int | None, task: Any = task, model: catalog.Model = model) -> None:
                bar.update(task, description=f"{model.id} {path}", completed=done, total=size)

            try:
                where = download.download(agent_dir, model, base=base, progress=moved, warn=lambda w: print(w, file=sys.stderr))
            except download.DownloadError as error:
                print(clip(f"eukhe tiny-models download: {type(error).__name__}: {_first_line(error)}"), file=sys.stderr)
                status = 1
                continue
            print(f"{model.id}: installed in {where}")
    return status


def check_base_url(url: str | None, where: str) -> None:
    """A download base URL is an http or https URL with a host and no spaces (UsageError naming
    ``where`` it came from); None: the catalog's own hosts."""
    from urllib.parse import urlsplit

    if url is None:
        return
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - a port that is not a number raises here
        good = parts.scheme in ("http", "https") and bool(parts.hostname)
    except ValueError:
        good = False
    if not good or any(char.isspace() or not char.isprintable() for char in url):
        raise UsageError(f"eukhe tiny-models download: {where} {url[:200]!r} is not an http or https URL with a host")


def run_translate(args: argparse.Namespace) -> int:
    from eukhe.tiny import roles, tasks, uses
    from eukhe.tiny.client import TinyError

    if not args.language.strip() or not args.text.strip():
        raise UsageError("eukhe translate: the language and the text must not be empty")
    agent_dir = agent_paths.agent_dir(args.agent_dir)
    try:
        print(uses.translate(agent_dir, args.language.strip(), args.text, settings=_settings(agent_dir)))
    except (roles.Unavailable, tasks.TranslationError, TinyError) as error:
        name = f"TranslationError::{type(error).__name__}" if isinstance(error, tasks.TranslationError) else type(error).__name__
        raise EnvironmentFault(f"eukhe translate: {name}: {_first_line(error)}") from None
    return 0


def _first_line(error: BaseException) -> str:
    lines = str(error).splitlines()
    return lines[0] if lines else type(error).__name__


def run_translate_eval(args: argparse.Namespace) -> int:
    import json

    from eukhe.tiny import catalog, uses
    from eukhe.tiny.client import TinyError

    agent_dir = agent_paths.agent_dir(args.agent_dir)
    if args.model_id not in uses.installed_models(agent_dir):
        known = {m.id for m in catalog.CATALOG}
        if args.model_id not in known:
            raise UsageError(f"eukhe translate-eval: unknown tiny model {args.model_id!r}")
        raise EnvironmentFault(f"eukhe translate-eval: {args.model_id} is not installed")
    try:
        print(json.dumps(uses.eval_on_local(agent_dir, args.model_id), sort_keys=True))
    except TinyError as error:
        raise EnvironmentFault(f"eukhe translate-eval: {type(error).__name__}: {_first_line(error)}") from None
    return 0


PLAYERS = ("pw-play", "paplay", "aplay")


def run_say(args: argparse.Namespace) -> int:
    import math
    import shutil
    import subprocess
    import tempfile

    from eukhe.tiny import roles, uses
    from eukhe.tiny.client import TinyError

    if not args.text.strip():
        raise UsageError("eukhe say: the text must not be empty")
    if not math.isfinite(args.speed) or args.speed <= 0:
        raise UsageError(f"eukhe say: --speed must be a positive number, got {args.speed}")
    if not args.voice or "/" in args.voice or args.voice.startswith(".") or not args.voice.isprintable():
        raise UsageError(f"eukhe say: --voice {args.voice!r} is not a voice's name (a file voices/<voice>.bin of the model: no '/', not starting with '.')")
    out_file = Path(args.out) if args.out else None
    if out_file is not None:
        if out_file.is_dir():
            raise UsageError(f"eukhe say: --out {show_path(out_file)} is a directory; name a .wav file")
        if not out_file.parent.is_dir():
            raise UsageError(f"eukhe say: --out {show_path(out_file)}: no directory {show_path(out_file.parent)}")
    player = None if args.out else next((p for p in PLAYERS if shutil.which(p)), None)
    if not args.out and player is None:
        raise EnvironmentFault(f"eukhe say: no audio player on PATH ({', '.join(PLAYERS)}); write a file with --out F.wav")
    agent_dir = agent_paths.agent_dir(args.agent_dir)
    try:
        wav = uses.speak(agent_dir, args.text, voice=args.voice, speed=args.speed, settings=_settings(agent_dir))
    except (roles.Unavailable, TinyError) as error:
        raise EnvironmentFault(f"eukhe say: {type(error).__name__}: {_first_line(error)}") from None
    if out_file is not None:
        try:
            out_file.write_bytes(wav)
        except OSError as error:
            raise EnvironmentFault(f"eukhe say: cannot write {show_path(out_file)}: {error.strerror or error}") from None
        return 0
    assert player is not None
    with tempfile.NamedTemporaryFile(suffix=".wav") as out:
        out.write(wav)
        out.flush()
        played = subprocess.run([player, out.name], capture_output=True, text=True, check=False)
    if played.returncode != 0:
        raise EnvironmentFault(f"eukhe say: {player} failed: {played.stderr.strip()}")
    return 0


def run_transcribe(args: argparse.Namespace) -> int:
    from eukhe.tiny import roles, uses
    from eukhe.tiny.client import TinyError

    from eukhe.tiny.audio import AudioError, read_wav

    shown = show_path(args.file)
    try:
        wav = Path(args.file).read_bytes()
    except OSError as error:
        raise UsageError(f"eukhe transcribe: cannot read {shown}: {error.strerror or error}") from None
    try:
        read_wav(wav)  # what the worker will read: a file it cannot is bad input, found before any model is looked up
    except AudioError as error:
        raise UsageError(f"eukhe transcribe: {shown}: {_first_line(error)}") from None
    agent_dir = agent_paths.agent_dir(args.agent_dir)
    try:
        text = uses.transcribe(agent_dir, wav, language=args.language, settings=_settings(agent_dir))
    except (roles.Unavailable, TinyError) as error:
        raise EnvironmentFault(f"eukhe transcribe: {type(error).__name__}: {_first_line(error)}") from None
    print(text)
    return 0


def run_worker(args: argparse.Namespace) -> int:
    from eukhe.tiny import worker

    if not args.model_id or "/" in args.model_id or args.model_id.startswith("."):
        raise UsageError(f"eukhe tiny-worker: bad model id {args.model_id!r}")
    agent_dir = Path(args.worker_agent_dir)
    if not agent_dir.is_absolute():
        raise UsageError(f"eukhe tiny-worker: --agent-dir must be absolute, got {args.worker_agent_dir!r}")
    return worker.run(agent_dir, args.model_id, args.device, args.dtype)
