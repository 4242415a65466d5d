"""Downloads, value by value (S9 download 1-3): each refusal's exact text (it names the file,
what came and what the catalog pins), the headers each request carries, the answers a resumed
transfer accepts and refuses, the warnings and the failed install's text, where the base URL
comes from. Against a real HTTP server on loopback that answers each GET from a script."""

from __future__ import annotations

import errno
import hashlib
import http.server
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from eukhe.tiny import download, paths
from eukhe.tiny.catalog import File, Model
from tests.tiny.conftest import loopback_http

GRAPH = bytes(range(256)) * 40  # 10240 bytes
HALF = len(GRAPH) // 2
URL_PATH = "/org/test-model/resolve/c0ffee/onnx/model.onnx"


@dataclass
class Reply:
    status: int
    body: bytes
    headers: tuple[tuple[str, str], ...] = ()
    cut: bool = False  # announce the whole body, send half of it, close


class _Scripted(http.server.BaseHTTPRequestHandler):
    script: list[Reply] = []
    seen: list[dict[str, str]] = []

    def log_message(self, *args: object) -> None:
        pass

    def do_GET(self) -> None:
        self.seen.append({"path": self.path, **{k.lower(): v for k, v in self.headers.items()}})
        reply = self.script.pop(0) if self.script else Reply(404, b"")
        self.send_response(reply.status)
        for name, value in reply.headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(reply.body)))
        self.end_headers()
        if reply.cut:
            self.wfile.write(reply.body[: len(reply.body) // 2])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(reply.body)


@pytest.fixture
def scripted() -> Iterator[str]:
    _Scripted.script = []
    _Scripted.seen = []
    yield from loopback_http(_Scripted)


def _model(body: bytes = GRAPH) -> Model:
    return Model("test-model", "text", "org/test-model", "c0ffee", (File("onnx/model.onnx", len(body), hashlib.sha256(body).hexdigest()),), "echo")


def _refused(agent_dir: Path, base: str, error: type[download.DownloadError]) -> str:
    with pytest.raises(error) as caught:
        download.download(agent_dir, _model(), base=base)
    assert list(paths.models_dir(agent_dir).iterdir()) == []  # nothing installed, the staging removed
    return str(caught.value)


def test_a_wrong_digest_names_the_file_and_both_digests(tmp_path: Path, scripted: str) -> None:
    wrong = GRAPH[::-1]
    _Scripted.script = [Reply(200, wrong)]
    assert _refused(tmp_path, scripted, download.WrongHash) == (
        f"onnx/model.onnx: sha256 {hashlib.sha256(wrong).hexdigest()}, the catalog pins {hashlib.sha256(GRAPH).hexdigest()}"
    )


def test_a_short_file_names_its_size_and_the_pinned_one(tmp_path: Path, scripted: str) -> None:
    _Scripted.script = [Reply(200, GRAPH[:-1])]
    assert _refused(tmp_path, scripted, download.WrongSize) == "onnx/model.onnx: 10239 bytes, the catalog pins 10240"


def test_a_long_file_stops_at_the_pinned_size(tmp_path: Path, scripted: str) -> None:
    _Scripted.script = [Reply(200, GRAPH + b"!")]
    assert _refused(tmp_path, scripted, download.WrongSize) == "onnx/model.onnx: more than the pinned 10240 bytes"


def test_the_exact_size_is_accepted(tmp_path: Path, scripted: str) -> None:
    _Scripted.script = [Reply(200, GRAPH)]
    where = download.download(tmp_path, _model(), base=scripted)
    assert (where / "onnx" / "model.onnx").read_bytes() == GRAPH
    assert (where / "engine.json").read_text(encoding="utf-8") == '{"kind": "echo"}'
    assert [s["accept-encoding"] for s in _Scripted.seen] == ["identity"]
    assert "range" not in _Scripted.seen[0]


@pytest.mark.parametrize("status", [404, 500, 206, 301])
def test_an_http_error_names_the_url_and_the_status(tmp_path: Path, scripted: str, status: int) -> None:
    """Only a 200 starts a file (a 206 only answers a Range; a redirect without a Location is
    no file)."""
    _Scripted.script = [Reply(status, b"")]
    assert _refused(tmp_path, scripted, download.BrokenTransfer) == f"{scripted}{URL_PATH}: HTTP {status}"


def _resumed(answer: Reply) -> list[Reply]:
    return [Reply(200, GRAPH, cut=True), answer]


@pytest.mark.parametrize("total", [str(len(GRAPH)), "*"], ids=["total", "unknown-total"])
def test_a_206_from_where_the_transfer_dropped_is_appended(tmp_path: Path, scripted: str, total: str) -> None:
    rest = GRAPH[HALF:]
    _Scripted.script = _resumed(Reply(206, rest, (("Content-Range", f"bytes {HALF}-{len(GRAPH) - 1}/{total}"),)))
    where = download.download(tmp_path, _model(), base=scripted)
    assert (where / "onnx" / "model.onnx").read_bytes() == GRAPH
    assert [(s.get("range"), s["accept-encoding"]) for s in _Scripted.seen] == [(None, "identity"), (f"bytes={HALF}-", "identity")]


@pytest.mark.parametrize(
    "content_range",
    [f"bytes 0-{len(GRAPH) - 1}/{len(GRAPH)}", f"bytes {HALF}-{len(GRAPH) - 1}/{len(GRAPH) + 1}", f"bytes {HALF + 1}-{len(GRAPH) - 1}/*", "octets 5120-10239/10240", None],
    ids=["from-the-start", "another-total", "past-the-drop", "not-bytes", "absent"],
)
def test_a_206_from_elsewhere_is_refused_naming_what_it_said(tmp_path: Path, scripted: str, content_range: str | None) -> None:
    headers = () if content_range is None else (("Content-Range", content_range),)
    _Scripted.script = _resumed(Reply(206, GRAPH[HALF:], headers))
    assert _refused(tmp_path, scripted, download.BrokenTransfer) == (
        f"{scripted}{URL_PATH}: a 206 for bytes {HALF}- with Content-Range {content_range!r}"
    )


def test_a_transfer_that_keeps_dropping_names_the_url_and_the_attempts(tmp_path: Path, scripted: str) -> None:
    _Scripted.script = [Reply(200, GRAPH, cut=True) for _ in range(5)]
    message = _refused(tmp_path, scripted, download.BrokenTransfer)
    assert message.startswith(f"{scripted}{URL_PATH}: transfer failed after 4 attempts: ")
    assert [s.get("range") for s in _Scripted.seen] == [None] + [f"bytes={HALF}-"] * 3
    assert len(_Scripted.script) == 1  # the fifth was never asked for


def test_a_staging_dir_that_stays_is_named_in_one_warning(tmp_path: Path, scripted: str) -> None:
    _Scripted.script = [Reply(404, b"")]
    warnings: list[str] = []

    def refuse(path: Path) -> None:
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    with pytest.raises(download.BrokenTransfer):
        download.download(tmp_path, _model(), base=scripted, warn=warnings.append, remove=refuse)
    stage = download.staging_dir(tmp_path, "test-model")
    assert warnings == [f"warning: could not remove the staging dir {stage}: [Errno 13] Permission denied: '{stage}'"]


def test_a_failed_install_names_the_model_both_paths_and_the_error(tmp_path: Path, scripted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    _Scripted.script = [Reply(200, GRAPH)]
    target = paths.model_dir(tmp_path, "test-model")

    def failing(a: Path, b: Path) -> None:
        raise OSError(errno.EIO, "Input/output error", str(b))

    monkeypatch.setattr(download, "_rename_noreplace", failing)
    stage = download.staging_dir(tmp_path, "test-model")
    assert _refused(tmp_path, scripted, download.InstallFailed) == (
        f"test-model: could not rename {stage} to {target}: [Errno 5] Input/output error: '{target}'"
    )


def test_the_base_url_is_the_setting_else_the_variable_else_hugging_face(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EUKHE_TINY_MODELS_URL", raising=False)
    assert download.base_url() == "https://huggingface.co"
    assert download.base_url("") == "https://huggingface.co"
    monkeypatch.setenv("EUKHE_TINY_MODELS_URL", "http://from-the-variable/")
    assert download.base_url() == "http://from-the-variable"
    assert download.base_url("http://from-the-setting//") == "http://from-the-setting"


def _earlier(agent_dir: Path) -> Path:
    target = paths.model_dir(agent_dir, "test-model")
    target.mkdir(parents=True)
    (target / "engine.json").write_text('{"kind": "echo"}', encoding="utf-8")
    (target / "stale.bin").write_bytes(b"earlier")
    return target


def test_without_an_atomic_exchange_the_earlier_install_is_set_aside_then_removed(
    tmp_path: Path, scripted: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Where renameat2 RENAME_EXCHANGE is unsupported (S9 download 3: complete or absent), the
    earlier install is renamed aside, the new one renamed in, the earlier one removed: nothing
    of it is left, under its name or aside."""
    target = _earlier(tmp_path)
    monkeypatch.setattr(download, "_exchange", lambda a, b: False)
    _Scripted.script = [Reply(200, GRAPH)]
    assert download.download(tmp_path, _model(), base=scripted) == target
    assert sorted(p.name for p in target.rglob("*")) == ["engine.json", "model.onnx", "onnx"]
    assert [p.name for p in paths.models_dir(tmp_path).iterdir()] == ["test-model"]


def test_an_earlier_install_that_cannot_be_removed_is_named_in_a_warning(tmp_path: Path, scripted: str, monkeypatch: pytest.MonkeyPatch) -> None:
    target = _earlier(tmp_path)
    monkeypatch.setattr(download, "_exchange", lambda a, b: False)
    _Scripted.script = [Reply(200, GRAPH)]
    warnings: list[str] = []
    refused: list[Path] = []

    def refuse(path: Path) -> None:
        refused.append(path)
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    assert download.download(tmp_path, _model(), base=scripted, warn=warnings.append, remove=refuse) == target
    (old,) = refused
    assert old.name.startswith(".old-test-model-") and (old / "stale.bin").read_bytes() == b"earlier"
    assert warnings == [f"warning: could not remove the replaced install at {old}: [Errno 13] Permission denied: '{old}'"]
    assert (target / "onnx" / "model.onnx").read_bytes() == GRAPH


def test_with_the_exchange_the_earlier_install_is_swapped_out_and_removed(tmp_path: Path, scripted: str) -> None:
    target = _earlier(tmp_path)
    _Scripted.script = [Reply(200, GRAPH)]
    warnings: list[str] = []
    refused: list[Path] = []

    def refuse(path: Path) -> None:
        refused.append(path)
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    assert download.download(tmp_path, _model(), base=scripted, warn=warnings.append, remove=refuse) == target
    stage = download.staging_dir(tmp_path, "test-model")
    assert refused == [stage] and (stage / "stale.bin").read_bytes() == b"earlier"  # the earlier install, swapped to the staging path
    assert warnings == [f"warning: could not remove the replaced install at {stage}: [Errno 13] Permission denied: '{stage}'"]


@pytest.mark.parametrize(
    ("name", "owner"),
    [
        (".staging-kokoro-42", ("kokoro", 42)),
        (".old-lfm2.5-350m-7", ("lfm2.5-350m", 7)),
        (".staging-a-b-0", ("a-b", 0)),
        (".staging-kokoro-abc", None),
        (".staging-kokoro-042", None),
        (".staging-kokoro-", None),
        (".staging--12", None),
        (".staging-kokoro--1", ("kokoro-", 1)),  # the id is all before the last dash
        ("staging-kokoro-42", None),
        ("kokoro", None),
    ],
    ids=["staging", "old", "dashed-id", "pid-not-digits", "leading-zero", "no-pid", "no-id", "dash-ended-id", "no-dot", "install"],
)
def test_only_a_leftover_name_with_an_id_and_a_pid_has_an_owner(name: str, owner: tuple[str, int] | None) -> None:
    """The sweep reads ``.staging-<id>-<pid>`` and ``.old-<id>-<pid>`` (S9 download 1); any other
    name in the models dir (an install, a stranger's file) has no owner and is left alone."""
    assert paths.owner(name) == owner
