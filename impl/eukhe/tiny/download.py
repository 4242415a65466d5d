"""Verified downloads (S9 download, the seed's download.rs): only on the user's command.

1. Files stage in ``<agent dir>/models/tiny/.staging-<id>-<pid>``; the sha256 of each file is
   computed while it is written, and a body longer than the pinned size stops at once. First,
   the staging dirs of processes that are gone (a download killed by SIGKILL) are swept
   (``paths.sweep``); a live process's are left alone. A staging dir that cannot be made (a file
   in its place, a models dir that cannot be written) is ``StagingFailed``, with nothing touched.
2. A wrong size or sha256, a broken transfer or an HTTP error stops the download: the staging
   dir is removed and an earlier install is untouched. A staging dir that cannot be removed
   leaves the download's own error, with a warning naming the directory.
   A transfer that drops mid-file is resumed (up to ATTEMPTS requests a file) with an HTTP
   Range for the bytes not yet written: a 206 whose Content-Range starts there is appended, and
   the digest goes on over it, so the whole file is checked against its sha256; a server that
   ignores the Range (200) sends the whole file again, written from its start.
3. All correct: one rename to ``<agent dir>/models/tiny/<id>`` that never replaces (renameat2
   RENAME_NOREPLACE), so the install is complete or absent. Where an install is there already
   (an earlier one, or the winner of two first installs racing, which appeared after this
   download began) it is swapped out by an atomic exchange, then removed: the loser of a race
   succeeds too, and nothing is left behind. A rename that fails is ``InstallFailed``, the
   staging removed.

Where files come from: a mirror, when one is set (``base``: the command's ``--base-url``, else
the setting ``tinyModels.baseUrl``; else ``EUKHE_TINY_MODELS_URL``; the default,
https://huggingface.co, is no mirror). Without a mirror each file comes from its own origin: ``https://huggingface.co/<repo>/resolve/<commit>/
<path>``, or, for a file of a GitHub repository (the misaki lexicon),
``https://raw.githubusercontent.com/<repo>/<commit>/<path>``. With one, every file, whatever its
origin, is fetched from ``<mirror>/<repo>/resolve/<commit>/<path>`` (the Hugging Face layout).
These two origins are the only addresses written in the tiny models' code.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import hashlib
import json
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import httpx

from eukhe.tiny import paths
from eukhe.tiny.catalog import File, Model

DEFAULT_BASE_URL = "https://huggingface.co"
BASE_URL_ENV = "EUKHE_TINY_MODELS_URL"
# each origin's own URL of a file, used when no mirror is set
ORIGINS = {
    "huggingface": DEFAULT_BASE_URL + "/{repo}/resolve/{commit}/{path}",
    "github": "https://raw.githubusercontent.com/{repo}/{commit}/{path}",
}
ATTEMPTS = 4  # requests for one file whose transfer keeps dropping

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


class StagingFailed(DownloadError):
    """The staging dir could not be made (a file in its place, a dir that cannot be written)."""


class InstallFailed(DownloadError):
    """The verified staging dir could not be renamed into place (it was removed)."""


def base_url(setting: str | None = None) -> str:
    return (setting or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL).rstrip("/")


def url_of(base: str | None, model: Model, f: File) -> str:
    """The URL of ``f``: from the mirror ``base`` when one is set (any base but the default),
    else from the file's own origin."""
    if f.origin is not None:
        host, repo, commit, path = f.origin.host, f.origin.repo, f.origin.commit, f.origin.path
    else:
        host, repo, commit, path = "huggingface", model.repo, str(model.commit), f.path
    mirror = None if base is None else base.rstrip("/")
    if mirror is None or mirror == DEFAULT_BASE_URL:
        return ORIGINS[host].format(repo=repo, commit=commit, path=path)
    return f"{mirror}/{repo}/resolve/{commit}/{path}"


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
        raise Unpinned(
            f"{model.id}: not pinned: the catalog has no commit, size and sha256 for its files (no pin was found "
            "from a public source in the environment this build was made in, and none is guessed); nothing downloaded"
        )
    paths.sweep(agent_dir, warn=warn)
    stage = staging_dir(agent_dir, model.id)
    try:
        if stage.exists():
            remove(stage)
        stage.mkdir(parents=True)
    except OSError as error:  # a file in its place, a dir that cannot be written: a typed error, nothing touched
        raise StagingFailed(f"{model.id}: could not make the staging dir {stage}: {error}") from error
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
    try:
        _install(stage, target, remove, warn)
    except OSError as error:
        try:
            remove(stage)
        except FileNotFoundError:
            pass
        except OSError as removal:
            if warn is not None:
                warn(f"warning: could not remove the staging dir {stage}: {removal}")
        raise InstallFailed(f"{model.id}: could not rename {stage} to {target}: {error}") from error
    return target


_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+|\*)")


class _Partial:
    """A file being written: its open file, the bytes written so far and their sha256."""

    def __init__(self, out: BinaryIO) -> None:
        self.out = out
        self.digest = hashlib.sha256()
        self.written = 0

    def restart(self) -> None:
        self.out.seek(0)
        self.out.truncate()
        self.digest = hashlib.sha256()
        self.written = 0


def _fetch(http: httpx.Client, url: str, dest: Path, f: File, progress: Progress | None) -> None:
    """Fetch ``url`` to ``dest``, resuming a dropped transfer with a Range (see the module)."""
    assert f.size is not None and f.sha256 is not None
    dest.parent.mkdir(parents=True, exist_ok=True)
    with open(dest, "wb") as out:
        part = _Partial(out)
        attempt = 1
        while True:  # left by the break of a whole transfer or by the error of the last attempt
            try:
                _attempt(http, url, f, part, progress)
                break
            except httpx.TransportError as error:  # dropped: the next request asks for the rest
                if attempt == ATTEMPTS:
                    raise BrokenTransfer(f"{url}: transfer failed after {ATTEMPTS} attempts: {error}") from error
                attempt += 1
        out.flush()
        os.fsync(out.fileno())
    if part.written != f.size:
        raise WrongSize(f"{f.path}: {part.written} bytes, the catalog pins {f.size}")
    digest = part.digest  # of the whole file, every attempt's bytes
    if digest.hexdigest() != f.sha256:
        raise WrongHash(f"{f.path}: sha256 {digest.hexdigest()}, the catalog pins {f.sha256}")


def _attempt(http: httpx.Client, url: str, f: File, part: _Partial, progress: Progress | None) -> None:
    """One request, from byte ``part.written`` on (a Range) when some are written already."""
    assert f.size is not None
    # identity: the Range's offsets are then the file's own bytes
    headers = {"Accept-Encoding": "identity", **({"Range": f"bytes={part.written}-"} if part.written else {})}
    with http.stream("GET", url, headers=headers) as response:
        if part.written and response.status_code == 206:
            found = _CONTENT_RANGE.fullmatch(response.headers.get("Content-Range", "").strip())
            if found is None or int(found.group(1)) != part.written or found.group(3) not in ("*", str(f.size)):
                raise BrokenTransfer(f"{url}: a 206 for bytes {part.written}- with Content-Range {response.headers.get('Content-Range')!r}")
        elif response.status_code == 200:
            if part.written:  # the server ignored the Range: the whole file again, from its start
                part.restart()
        else:
            raise BrokenTransfer(f"{url}: HTTP {response.status_code}")
        for chunk in response.iter_bytes():  # as they arrive: a drop keeps every byte that came
            if part.written + len(chunk) > f.size:
                raise WrongSize(f"{f.path}: more than the pinned {f.size} bytes")
            part.out.write(chunk)
            part.digest.update(chunk)
            part.written += len(chunk)
            if progress is not None:
                progress(f.path, part.written, f.size)


_AT_FDCWD = -100
_RENAME_NOREPLACE = 1
_RENAME_EXCHANGE = 2


def _renameat2(a: Path, b: Path, flags: int) -> int | None:
    """renameat2(2): 0, or the errno of its failure; None where libc has no renameat2."""
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
    call = getattr(libc, "renameat2", None)
    if call is None:
        return None
    if call(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), flags) == 0:
        return 0
    return ctypes.get_errno()


def _exchange(a: Path, b: Path) -> bool:
    """Swap two paths atomically (renameat2 RENAME_EXCHANGE); False where unsupported or failed."""
    return _renameat2(a, b, _RENAME_EXCHANGE) == 0


def _rename_noreplace(a: Path, b: Path) -> None:
    """Rename ``a`` to ``b`` unless ``b`` exists (an OSError with EEXIST or ENOTEMPTY)."""
    code = _renameat2(a, b, _RENAME_NOREPLACE)
    if code == 0:
        return
    if code is not None and code not in (errno.EINVAL, errno.ENOSYS):  # EINVAL: the file system lacks the flag
        raise OSError(code, os.strerror(code), str(b))
    os.rename(a, b)  # a directory never replaces a non-empty one (every install has engine.json)


def _install(stage: Path, target: Path, remove: Callable[[Path], None], warn: Callable[[str], None] | None) -> None:
    """Rename the verified ``stage`` to ``target`` (see the module, rule 3); OSError when it cannot."""

    def drop(what: Path, name: str) -> None:
        try:
            remove(what)
        except OSError as error:
            if warn is not None:
                warn(f"warning: could not remove {name} at {what}: {error}")

    for _ in range(3):
        try:
            _rename_noreplace(stage, target)
            return
        except OSError as error:
            if error.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
        # an install is there: an earlier one, or the winner of a race of two first installs
        if _exchange(stage, target):
            drop(stage, "the replaced install")  # the earlier install, now at the staging path
            return
        old = target.with_name(f".old-{target.name}-{os.getpid()}")
        try:
            os.rename(target, old)
        except FileNotFoundError:  # it went away meanwhile: rename again
            continue
        try:
            _rename_noreplace(stage, target)
        except OSError:
            os.rename(old, target)  # put the earlier install back
            raise
        drop(old, "the replaced install")
        return
    raise OSError(errno.EEXIST, "installs kept appearing at the target while this one was renamed", str(target))
