"""The ONNX text decoder runner on small real graphs, against their NumPy reference."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from eukhe.tiny import engine
from eukhe.tiny.text import DEFAULT_LIBRARY, TextEngine, TextError, TextRunner, chatml, runtime_library
from eukhe.tiny.tokenizer import Tokenizer
from tests.tiny import graphs
from tests.tiny.tokenizer_files import train, write

VOCAB, DIM = 64, 16


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("variant", ["plain", "optional", "keep"])
def test_greedy_run_matches_the_numpy_reference(tmp_path: Path, seed: int, variant: str) -> None:
    graph = graphs.build(tmp_path / "m.onnx", VOCAB, DIM, seed, optional=variant == "optional", keep=variant == "keep")
    runner = TextRunner(graph)
    prompt = [seed, 5, 9, 2]
    np.testing.assert_allclose(runner.logits(prompt), graphs.reference_logits(prompt, VOCAB, DIM, seed), rtol=1e-4, atol=1e-4)
    got = runner.generate(prompt, max_tokens=12)
    assert list(got.ids) == graphs.reference_greedy(prompt, 12, VOCAB, DIM, seed)
    assert got.stopped == "max_tokens" and len(got.ids) == 12


def test_end_token_stops(tmp_path: Path) -> None:
    graph = graphs.build(tmp_path / "m.onnx", VOCAB, DIM, 4)
    runner = TextRunner(graph)
    free = graphs.reference_greedy([1, 2], 6, VOCAB, DIM, 4)
    end = frozenset({free[3]})
    got = runner.generate([1, 2], max_tokens=6, end_ids=end)
    assert list(got.ids) == graphs.reference_greedy([1, 2], 6, VOCAB, DIM, 4, end) and got.stopped == "end"


def test_out_of_range_ids_are_refused(tmp_path: Path) -> None:
    runner = TextRunner(graphs.build(tmp_path / "m.onnx", VOCAB, DIM, 1))
    for bad in ([-1], [VOCAB], []):
        with pytest.raises(TextError):
            runner.logits(bad)


def test_unknown_inputs_fail_to_load(tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["past_key_values.0"], ["logits"])],
        "g",
        [helper.make_tensor_value_info("past_key_values.0", TensorProto.FLOAT, [1, 2, 3])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "m.onnx"))
    with pytest.raises(TextError):
        TextRunner(tmp_path / "m.onnx")
    (tmp_path / "bad.onnx").write_bytes(b"not a graph")
    with pytest.raises(TextError):
        TextRunner(tmp_path / "bad.onnx")


def test_runtime_library_resolution_order(tmp_path: Path) -> None:
    lib = tmp_path / "libonnxruntime.so.1"
    lib.write_bytes(b"")
    other = tmp_path / "other.so"
    other.write_bytes(b"")
    assert runtime_library(str(lib), {"ORT_DYLIB_PATH": str(other)}) == str(lib)
    assert runtime_library(None, {"ORT_DYLIB_PATH": str(other)}) == str(other)
    assert runtime_library("", {}) == DEFAULT_LIBRARY
    with pytest.raises(TextError):
        runtime_library(str(tmp_path / "absent.so"), {})
    with pytest.raises(TextError):
        runtime_library(None, {"ORT_DYLIB_PATH": str(tmp_path / "absent.so")})


def _install_text_model(where: Path, seed: int) -> Tokenizer:
    where.mkdir(parents=True, exist_ok=True)
    reference = train("llama3", vocab_size=400)
    write(reference, where)
    tokenizer = Tokenizer.from_file(where / "tokenizer.json")
    vocab = reference.get_vocab_size()
    graphs.build(where / "model.onnx", vocab, DIM, seed)
    (where / "engine.json").write_text(json.dumps({"kind": "onnx-text", "end_tokens": ["<|im_end|>"]}), encoding="utf-8")
    return tokenizer


def test_text_engine_chat_matches_the_reference_with_stop_strings(tmp_path: Path) -> None:
    tokenizer = _install_text_model(tmp_path / "model", 7)
    loaded = engine.load(tmp_path / "model")
    assert isinstance(loaded, TextEngine)
    messages = [{"role": "user", "content": "Translate from English to German.\nEnglish: hello"}]
    prompt = tokenizer.encode(chatml(messages, "German:"))
    vocab = len(loaded.tokenizer.id_to_token)
    end = frozenset({tokenizer.token_id("<|im_end|>")}) - {None}
    want_ids = graphs.reference_greedy(prompt, 10, vocab, DIM, 7, end)  # type: ignore[arg-type]
    want = tokenizer.decode(want_ids)
    assert loaded.chat(messages, "German:", [], 10) == "German:" + want
    if len(want) > 2:
        stop = want[1:3]
        cut = want.find(stop)
        assert loaded.chat(messages, "German:", [stop], 10) == "German:" + want[:cut]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_cached_decoder_matches_the_no_cache_run(tmp_path: Path, seed: int) -> None:
    """A graph with past_key_values/past_conv inputs and present outputs: the runner's
    prefill-then-one-token run gives the logits and tokens of the no-cache graph of the same
    weights and of the NumPy reference (the graph's logits stay the reference's only when the
    caches, the attention mask over past and new tokens and the positions are carried right)."""
    cached = TextRunner(graphs.build_cached(tmp_path / "cached.onnx", VOCAB, DIM, seed))
    plain = TextRunner(graphs.build(tmp_path / "plain.onnx", VOCAB, DIM, seed))
    assert set(cached.cache) == {"past_key_values.0.key", "past_key_values.0.value", "past_conv.0"}
    assert cached.empty["past_key_values.0.key"].shape == (1, 0, DIM) and cached.empty["past_conv.0"].shape == (1, DIM)
    prompt = [seed, 5, 9, 2]
    np.testing.assert_allclose(cached.logits(prompt), plain.logits(prompt), rtol=1e-4, atol=1e-4)
    got = cached.generate(prompt, max_tokens=12)
    assert got.ids == plain.generate(prompt, max_tokens=12).ids
    assert list(got.ids) == graphs.reference_greedy(prompt, 12, VOCAB, DIM, seed)
    scores, cache = cached.step(prompt, 0, cached.empty)
    assert cache["past_key_values.0.key"].shape == (1, 4, DIM)  # the presents, keyed as the next past
    after, _ = cached.step([7], 4, cache)
    np.testing.assert_allclose(after, graphs.reference_logits([*prompt, 7], VOCAB, DIM, seed), rtol=1e-4, atol=1e-4)
    wrong, _ = cached.step([7], 0, cache)  # a past length that disagrees with the caches
    assert not np.allclose(wrong, after, atol=1e-3)


def test_cache_inputs_without_present_outputs_fail_to_load(tmp_path: Path) -> None:
    import onnx
    from onnx import TensorProto, helper

    graph = helper.make_graph(
        [helper.make_node("Identity", ["past_conv.0"], ["logits"])],
        "g",
        [
            helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, "seq"]),
            helper.make_tensor_value_info("past_conv.0", TensorProto.FLOAT, [1, 2, 3]),
        ],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, [1, 2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, str(tmp_path / "m.onnx"))
    with pytest.raises(TextError, match="present_conv.0"):
        TextRunner(tmp_path / "m.onnx")


def test_text_engine_finds_the_catalog_layout(tmp_path: Path) -> None:
    """The catalog installs onnx/model_q4.onnx; a dir with no graph fails to load."""
    _install_text_model(tmp_path / "model", 3)
    (tmp_path / "model" / "onnx").mkdir()
    (tmp_path / "model" / "model.onnx").rename(tmp_path / "model" / "onnx" / "model_q4.onnx")
    loaded = engine.load(tmp_path / "model")
    assert isinstance(loaded, TextEngine)
    (tmp_path / "model" / "onnx" / "model_q4.onnx").unlink()
    with pytest.raises(engine.EngineError):
        engine.load(tmp_path / "model")


# ------------------------------------------------------------ hardening (issue 30, tiny models)

MESSAGES = [{"role": "user", "content": "Translate from English to German.\nEnglish: hello"}]


def _bos_model(where: Path, template: str | None, config: dict[str, object] | None) -> object:
    """A text model dir whose tokenizer.json `tokenizers` built (with a post-processor template
    or none) and, when ``config`` is given, a tokenizer_config.json; the reference returned."""
    where.mkdir(parents=True, exist_ok=True)
    reference = train("llama3", vocab_size=400, template=template)
    write(reference, where)
    graphs.build(where / "model.onnx", reference.get_vocab_size(), DIM, 5)
    (where / "engine.json").write_text(json.dumps({"kind": "onnx-text"}), encoding="utf-8")
    if config is not None:
        (where / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")
    return reference


@pytest.mark.parametrize(
    "template, config, bos",
    [
        ("<|startoftext|> $A", None, True),  # the post-processor's template adds it
        ("<|startoftext|> $A <|endoftext|>", None, True),  # only what comes before the text
        (None, {"add_bos_token": True, "bos_token": "<|startoftext|>"}, True),
        (None, {"add_bos_token": True, "bos_token": {"content": "<|startoftext|>", "special": True}}, True),
        ("<|startoftext|> $A", {"add_bos_token": False, "bos_token": "<|startoftext|>"}, False),  # the config decides
        ("<|startoftext|> $A", {"bos_token": "<|startoftext|>"}, True),  # no add_bos_token: the template decides
        (None, {"bos_token": "<|startoftext|>"}, False),
        (None, None, False),
    ],
)
def test_the_text_prompt_begins_with_the_models_bos(tmp_path: Path, template: str | None, config: dict[str, object] | None, bos: bool) -> None:
    reference = _bos_model(tmp_path / "model", template, config)
    loaded = engine.load(tmp_path / "model")
    assert isinstance(loaded, TextEngine)
    text = chatml(MESSAGES, "German:")
    plain = reference.encode(text, add_special_tokens=False).ids  # type: ignore[attr-defined]
    start = reference.token_to_id("<|startoftext|>")  # type: ignore[attr-defined]
    want = [start, *plain] if bos else plain
    assert loaded.prompt(MESSAGES, "German:") == want
    if template is not None and config is None:  # what `tokenizers` itself gives, up to the text's end
        assert want == reference.encode(text).ids[: len(want)]  # type: ignore[attr-defined]
    vocab = reference.get_vocab_size()  # type: ignore[attr-defined]
    end = frozenset({reference.token_to_id("<|im_end|>")})  # type: ignore[attr-defined]
    greedy = graphs.reference_greedy(want, 8, vocab, DIM, 5, end)
    assert loaded.chat(MESSAGES, "German:", [], 8) == "German:" + loaded.tokenizer.decode(greedy)


def test_a_bos_token_the_tokenizer_lacks_fails_to_load(tmp_path: Path) -> None:
    _bos_model(tmp_path / "model", None, {"add_bos_token": True, "bos_token": "<s-not-there>"})
    with pytest.raises(engine.EngineError, match="bos_token.*<s-not-there>"):
        engine.load(tmp_path / "model")
    (tmp_path / "model" / "tokenizer_config.json").write_text("{", encoding="utf-8")
    with pytest.raises(engine.EngineError, match="tokenizer_config.json"):
        engine.load(tmp_path / "model")


def test_the_catalog_installs_the_text_models_tokenizer_config() -> None:
    from eukhe.tiny import catalog

    for model in catalog.CATALOG:
        if model.kind == "text":
            assert "tokenizer_config.json" in [f.path for f in model.files]
