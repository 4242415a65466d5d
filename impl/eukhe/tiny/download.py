"""Verified downloads (S9 download, the seed's download.rs): only on the user's command.

1. Files stage in ``<agent dir>/models/tiny/.staging-<id>-<pid>``; the sha256 of each file is
   computed while it is written, and a body longer than the pinned size stops at once.
2. A wrong size or sha256, a broken transfer or an HTTP error stops the download: the staging
   dir is removed and an earlier install is untouched. A staging dir that cannot be removed
   leaves the download's own error, with a warning naming the directory.
3. All correct: one rename to ``<agent dir>/models/tiny/<id>`` (an earlier install is swapped
   out by an atomic exchange, then removed), so the install is complete or absent.

The base URL is a setting (``base_url``; files are fetched from
``<base>/<repo>/resolve/<commit>/<path>``, the Hugging Face layout).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import hashlib
import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import httpx

from eukhe.tiny import paths
from eukhe.tiny.catalog import File, Model

DEFAULT_BASE_URL = "https://huggingface.co"
BASE_URL_ENV = "EUKHE_TINY_MODELS_URL"

Progress = Callable[[str, int, int | None], None]  # file path, bytes so far, its size


class DownloadError(Exception):
    """A download that installed nothing."""


class Unpinned(DownloadError):
    pass


class WrongSize(DownloadError):
    pass


class WrongHash(DownloadError):
    pass


class BrokenTransfer(DownloadError):
    pass


def base_url(setting: str | None = None) -> str:
    return (setting or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")


def url_of(base: str, model: Model, f: File) -> str:
    if f.url is not None:
        return f.url
    return f"{base.rstrip('/')}/{model.repo}/resolve/{model.commit}/{f.path}"


def staging_dir(agent_dir: Path, model_id: str) -> Path:
    return paths.models_dir(agent_dir) / f".staging-{model_id}-{os.getpid()}"


def download(
    agent_dir: Path,
    model: Model,
    *,
    base: str | None = None,
    progress: Progress | None = None,
    warn: Callable[[str], None] | None = None,
    remove: Callable[[Path], None] = shutil.rmtree,
    client: httpx.Client | None = None,
) -> Path:
    """Install ``model`` under ``agent_dir`` and return its dir, or raise a DownloadError
    having installed nothing."""
    if not model.pinned:
        raise Unpinned(f"{model.id}: the catalog pins no commit, size and sha256 for every file; nothing downloaded")
    stage = staging_dir(agent_dir, model.id)
    if stage.exists():
        remove(stage)
    stage.mkdir(parents=True)
    own = client is None
    http = httpx.Client(follow_redirects=True, timeout=httpx.Timeout(60.0)) if client is None else client
    try:
        for f in model.files:
            _fetch(http, url_of(base_url(base), model, f), stage / f.path, f, progress)
        (stage / "engine.json").write_text(json.dumps({"kind": model.engine}), encoding="utf-8")
    except BaseException as error:
        try:
            remove(stage)
        except OSError as removal:
            if warn is not None:
                warn(f"warning: could not remove the staging dir {stage}: {removal}")
        if isinstance(error, DownloadError):
            raise
        if isinstance(error, (httpx.HTTPError, OSError)):
            raise BrokenTransfer(f"{model.id}: transfer failed: {error}") from error
        raise
    finally:
        if own:
            http.close()
    target = paths.model_dir(agent_dir, model.id)
    _install(stage, target, remove, warn)
    return target


def _fetch(http: httpx.Client, url: str, dest: Path, f: File, progress: Progress | None) -> None:
    assert f.size is not None and f.sha256 is not None
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    written = 0
    with http.stream("GET", url) as response:
        if response.status_code != 200:
            raise BrokenTransfer(f"{url}: HTTP {response.status_code}")
        with open(dest, "wb") as out:
            for chunk in response.iter_bytes(1 << 16):
                written += len(chunk)
                if written > f.size:
                    raise WrongSize(f"{f.path}: more than the pinned {f.size} bytes")
                digest.update(chunk)
                out.write(chunk)
                if progress is not None:
                    progress(f.path, written, f.size)
            out.flush()
            os.fsync(out.fileno())
    if written != f.size:
        raise WrongSize(f"{f.path}: {written} bytes, the catalog pins {f.size}")
    if digest.hexdigest() != f.sha256:
        raise WrongHash(f"{f.path}: sha256 {digest.hexdigest()}, the catalog pins {f.sha256}")


_RENAME_EXCHANGE = 2


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (renameat2 RENAME_EXCHANGE); False where unsupported."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    renameat2 = getattr(libc, "renameat2", None)
    if renameat2 is None:
        return False
    at_fdcwd = -100
    result = renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), _RENAME_EXCHANGE)
    return bool(result == 0)


def _install(stage: Path, target: Path, remove: Callable[[Path], None], warn: Callable[[str], None] | None) -> None:
    if not target.exists():
        os.rename(stage, target)
        return
    if not _exchange(stage, target):
        old = target.with_name(f".old-{target.name}-{os.getpid()}")
        os.rename(target, old)
        os.rename(stage, target)
        stage = old
    try:
        remove(stage)  # the earlier install, now at the staging path
    except OSError as error:
        if warn is not None:
            warn(f"warning: could not remove the replaced install at {stage}: {error}")
