"""Tiny model commands (inference.md S9).

    eukhe tiny-models list                         installed, missing, incomplete
    eukhe tiny-models download ID|all [--base-url URL]
    eukhe translate LANGUAGE TEXT
    eukhe translate-eval MODEL                     echoes and chrF of the seed's eval
    eukhe say TEXT [--out F.wav] [--voice V] [--speed S]   the speech role's model speaks
    eukhe transcribe F.wav [--language L]          the dictation role's model reads a WAV file
    eukhe tiny-worker ID --backend onnx --agent-dir DIR   (hidden: started by clients)

Bad input (an unknown model id) exits 2; a download that failed (its typed error, one line)
exits 1.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from eukhe import paths as agent_paths
from eukhe.cli import UsageError


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
    for model in catalog.CATALOG:
        print(f"{model.id}\t{catalog.install_state(agent_dir, model)}\t{model.kind}")
    return 0


def run_download(args: argparse.Namespace) -> int:
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

    from eukhe.tiny import catalog, download

    agent_dir = agent_paths.agent_dir(args.agent_dir)
    try:
        chosen = list(catalog.CATALOG) if args.model_id == "all" else [catalog.find(args.model_id)]
    except catalog.UnknownModel as error:
        raise UsageError(f"eukhe tiny-models download: {error}") from error
    from eukhe.tiny.settings import TinySettings

    base = args.base_url or TinySettings.load(agent_dir, Path.cwd()).base_url
    status = 0
    with Progress(TextColumn("{task.description}"), BarColumn(), DownloadColumn(), transient=True, disable=not sys.stderr.isatty()) as bar:
        for model in chosen:
            task = bar.add_task(model.id, total=None)

            def moved(path: str, done: int, size: int | None, task: Any = task, model: catalog.Model = model) -> None:
                bar.update(task, description=f"{model.id} {path}", completed=done, total=size)

            try:
                where = download.download(agent_dir, model, base=base, progress=moved, warn=lambda w: print(w, file=sys.stderr))
            except download.DownloadError as error:
                print(f"eukhe tiny-models download: {type(error).__name__}: {str(error).splitlines()[0]}", file=sys.stderr)
                status = 1
                continue
            print(f"{model.id}: installed in {where}")
    return status


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
        print(f"eukhe translate: {name}: {str(error).splitlines()[0]}", file=sys.stderr)
        return 1
    return 0


def run_translate_eval(args: argparse.Namespace) -> int:
    import json

    from eukhe.tiny import catalog, uses
    from eukhe.tiny.client import TinyError

    agent_dir = agent_paths.agent_dir(args.agent_dir)
    if args.model_id not in uses.installed_models(agent_dir):
        known = {m.id for m in catalog.CATALOG}
        if args.model_id not in known:
            raise UsageError(f"eukhe translate-eval: unknown tiny model {args.model_id!r}")
        print(f"eukhe translate-eval: {args.model_id} is not installed", file=sys.stderr)
        return 1
    try:
        print(json.dumps(uses.eval_on_local(agent_dir, args.model_id), sort_keys=True))
    except TinyError as error:
        print(f"eukhe translate-eval: {type(error).__name__}: {str(error).splitlines()[0]}", file=sys.stderr)
        return 1
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
    player = None if args.out else next((p for p in PLAYERS if shutil.which(p)), None)
    if not args.out and player is None:
        print(f"eukhe say: no audio player on PATH ({', '.join(PLAYERS)}); write a file with --out F.wav", file=sys.stderr)
        return 1
    agent_dir = agent_paths.agent_dir(args.agent_dir)
    try:
        wav = uses.speak(agent_dir, args.text, voice=args.voice, speed=args.speed, settings=_settings(agent_dir))
    except (roles.Unavailable, TinyError) as error:
        print(f"eukhe say: {type(error).__name__}: {str(error).splitlines()[0]}", file=sys.stderr)
        return 1
    if args.out:
        try:
            Path(args.out).write_bytes(wav)
        except OSError as error:
            print(f"eukhe say: cannot write {args.out}: {error.strerror or error}", file=sys.stderr)
            return 1
        return 0
    assert player is not None
    with tempfile.NamedTemporaryFile(suffix=".wav") as out:
        out.write(wav)
        out.flush()
        played = subprocess.run([player, out.name], capture_output=True, text=True, check=False)
    if played.returncode != 0:
        print(f"eukhe say: {player} failed: {played.stderr.strip()}", file=sys.stderr)
        return 1
    return 0


def run_transcribe(args: argparse.Namespace) -> int:
    from eukhe.tiny import roles, uses
    from eukhe.tiny.client import TinyError

    try:
        wav = Path(args.file).read_bytes()
    except OSError as error:
        raise UsageError(f"eukhe transcribe: cannot read {args.file}: {error.strerror or error}") from error
    agent_dir = agent_paths.agent_dir(args.agent_dir)
    try:
        text = uses.transcribe(agent_dir, wav, language=args.language, settings=_settings(agent_dir))
    except (roles.Unavailable, TinyError) as error:
        print(f"eukhe transcribe: {type(error).__name__}: {str(error).splitlines()[0]}", file=sys.stderr)
        return 1
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
