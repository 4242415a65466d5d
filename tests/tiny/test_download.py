"""Verified downloads against a real HTTP server on loopback (the seed's download::tests: bad
sha256, wrong size, broken transfer install nothing; partial install replaced only on success;
unremovable staging keeps the download's own error)."""

from __future__ import annotations

import errno
import hashlib
import http.server
import select
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from eukhe.tiny import catalog, download, paths
from eukhe.tiny.catalog import File, Model
from tests.tiny.conftest import LIMIT, loopback_http

GOOD = {"onnx/model.onnx": b"graph-bytes" * 5000, "tokenizer.json": b'{"version":"1.0"}'}


class _Handler(http.server.BaseHTTPRequestHandler):
    routes: dict[str, tuple[str, bytes]] = {}
    seen: list[tuple[str, str | None]] = []  # (path, Range header) of each GET, in order

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.seen.append((self.path, self.headers.get("Range")))
        mode, body = self.routes.get(self.path, ("404", b""))
        if mode == "404":
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if mode in ("drop-once", "drop-once-no-range", "drop-once-bad-range"):
            # the first GET drops the connection half way; later ones serve the rest (206 for a
            # Range), or, with no-range, ignore the Range and send the whole file (200), or, with
            # bad-range, send the rest of other bytes (a 206 that lies: the sha256 must catch it)
            first = sum(1 for path, _ in self.seen if path == self.path) == 1
            asked = self.headers.get("Range")
            if first:
                mode = "cut"
            elif asked and mode != "drop-once-no-range":
                start = int(asked.removeprefix("bytes=").rstrip("-"))
                rest = body[start:] if mode == "drop-once" else bytes(len(body) - start)
                self.send_response(206)
                self.send_header("Content-Range", f"bytes {start}-{len(body) - 1}/{len(body)}")
                self.send_header("Content-Length", str(len(rest)))
                self.end_headers()
                self.wfile.write(rest)
                return
            else:
                mode = "ok"
        self.send_response(200)
        if mode == "slow":
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for i in range(0, len(body), 97):
                piece = body[i : i + 97]
                self.wfile.write(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
                self.wfile.flush()
            self.wfile.write(b"0\r\n\r\n")
            return
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if mode == "cut":
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(body)


@pytest.fixture
def server() -> Iterator[str]:
    yield from loopback_http(_Handler)


def _model(files: dict[str, bytes] = GOOD) -> Model:
    pinned = tuple(File(p, len(b), hashlib.sha256(b).hexdigest()) for p, b in files.items())
    return Model("test-model", "text", "org/test-model", "c0ffee", pinned, "echo")


def _serve(modes: dict[str, str], files: dict[str, bytes] = GOOD) -> None:
    _Handler.routes = {}
    _Handler.seen = []
    for path, body in files.items():
        mode = modes.get(path, "ok")
        served = body[::-1] if mode == "wrong" else body + b"!" if mode == "long" else body[:-1] if mode == "short" else body
        _Handler.routes[f"/org/test-model/resolve/c0ffee/{path}"] = ("ok" if mode in ("wrong", "long", "short") else mode, served)


def _earlier_install(agent_dir: Path) -> Path:
    where = paths.model_dir(agent_dir, "test-model")
    where.mkdir(parents=True)
    (where / "tokenizer.json").write_bytes(b"earlier")  # partial: the graph is missing
    return where


def _tree(where: Path) -> dict[str, bytes]:
    return {str(p.relative_to(where)): p.read_bytes() for p in sorted(where.rglob("*")) if p.is_file()}


def test_download_installs_with_one_rename(tmp_path: Path, server: str) -> None:
    _serve({"onnx/model.onnx": "slow"})
    seen: list[int] = []
    where = download.download(tmp_path, _model(), base=server, progress=lambda p, n, s: seen.append(n))
    assert _tree(where) == {**GOOD, "engine.json": b'{"kind": "echo"}'}
    assert seen and seen[-1] == len(GOOD["tokenizer.json"])
    assert catalog.install_state(tmp_path, _model()) == catalog.INSTALLED
    assert [p.name for p in paths.models_dir(tmp_path).iterdir()] == ["test-model"]


@pytest.mark.parametrize(
    "mode, error",
    [
        ("wrong", download.WrongHash),
        ("long", download.WrongSize),
        ("short", download.WrongSize),
        ("cut", download.BrokenTransfer),
        ("404", download.BrokenTransfer),
    ],
)
def test_bad_download_installs_nothing_and_leaves_an_earlier_install_untouched(
    tmp_path: Path, server: str, mode: str, error: type[Exception]
) -> None:
    earlier = _earlier_install(tmp_path)
    before = _tree(earlier)
    _serve({"onnx/model.onnx": mode})
    with pytest.raises(error):
        download.download(tmp_path, _model(), base=server)
    assert _tree(earlier) == before
    assert [p.name for p in paths.models_dir(tmp_path).iterdir()] == ["test-model"]  # staging removed
    assert catalog.install_state(tmp_path, _model()) == catalog.INCOMPLETE


def test_partial_install_replaced_only_on_success(tmp_path: Path, server: str) -> None:
    _earlier_install(tmp_path)
    _serve({})
    where = download.download(tmp_path, _model(), base=server)
    assert _tree(where)["tokenizer.json"] == GOOD["tokenizer.json"]
    assert [p.name for p in paths.models_dir(tmp_path).iterdir()] == ["test-model"]


def test_unremovable_staging_keeps_the_downloads_own_error(tmp_path: Path, server: str) -> None:
    _serve({"onnx/model.onnx": "wrong"})
    warnings: list[str] = []

    def refuse(path: Path) -> None:
        raise PermissionError(13, "Permission denied", str(path))

    with pytest.raises(download.WrongHash):
        download.download(tmp_path, _model(), base=server, warn=warnings.append, remove=refuse)
    stage = download.staging_dir(tmp_path, "test-model")
    assert len(warnings) == 1 and str(stage) in warnings[0]
    assert not paths.model_dir(tmp_path, "test-model").exists()


def test_the_catalog_refuses_unpinned_files(tmp_path: Path) -> None:
    for model in catalog.CATALOG:
        if model.pinned:
            continue
        with pytest.raises(download.Unpinned):
            download.download(tmp_path, model, base="http://127.0.0.1:9")
    assert not paths.models_dir(tmp_path).exists()
    assert {m.id for m in catalog.CATALOG} == {"lfm2.5-230m", "lfm2.5-350m", "whisper-base", "whisper-small", "kokoro"}
    assert catalog.install_state(tmp_path, catalog.find("kokoro")) == catalog.MISSING
    with pytest.raises(catalog.UnknownModel):
        catalog.find("gpt-9")


def test_cli_list_and_download_errors(tmp_path: Path) -> None:
    run = [sys.executable, "-m", "eukhe", "--agent-dir", str(tmp_path), "tiny-models"]
    listed = subprocess.run([*run, "list"], capture_output=True, text=True, timeout=60)
    assert listed.returncode == 0
    assert [line.split("\t")[:2] for line in listed.stdout.splitlines()][0] == ["lfm2.5-230m", "missing"]
    unknown = subprocess.run([*run, "download", "gpt-9"], capture_output=True, text=True, timeout=60)
    assert unknown.returncode == 2 and len(unknown.stderr.strip().splitlines()) == 1 and "gpt-9" in unknown.stderr
    unpinned = subprocess.run([*run, "download", "whisper-base", "--base-url", "http://127.0.0.1:9"], capture_output=True, text=True, timeout=60)
    assert unpinned.returncode == 1 and unpinned.stderr.strip().splitlines()[0].startswith("eukhe tiny-models download: Unpinned")


def test_the_catalog_pins_kokoro_from_its_cited_source() -> None:
    """kokoro is pinned (commit, size, sha256 of each file; catalog.py names the source); the
    other models are not, and say so by refusing to download."""
    kokoro = catalog.find("kokoro")
    assert kokoro.pinned and kokoro.commit is not None and len(kokoro.commit) == 40
    assert all(f.size and f.sha256 and len(f.sha256) == 64 for f in kokoro.files)
    assert {m.id for m in catalog.CATALOG if not m.pinned} == {"lfm2.5-230m", "lfm2.5-350m", "whisper-base", "whisper-small"}
    model = kokoro.files[0]
    assert download.url_of("http://x/", kokoro, model) == f"http://x/{kokoro.repo}/resolve/{kokoro.commit}/{model.path}"


# ------------------------------------------------------------ hardening (issue 30, tiny models)


def _ended_process() -> int:
    """The pid of a process that has ended (and was reaped)."""
    process = subprocess.Popen([sys.executable, "-c", "pass"])
    process.wait(timeout=60)
    return process.pid


def _live_process() -> subprocess.Popen[bytes]:
    """A process that lives until its stdin closes."""
    return subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)


def _stage_of(agent_dir: Path, model_id: str, pid: int) -> Path:
    stage = paths.models_dir(agent_dir) / f".staging-{model_id}-{pid}"
    (stage / "onnx").mkdir(parents=True)
    (stage / "onnx" / "model.onnx").write_bytes(b"half a graph")
    return stage


def test_a_killed_downloads_staging_is_swept_at_the_next_download_or_list(tmp_path: Path, server: str) -> None:
    """A download killed by SIGKILL leaves its staging dir; the next download or list removes
    the staging dirs of processes that are gone and leaves a live process's alone."""
    _serve({})
    code = (
        "import sys; from pathlib import Path\n"
        "from eukhe.tiny import download\n"
        "from tests.tiny.test_download import _model\n"
        "def moved(path, done, size):\n"
        "    print('staged', flush=True); sys.stdin.read()\n"
        "download.download(Path(sys.argv[1]), _model(), base=sys.argv[2], progress=moved)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", code, str(tmp_path), server], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    assert child.stdout is not None
    ready, _, _ = select.select([child.stdout], [], [], LIMIT)
    assert ready and child.stdout.readline() == b"staged\n", "the child download never wrote a byte"
    killed = download.staging_dir(tmp_path, "test-model").with_name(f".staging-test-model-{child.pid}")
    assert killed.is_dir()
    child.kill()
    child.wait(timeout=LIMIT)
    assert killed.is_dir()  # SIGKILL: nothing of the child's ran to remove it
    live = _live_process()
    try:
        kept = _stage_of(tmp_path, "test-model", live.pid)
        kept_other = _stage_of(tmp_path, "other-model", live.pid)
        # list: the model's state is read, its dead staging swept
        assert catalog.install_state(tmp_path, _model()) == catalog.MISSING
        assert not killed.exists() and kept.is_dir() and kept_other.is_dir()
        # download: every dead staging swept (any model), the live ones kept
        dead_other = _stage_of(tmp_path, "other-model", _ended_process())
        dead_catalog = _stage_of(tmp_path, "lfm2.5-230m", _ended_process())
        old = paths.models_dir(tmp_path) / f".old-test-model-{_ended_process()}"
        old.mkdir()
        download.download(tmp_path, _model(), base=server)
        assert not dead_other.exists() and not dead_catalog.exists() and not old.exists()
        assert sorted(p.name for p in paths.models_dir(tmp_path).iterdir()) == sorted(
            [kept.name, kept_other.name, "test-model"]
        )
    finally:
        assert live.stdin is not None
        live.stdin.close()
        live.wait(timeout=LIMIT)


def test_the_list_command_sweeps_dead_staging(tmp_path: Path) -> None:
    dead = _stage_of(tmp_path, "whisper-base", _ended_process())
    listed = subprocess.run(
        [sys.executable, "-m", "eukhe", "--agent-dir", str(tmp_path), "tiny-models", "list"], capture_output=True, text=True, timeout=LIMIT
    )
    assert listed.returncode == 0, listed.stderr
    assert not dead.exists()
    assert "whisper-base\tmissing" in listed.stdout


def test_two_first_installs_racing_on_the_rename(tmp_path: Path, server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The loser of two first installs finds the winner's install in place (the winner renamed
    after the loser checked) and succeeds: no raw OSError, nothing left behind, a whole install."""
    _serve({})
    target = paths.model_dir(tmp_path, "test-model")
    code = (
        "import sys; from pathlib import Path\n"
        "from eukhe.tiny import download\n"
        "from tests.tiny.test_download import _model\n"
        "download.download(Path(sys.argv[1]), _model(), base=sys.argv[2])\n"
    )
    winner: list[int] = []

    def moved(path: str, done: int, size: int | None) -> None:
        if path == "tokenizer.json" and done == size and not winner:  # the loser's last byte
            won = subprocess.run([sys.executable, "-c", code, str(tmp_path), server], capture_output=True, text=True, timeout=LIMIT)
            assert won.returncode == 0, won.stderr
            winner.append(target.stat().st_ino)

    real_exists = Path.exists

    def checked_before_the_winner(self: Path, *args: object, **kwargs: object) -> bool:
        if self == target and winner:  # what a check made just before the winner's rename saw
            return False
        return real_exists(self)

    monkeypatch.setattr(Path, "exists", checked_before_the_winner)
    where = download.download(tmp_path, _model(), base=server, progress=moved)
    monkeypatch.undo()
    assert winner and where == target
    assert _tree(target) == {**GOOD, "engine.json": b'{"kind": "echo"}'}
    assert target.stat().st_ino != winner[0]  # the loser's install, swapped in atomically
    assert [p.name for p in paths.models_dir(tmp_path).iterdir()] == ["test-model"]


def test_a_rename_that_fails_is_a_typed_error_and_leaves_nothing(tmp_path: Path, server: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _serve({})

    def failing(a: Path, b: Path) -> None:
        raise OSError(errno.EIO, "Input/output error", str(b))

    monkeypatch.setattr(download, "_rename_noreplace", failing)
    with pytest.raises(download.InstallFailed, match="test-model.*Input/output error"):
        download.download(tmp_path, _model(), base=server)
    assert list(paths.models_dir(tmp_path).iterdir()) == []


def _gets(path: str) -> list[str | None]:
    return [asked for seen, asked in _Handler.seen if seen == f"/org/test-model/resolve/c0ffee/{path}"]


def test_a_dropped_transfer_resumes_with_range(tmp_path: Path, server: str) -> None:
    _serve({"onnx/model.onnx": "drop-once"})
    seen: list[tuple[str, int]] = []
    where = download.download(tmp_path, _model(), base=server, progress=lambda p, n, s: seen.append((p, n)))
    assert _tree(where) == {**GOOD, "engine.json": b'{"kind": "echo"}'}
    half = len(GOOD["onnx/model.onnx"]) // 2
    assert _gets("onnx/model.onnx") == [None, f"bytes={half}-"]
    graph = [n for p, n in seen if p == "onnx/model.onnx"]
    assert graph == sorted(graph) and graph[-1] == len(GOOD["onnx/model.onnx"])  # progress never went back


def test_a_server_that_ignores_range_restarts_cleanly(tmp_path: Path, server: str) -> None:
    _serve({"onnx/model.onnx": "drop-once-no-range"})
    where = download.download(tmp_path, _model(), base=server)
    assert _tree(where) == {**GOOD, "engine.json": b'{"kind": "echo"}'}
    half = len(GOOD["onnx/model.onnx"]) // 2
    assert _gets("onnx/model.onnx") == [None, f"bytes={half}-"]  # asked for the rest, got 200: the whole file


def test_a_resumed_transfer_is_verified_against_the_whole_file(tmp_path: Path, server: str) -> None:
    _serve({"onnx/model.onnx": "drop-once-bad-range"})
    with pytest.raises(download.WrongHash):
        download.download(tmp_path, _model(), base=server)
    assert list(paths.models_dir(tmp_path).iterdir()) == []


def test_a_transfer_that_keeps_dropping_gives_up(tmp_path: Path, server: str) -> None:
    _serve({"onnx/model.onnx": "cut"})
    with pytest.raises(download.BrokenTransfer, match=f"after {download.ATTEMPTS} attempts"):
        download.download(tmp_path, _model(), base=server)
    assert len(_gets("onnx/model.onnx")) == download.ATTEMPTS
    assert list(paths.models_dir(tmp_path).iterdir()) == []


def test_every_url_follows_the_mirror_setting(tmp_path: Path, server: str) -> None:
    """With a mirror (tinyModels.baseUrl, EUKHE_TINY_MODELS_URL, --base-url) every file of every
    catalog model, the misaki lexicon from GitHub included, is fetched from it; without one each
    file comes from its own origin."""
    mirror = "http://mirror.test/hf/"
    for model in catalog.CATALOG:
        for f in model.files:
            url = download.url_of(mirror, model, f)
            assert url.startswith("http://mirror.test/hf/") and "//" not in url.removeprefix("http://"), url
    kokoro = catalog.find("kokoro")
    lexicon = next(f for f in kokoro.files if f.path == "misaki/us_gold.json")
    assert lexicon.origin is not None
    assert download.url_of(mirror, kokoro, lexicon) == (
        f"http://mirror.test/hf/{lexicon.origin.repo}/resolve/{lexicon.origin.commit}/{lexicon.origin.path}"
    )
    assert download.url_of(None, kokoro, lexicon) == (
        f"https://raw.githubusercontent.com/{lexicon.origin.repo}/{lexicon.origin.commit}/{lexicon.origin.path}"
    )
    graph = kokoro.files[0]
    assert download.url_of(None, kokoro, graph) == f"https://huggingface.co/{kokoro.repo}/resolve/{kokoro.commit}/{graph.path}"
    # a model with a file of another repository installs from a loopback mirror
    body = b'{"word": "wurd"}'
    foreign = File("misaki/lexicon.json", len(body), hashlib.sha256(body).hexdigest(), catalog.Origin("github", "org/lexicons", "beef", "data/l.json"))
    model = Model("test-model", "text", "org/test-model", "c0ffee", (*_model().files, foreign), "echo")
    _serve({})
    _Handler.routes["/org/lexicons/resolve/beef/data/l.json"] = ("ok", body)
    where = download.download(tmp_path, model, base=server)
    assert (where / "misaki" / "lexicon.json").read_bytes() == body
    # no other address is written into the tiny models' code
    sources = Path(download.__file__).parent
    assert {p.name for p in sources.glob("*.py") if "https://" in p.read_text(encoding="utf-8")} == {"download.py"}


def test_unpinned_models_are_refused_saying_why() -> None:
    for model in catalog.CATALOG:
        if model.pinned:
            continue
        with pytest.raises(download.Unpinned) as caught:
            download.download(Path("/nonexistent-agent-dir"), model)
        assert model.id in str(caught.value) and "no pin" in str(caught.value) and "public source" in str(caught.value)
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("## Tiny models") :]
    section = section[: section.find("\n## ", 4)]
    for model_id in ("lfm2.5-230m", "lfm2.5-350m", "whisper-base", "whisper-small"):
        assert model_id in section
    assert "no pin" in section and "public source" in section
