"""Regression tests named after the seed's (inference.md S6 Tests: quirks::tests,
quirks::revision::tests, quirks::tiers::tests, models::ladder::tests,
openai_completions::tests::{tool_choice, service_tier, host_quirks},
constrained_sampling::tests, generation::force::tests), on production."""

from __future__ import annotations

import json
import logging

import pytest

from bend import infer as model
from eukhe.inference import capabilities, catalog, constrained, force, ladder, quirks, tiers
from spec.oracles import infer as oracle


@pytest.fixture(scope="module")
def book() -> quirks.Rulebook:
    return quirks.shipped()


def _key(model_id: str, provider: str = "", api: str = "", base_url: str = "", **compat: object) -> quirks.ModelKey:
    return quirks.ModelKey(model_id, None, provider, api, base_url, dict(compat))


# -- quirks::tests ---------------------------------------------------------------------------------


def test_the_shipped_rulebook_compiles_with_no_overlap_on_the_compiled_catalog(book: quirks.Rulebook) -> None:
    book.check_catalog((m.id, m.name) for m in catalog.compiled())
    assert {f.id for f in book.families} == set(oracle.FAMILIES)
    for m in catalog.compiled():
        assert book.family(m.id, m.name).overlap == ()


def test_families_that_overlap_on_a_catalog_model_are_rejected() -> None:
    document = json.loads(quirks.shipped_text())
    document["families"].append({"id": "qwen-all", "pattern": "qw(?:en|q)"})
    overlapping = quirks.load(json.dumps(document))
    with pytest.raises(quirks.QuirksError) as caught:
        overlapping.check_catalog((m.id, m.name) for m in catalog.compiled())
    assert caught.value.kind == "FamilyOverlap"
    assert "qwen-all" in str(caught.value) and "qwen" in str(caught.value)


def test_the_catalog_check_matches_a_model_by_its_bare_id() -> None:
    # S6.2: a family matches the bare id, the last segment of a path such as a gateway's
    # "vendor/qwen3-8b"; the overlap on it is found as on the id alone, and the path's
    # first segment matches nothing.
    document = json.loads(quirks.shipped_text())
    document["families"].append({"id": "qwen-all", "pattern": "qw(?:en|q)"})
    overlapping = quirks.load(json.dumps(document))
    with pytest.raises(quirks.QuirksError) as caught:
        overlapping.check_catalog([("Vendor/Qwen3-8B", None)])
    assert caught.value.kind == "FamilyOverlap" and str(caught.value).count("qwen") >= 2
    overlapping.check_catalog([("qwen3-8b/vendor-model", None)])


def test_the_compiled_tables_are_the_documents_other_keys() -> None:
    document = json.loads(quirks.shipped_text())
    tables = {k: v for k, v in document.items() if k not in {"version", "families", "hosts", "rules"}}
    assert tables and quirks.load(quirks.shipped_text()).tables == tables


def test_a_model_two_shipped_families_match_names_no_family(caplog: pytest.LogCaptureFixture) -> None:
    # Out of the catalog, a name matching one family and an id matching another: no family,
    # every family directive Unknown, the error logged once per model id (by a book of its own:
    # the shared one remembers what it logged, whichever test asked first).
    book = quirks.load(quirks.shipped_text())
    key = quirks.ModelKey("gemini-2.5-pro-exp", "Gemini-3 Pro", "custom")
    with caplog.at_level(logging.ERROR, logger="eukhe.inference.quirks"):
        first = book.family(key.id, key.name)
        book.family(key.id, key.name)
    assert first.id is None and first.overlap == ("gemini-2.5-pro", "gemini-3-plus")
    assert book.query(key, "google_thinking_level") == quirks.UNKNOWN
    assert book.query(key, "thinking_budgets") == quirks.UNKNOWN
    assert len([r for r in caplog.records if "FamilyOverlap" in r.getMessage() and key.id in r.getMessage()]) == 1


def test_the_shipped_qwen_families_split_at_the_revision_3_8(book: quirks.Rulebook) -> None:
    for model_id, family in oracle.FAMILY_EXAMPLES:
        assert book.family(model_id).id == family, model_id
    assert book.family("Qwen/Qwen3.9-72B").id == "qwen-3.8"
    assert book.family("qwen3.7-14b").id == "qwen"
    assert book.family("qwen-8b").id == "qwen"  # a size is no revision: 0 < 3.8


def test_every_family_fact_of_the_seed(book: quirks.Rulebook) -> None:
    sample = {
        "claude-adaptive": "claude-haiku-5.5",
        "claude-adaptive-4-6": "claude-opus-4-6",
        "claude-cached": "claude-sonnet-4-5",
        "claude-uncached": "anthropic.claude-3-haiku-20240307-v1:0",
        "gpt-explicit-cache": "gpt-5.5-mini",
        "gpt-priority-explicit-cache": "gpt-5.5",
        "gpt-priority": "gpt-5.2",
        "gemini-3-plus": "gemini-3-pro",
        "gemini-latest": "gemini-flash-latest",
        "gemma-4": "gemma-4-27b",
        "gemini-2.5-pro": "gemini-2.5-pro",
        "gemini-2.5-flash": "gemini-2.5-flash",
        "gemini-2.5-flash-lite": "gemini-2.5-flash-lite",
    }
    for fam, model_id in sample.items():
        assert book.family(model_id).id == fam, model_id
    for directive, facts in oracle.FAMILY_FACTS.items():
        for fam, value in facts.items():
            answer = book.query(_key(sample[fam]), directive)
            assert answer == quirks.Answer(True, value, "family"), (directive, fam)
    # A family the seed does not name for a directive answers Unknown.
    assert book.query(_key("gpt-5.2"), "explicit_cache_breakpoints") == quirks.UNKNOWN
    assert book.query(_key("claude-sonnet-4-5"), "thinking_block_binding") == quirks.UNKNOWN


def test_errors_name_the_rule_and_the_kind() -> None:
    cases = [
        ([quirks.RuleDef("model", "m", (("nope", True),))], "QuirksError::UnknownDirective(model/m/nope)"),
        ([quirks.RuleDef("model", "m", (("strict_cap", True),))], "QuirksError::WrongType(model/m/strict_cap)"),
        ([quirks.RuleDef("model", "m", (("strict_cap", 1.0),))], "QuirksError::WrongType(model/m/strict_cap)"),
        ([quirks.RuleDef("model", "m", (("adaptive_thinking", 1),))], "QuirksError::WrongType(model/m/adaptive_thinking)"),
        ([quirks.RuleDef("model", "m", (("tokenize", "openai"),))], "QuirksError::NoOperation(model/m/tokenize)"),
        ([quirks.RuleDef("model", "m", (("thinking_budgets", [4, 3, 2, 1]),))], "QuirksError::UnorderedBudgets(model/m/thinking_budgets)"),
        ([quirks.RuleDef("model", "m", (("thinking_ladder", {"ultra": "x"}),))], "QuirksError::WrongType(model/m/thinking_ladder)"),
        (
            [quirks.RuleDef("family", "f", (("prompt_caching", True),)), quirks.RuleDef("family", "f", (("prompt_caching", False),))],
            "QuirksError::Clash(family/f/prompt_caching)",
        ),
        ([quirks.RuleDef("tenant", "t", ())], "QuirksError::UnknownLayer(tenant/t)"),
    ]
    for rules, text in cases:
        with pytest.raises(quirks.QuirksError) as caught:
            quirks.compile_rulebook([], [], rules)
        assert str(caught.value) == text
    # a capabilities host setting a wire directive
    with pytest.raises(quirks.QuirksError, match=r"OutOfScope\(host/openai/supports_store\)"):
        quirks.compile_rulebook([], [quirks.HostDef("openai", provider="openai", scope="capabilities")], [quirks.RuleDef("host", "openai", (("supports_store", False),))])


def test_precedence_is_compat_then_host_then_model_then_family() -> None:
    book = quirks.compile_rulebook(
        [quirks.FamilyDef("f", "fam")],
        [quirks.HostDef("h", provider="p")],
        [
            quirks.RuleDef("family", "f", (("supports_store", True),)),
            quirks.RuleDef("model", "fam-1", (("supports_store", False),)),
            quirks.RuleDef("host", "h", (("supports_store", True),)),
        ],
    )
    assert book.query(_key("fam-1", "p", supports_store=False), "supports_store") == quirks.Answer(True, False, "compat")
    assert book.query(_key("fam-1", "p"), "supports_store") == quirks.Answer(True, True, "host")
    assert book.query(_key("fam-1", "q"), "supports_store") == quirks.Answer(True, False, "model")
    assert book.query(_key("fam-2", "q"), "supports_store") == quirks.Answer(True, True, "family")
    assert book.query(_key("other", "q"), "supports_store") == quirks.UNKNOWN


def test_rule_order_changes_no_answer_of_the_shipped_rulebook(book: quirks.Rulebook) -> None:
    document = json.loads(quirks.shipped_text())
    document["rules"].reverse()
    reversed_book = quirks.load(json.dumps(document))
    for m in catalog.compiled():
        key = quirks.ModelKey(m.id, m.name, m.provider, m.api, m.base_url)
        for directive in quirks.DIRECTIVES:
            assert book.query(key, directive) == reversed_book.query(key, directive)


def test_host_queries(book: quirks.Rulebook) -> None:
    for provider, api, url, host in oracle.HOST_EXAMPLES:
        assert book.host(api, provider, url) == host, (provider, url)
    # the local openai provider keeps the loopback settings; capability lookups see the openai host
    assert book.host("openai-responses", "openai", "http://localhost:8000/v1", capabilities=True) == "openai"
    assert book.query(_key("gpt-x", "openai", "openai-responses", "http://localhost:8000/v1"), "supports_store") == quirks.Answer(True, False, "host")
    assert book.query(_key("gpt-x", "openai", "openai-responses", "http://localhost:8000/v1"), "embed") == quirks.Answer(True, "openai", "host")
    # longest fragment wins; ties go to the smaller host id
    tie = quirks.compile_rulebook([], [quirks.HostDef("zz", urls=("example.com",)), quirks.HostDef("aa", urls=("example.com",)), quirks.HostDef("api", urls=("api.example.com",))], [])
    assert tie.host("", "", "https://example.com") == "aa"
    assert tie.host("", "", "https://api.example.com") == "api"


def test_llama_cpp_prompt_progress_and_the_compat_that_wins(book: quirks.Rulebook) -> None:
    assert book.query(_key("local", "llama-cpp", "openai-completions", "http://127.0.0.1:8080"), "prompt_progress") == quirks.Answer(True, True, "host")
    compat = quirks.compat_of({"supportsPromptProgress": False, "requiresZeroTemperature": True})
    key = quirks.ModelKey("local", None, "llama-cpp", "openai-completions", "http://127.0.0.1:8080", compat)
    assert book.query(key, "prompt_progress") == quirks.Answer(True, False, "compat")
    with pytest.raises(quirks.QuirksError):
        quirks.compat_of({"forceAdaptiveThinking": "yes"})


def test_a_damaged_rulebook_document_is_refused() -> None:
    for text in ("{", "[]", '{"version": 2}', '{"version": 1, "extra": 1}', '{"version": 1, "rules": [{"layer": "model"}]}', '{"version": 1, "families": [{"id": "x", "pattern": 3}]}'):
        with pytest.raises(quirks.RulebookError):
            quirks.load(text)


# -- quirks::revision::tests -------------------------------------------------------------------------


def test_revision_reads_the_first_digit_run_and_never_a_size() -> None:
    cases = {"3.8-27b": (3, 8), "3-8b": (3,), "-32b": (0,), "-8b": (0,), "": (0,), "x": (0,), "2.5-flash": (2, 5), "4.7": (4, 7), "1.5b": (0,), "3bit": (3,), "٣": (0,), "3.0": (3, 0), "0.5-x": (0, 5), "00": (0,)}
    for rest, want in cases.items():
        assert quirks.revision(rest) == want == model.revision(rest), rest
    assert quirks.revision("9" * 5000) == model.revision("9" * 5000)


# -- quirks::tiers::tests ----------------------------------------------------------------------------


def _former_predicate(provider: str, api: str, model_id: str, tier: str) -> bool:
    """The former hardcoded predicate, kept only in this test."""
    if tier == "default":
        return True
    if (provider, api) == ("openrouter", "openai-completions"):
        return tier in ("flex", "priority")
    gpt5_priority = model_id.startswith("gpt-5") and "mini" not in model_id and "nano" not in model_id
    if (provider, api) == ("openai", "openai-responses"):
        return tier in ("auto", "scale") or (gpt5_priority and tier in ("flex", "priority"))
    if (provider, api) == ("openai-codex", "openai-codex-responses"):
        return tier in ("auto", "scale") or (gpt5_priority and tier == "priority")
    return False


def test_the_table_keeps_every_answer_of_the_former_predicate(book: quirks.Rulebook) -> None:
    for m in catalog.compiled():
        family = book.family(m.id, m.name).id
        for tier in ("default", "auto", "scale", "flex", "priority", "fast"):
            assert tiers.supports_service_tier(book, m.provider, m.api, family, tier) == _former_predicate(m.provider, m.api, m.id, tier), (m.key, tier)


def test_service_tiers_follow_the_seed_table(book: quirks.Rulebook) -> None:
    for provider, api, family, want in oracle.SERVICE_TIERS:
        assert tiers.service_tiers(book, provider, api, family) == ("default", *want)


def test_service_tier_prices_and_1h_cache_writes(book: quirks.Rulebook) -> None:
    for provider, api, tier, model_id, mult in oracle.TIER_PRICES:
        assert tiers.service_tier_multiplier(book, provider, api, tier, model_id) == mult, (provider, api, tier, model_id)
    for model_id, mult in oracle.CACHE_WRITE_1H:
        assert tiers.cache_write_1h_multiplier(book, model_id) == mult
    gpt = next(m for m in catalog.compiled() if m.key == ("openai", "gpt-5.5"))
    usage = tiers.Usage(input=1_000_000, output=1_000_000, service_tier="priority")
    assert tiers.calculate_cost(book, gpt, usage) == pytest.approx((2.5 + 15) * 2.5)
    opus = next(m for m in catalog.compiled() if m.key == ("anthropic", "claude-opus-4-6"))
    writes = tiers.Usage(cache_write=1_000_000, cache_write_1h=1_000_000)
    assert tiers.calculate_cost(book, opus, writes) == pytest.approx(6.25 + 5 * 2)
    assert tiers.calculate_cost(book, gpt, tiers.Usage(cache_write_1h=1_000_000)) == pytest.approx(0.0)  # gpt: its cache write rate


def test_provider_defaults(book: quirks.Rulebook) -> None:
    assert tiers.provider_default_model(book, "anthropic") == "claude-opus-4-6"
    assert tiers.provider_default_model(book, "nobody") is None
    keys = {m.key for m in catalog.compiled()}
    for provider, model_id in book.tables["provider_defaults"].items():
        assert (provider, model_id) in keys


# -- models::ladder::tests and openai_completions::tests --------------------------------------------


def test_a_custom_qwen_3_8_model_sends_the_rulebook_ladder(book: quirks.Rulebook) -> None:
    key = _key("qwen3.8-27b", "my-llama", "openai-completions", "http://127.0.0.1:8080/v1")
    chosen = ladder.ladder(book, key, True, None)
    assert chosen.source == "rulebook"
    assert chosen.offered == ("off", "low", "medium", "xhigh")
    assert [chosen.wire(level) for level in chosen.offered] == ["none", "low", "medium", "xhigh"]


def test_an_explicit_map_beats_the_rulebook_ladder(book: quirks.Rulebook) -> None:
    key = _key("grok-4.6", "xai", "openai-responses")
    assert ladder.ladder(book, key, True, None).offered == oracle.FAMILY_OFFERS["grok-4.6"]
    assert ladder.ladder(book, key, True, {"off": "none"}).offered == ("off", "minimal", "low", "medium", "high")
    assert ladder.ladder(book, key, False, None).offered == ("off",)


def test_thinking_budgets_clamp_the_user_and_fall_back(book: quirks.Rulebook) -> None:
    pro = _key("gemini-2.5-pro", "google", "google-generative-ai")
    assert ladder.thinking_budget(book, pro, "low", None, dynamic=True) == 2048
    assert ladder.thinking_budget(book, pro, "high", {"high": 10**6}, dynamic=True) == 32768
    assert ladder.thinking_budget(book, pro, "minimal", {"minimal": 1}, dynamic=True) == 128
    unnamed = _key("gemini-9", "custom")
    assert ladder.thinking_budget(book, unnamed, "low", None, dynamic=True) == -1
    assert ladder.thinking_budget(book, unnamed, "low", {"low": 77}, dynamic=True) == 77
    assert ladder.thinking_budget(book, unnamed, "medium", None, dynamic=False) == oracle.DEFAULT_BUDGETS[2]


def test_a_custom_provider_at_openrouter_ai_sends_no_cache_marks(book: quirks.Rulebook) -> None:
    custom = _key("anthropic/claude-opus-4-6", "my-router", "openai-completions", "https://openrouter.ai/api/v1")
    assert book.host(custom.api, custom.provider, custom.base_url) == "openrouter-url"
    assert book.query(custom, "cache_control_marks") == quirks.UNKNOWN
    assert book.query(custom, "supports_store") == quirks.Answer(True, False, "host")
    real = _key("anthropic/claude-opus-4-6", "openrouter", "openai-completions", "https://openrouter.ai/api/v1")
    assert book.query(real, "cache_control_marks") == quirks.Answer(True, "anthropic/", "host")


def test_the_openrouter_provider_at_a_loopback_url_keeps_the_openrouter_settings(book: quirks.Rulebook) -> None:
    key = _key("anthropic/claude-opus-4-6", "openrouter", "openai-completions", "http://127.0.0.1:8080/v1")
    assert book.host(key.api, key.provider, key.base_url) == "openrouter"
    assert book.query(key, "cache_control_marks").value == "anthropic/"
    assert book.query(key, "max_tokens_field") == quirks.UNKNOWN  # a loopback setting: signals never combine


# -- capabilities --------------------------------------------------------------------------------------


def test_a_missing_operation_is_unsupported_before_auth(book: quirks.Rulebook) -> None:
    calls: list[str] = []
    key = _key("claude-opus-4-6", "anthropic", "anthropic-messages", "https://api.anthropic.com")
    with pytest.raises(capabilities.Unsupported) as caught:
        capabilities.perform(book, key, "embed", lambda: calls.append("auth"), lambda d: calls.append(d))
    assert (caught.value.capability, caught.value.provider) == ("embed", "anthropic") and calls == []
    assert capabilities.perform(book, key, "count_tokens", lambda: calls.append("auth"), lambda d: d) == "anthropic"
    assert calls == ["auth"]
    assert [c.name for c in capabilities.capabilities_of(book, key)] == list(oracle.CAPABILITIES)
    with pytest.raises(ValueError):
        capabilities.require(book, key, "teleport")


def test_a_dialect_lacking_its_operation_does_not_compile() -> None:
    for capability in oracle.CAPABILITIES:
        for dialect, operations in quirks.DIALECT_OPERATIONS.items():
            rules = [quirks.RuleDef("model", "m", ((capability, dialect),))]
            if capability in operations:
                quirks.compile_rulebook([], [], rules)
            else:
                with pytest.raises(quirks.QuirksError, match="NoOperation"):
                    quirks.compile_rulebook([], [], rules)


# -- constrained_sampling::tests, generation::force::tests -----------------------------------------------


def test_the_strict_budget_keeps_the_highest_priorities_and_the_earlier_of_equals() -> None:
    tools = [constrained.ToolSpec("a", 0), constrained.ToolSpec("b", 5), constrained.ToolSpec("c", 1), constrained.ToolSpec("d", 5), constrained.ToolSpec("e", 1)]
    plan = constrained.strict_budget(tools, 3)
    assert plan.strict_names == ("b", "c", "d")
    assert constrained.strict_budget(tools, 0).strict_names == ()
    assert constrained.strict_budget(tools, 9).strict_names == ("a", "b", "c", "d", "e")


def test_a_strict_plan_sends_tools_past_the_cap_loose_and_drops_none() -> None:
    tools = [constrained.ToolSpec("x", 1)] * 4 + [constrained.ToolSpec("y", 0)]
    plan = constrained.strict_budget(tools, 2)
    assert plan.tools == tuple(tools)
    assert plan.strict == (True, True, False, False, False)
    with pytest.raises(constrained.StrictBudgetError) as caught:
        constrained.strict_budget([constrained.ToolSpec("p", 9), constrained.ToolSpec("q", 1, True), constrained.ToolSpec("r", 2, True)], 1)
    assert caught.value.tool == "r"  # the highest-priority strict-required tool past the cap
    with pytest.raises(ValueError):
        constrained.strict_budget(tools, -1)


def test_manual_extended_thinking_has_no_native_forced_choice() -> None:
    for api in oracle.MANUAL_THINKING_REJECTS:
        assert force.maps_forced_tool_choice(api, manual_thinking=True) is False
        assert force.maps_forced_tool_choice(api, manual_thinking=False) is True
        supported = force.maps_forced_tool_choice(api, manual_thinking=True)
        result = force.run("submit", 2, supported, True, lambda r: r.attempt == 2)
        assert [r.forced_choice for r in result.requests] == [False, False, False]  # no escalation to an unsent flag
        assert all("submit" in r.soft_prompt for r in result.requests)
    assert force.maps_forced_tool_choice("openai-responses", manual_thinking=True) is True
    assert force.maps_forced_tool_choice("unknown-api", manual_thinking=False) is False


def test_a_forced_call_that_is_never_made_fails_naming_the_tool() -> None:
    with pytest.raises(force.ForcedToolError) as caught:
        force.run("submit", 1, True, False, lambda r: False)
    assert caught.value.tool == "submit" and caught.value.attempts == 2
    assert "ForcedToolError::NotCalled(submit)" in str(caught.value)
    result = force.run("submit", 3, True, False, lambda r: r.attempt == 1)
    assert [r.forced_choice for r in result.requests] == [False, True]  # not free first: flag on the retry
    with pytest.raises(ValueError):
        force.run("submit", -1, True, True, lambda r: True)
