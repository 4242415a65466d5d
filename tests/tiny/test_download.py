"""Verified downloads against a real HTTP server on loopback (the seed's download::tests: bad
sha256, wrong size, broken transfer install nothing; partial install replaced only on success;
unremovable staging keeps the download's own error)."""

from __future__ import annotations

import hashlib
import http.server
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from eukhe.tiny import catalog, download, paths
from eukhe.tiny.catalog import File, Model

GOOD = {"onnx/model.onnx": b"graph-bytes" * 5000, "tokenizer.json": b'{"version":"1.0"}'}


class _Handler(http.server.BaseHTTPRequestHandler):
    routes: dict[str, tuple[str, bytes]] = {}

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        mode, body = self.routes.get(self.path, ("404", b""))
        if mode == "404":
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
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
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def _model(files: dict[str, bytes] = GOOD) -> Model:
    pinned = tuple(File(p, len(b), hashlib.sha256(b).hexdigest()) for p, b in files.items())
    return Model("test-model", "text", "org/test-model", "c0ffee", pinned, "echo")


def _serve(modes: dict[str, str], files: dict[str, bytes] = GOOD) -> None:
    _Handler.routes = {}
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
    import subprocess
    import sys

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
    lexicon = next(f for f in kokoro.files if f.path == "misaki/us_gold.json")
    assert download.url_of("http://x", kokoro, lexicon) == lexicon.url
    model = kokoro.files[0]
    assert download.url_of("http://x/", kokoro, model) == f"http://x/{kokoro.repo}/resolve/{kokoro.commit}/{model.path}"
