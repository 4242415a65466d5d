"""The catalog (S9, the seed's catalog.rs): each model and the files it installs, each file
pinned by Hugging Face repo, commit, size and sha256.

Models: lfm2.5-230m and lfm2.5-350m (text, ONNX q4), whisper-base and whisper-small (speech to
text), kokoro (Kokoro-82M, text to speech, with the misaki lexicon from its GitHub repository).

Pins: kokoro's files are pinned (commit, size and sha256 of each). lfm2.5-230m, lfm2.5-350m,
whisper-base and whisper-small are not: no pin (commit, sizes, sha256) was found from a public
source in the environment this build was made in (it had no network), and a pin is never
guessed. A model without a pin is refused by the download (``Unpinned``, saying so), so nothing
unverified is ever installed. Tests install from catalogs of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from eukhe.tiny import paths


@dataclass(frozen=True)
class Origin:
    """Where a file of another repository than the model's comes from: ``host`` (``github``:
    raw.githubusercontent.com, or ``huggingface``), its repo, commit and path there. The URL is
    the download's to make (``eukhe.tiny.download.url_of``), so a mirror serves it too."""

    host: str
    repo: str
    commit: str
    path: str


@dataclass(frozen=True)
class File:
    path: str  # inside the installed model dir (and inside the model's repo, unless origin)
    size: int | None = None
    sha256: str | None = None
    origin: Origin | None = None  # a file from another repository than the model's

    @property
    def pinned(self) -> bool:
        return self.size is not None and self.sha256 is not None


@dataclass(frozen=True)
class Model:
    id: str
    kind: str  # "text", "speech-to-text", "text-to-speech"
    repo: str
    commit: str | None
    files: tuple[File, ...]
    engine: str  # the engine.json kind the install writes
    dtype: str = "q4"  # the weights' data type: the launch tag's last part

    @property
    def pinned(self) -> bool:
        return self.commit is not None and all(f.pinned for f in self.files)


_TEXT_FILES = (File("onnx/model_q4.onnx"), File("tokenizer.json"), File("tokenizer_config.json"))
_WHISPER_FILES = (File("onnx/encoder_model.onnx"), File("onnx/decoder_model.onnx"), File("tokenizer.json"))
CATALOG: tuple[Model, ...] = (
    Model("lfm2.5-230m", "text", "LiquidAI/LFM2.5-230M-ONNX", None, _TEXT_FILES, "onnx-text"),
    Model("lfm2.5-350m", "text", "LiquidAI/LFM2.5-350M-ONNX", None, _TEXT_FILES, "onnx-text"),
    Model("whisper-base", "speech-to-text", "onnx-community/whisper-base", None, _WHISPER_FILES, "whisper", "fp32"),
    Model("whisper-small", "speech-to-text", "onnx-community/whisper-small", None, _WHISPER_FILES, "whisper", "fp32"),
    Model("kokoro", "text-to-speech", "onnx-community/Kokoro-82M-v1.0-ONNX", "1939ad2a8e416c0acfeecc08a694d14ef25f2231", (
        File("onnx/model_fp16.onnx", 163_234_740, "ba4527a874b42b21e35f468c10d326fdff3c7fc8cac1f85e9eb6c0dfc35c334a"),
        File("voices/af_heart.bin", 522_240, "d583ccff3cdca2f7fae535cb998ac07e9fcb90f09737b9a41fa2734ec44a8f0b"),
        File("misaki/us_gold.json", 3_000_469, "dc414872a49a28ae6c141463d502fd945f3b2fde040484fdc47d00cc4612686f",
             Origin("github", "hexgrad/misaki", "fba1236595f2d2bf21d414ba6e57d25256afada3", "misaki/data/us_gold.json")),
    ), "kokoro", "fp16"),
)  # fmt: skip


class UnknownModel(Exception):
    def __init__(self, model_id: str, catalog: tuple[Model, ...]) -> None:
        super().__init__(f"unknown tiny model {model_id!r}; the catalog has {', '.join(m.id for m in catalog)}")


def find(model_id: str, catalog: tuple[Model, ...] = CATALOG) -> Model:
    for model in catalog:
        if model.id == model_id:
            return model
    raise UnknownModel(model_id, catalog)


INSTALLED = "installed"
MISSING = "missing"
INCOMPLETE = "incomplete"


def install_state(agent_dir: Path, model: Model) -> str:
    """installed: every file present with its pinned size (or present, when unpinned);
    missing: no model dir; incomplete: anything else. Reading it (``eukhe tiny-models list``)
    first sweeps the model's staging dirs left by processes that are gone (``paths.sweep``)."""
    paths.sweep(agent_dir, model.id)
    where = paths.model_dir(agent_dir, model.id)
    if not where.is_dir():
        return MISSING
    for f in model.files:
        target = where / f.path
        if not target.is_file() or (f.size is not None and target.stat().st_size != f.size):
            return INCOMPLETE
    return INSTALLED
