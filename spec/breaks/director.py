"""Deliberate breaks of the Director stack (S5): each must fail
``pytest tests/laws tests/bridge -k director``."""

from spec.breaks import Break

BREAKS = [
    Break(
        "dir_push_counts_without_deferred",
        "director",
        "bend.director",
        "            kept_above = (layer,) + kept_above\n            above += 1\n",
        "            kept_above = (layer,) + kept_above\n",
        "model: a push counted without the layers above that deferred (S5.1)",
    ),
    Break(
        "dir_push_counts_without_left",
        "director",
        "eukhe.directors.stack",
        "            if n >= cap:\n",
        "            if n - len(left) >= cap:\n",
        "production: a push counted without the layers above that left (S5.1)",
    ),
    Break(
        "dir_continuation_costs_no_step",
        "director",
        "bend.director",
        "return Loop(decision.stack, loop.steps - 1, \"\"), decision.rule",
        "return Loop(decision.stack, loop.steps, \"\"), decision.rule",
        "model: a continuation that costs no step of the global budget (S5.3)",
    ),
    Break(
        "dir_production_step_free",
        "director",
        "eukhe.directors.stack",
        "            self.steps -= 1\n",
        "            self.steps -= 0\n",
        "production: a continuation that costs no step (S5.3)",
    ),
    Break(
        "dir_tick_after_end_moves",
        "director",
        "bend.director",
        "    if loop.end != \"\":\n        return loop, \"ended\"\n",
        "",
        "model: a tick of an ended loop decides again (S5.3)",
    ),
    Break(
        "dir_again_ignores_budget",
        "director",
        "eukhe.directors.stack",
        "            if layer.budget <= 0:\n                return Decision(rebuild([layer]), Outcome.YIELD, \"again_no_budget\"",
        "            if layer.budget < 0:\n                return Decision(rebuild([layer]), Outcome.YIELD, \"again_no_budget\"",
        "production: Again from a layer with no budget continues (S5.1)",
    ),
    Break(
        "dir_push_lands_on_top",
        "director",
        "eukhe.directors.stack",
        "rebuild([spent, verdict.pushed])",
        "rebuild([spent]) + [verdict.pushed]",
        "production: the pushed layer goes on top of the stack, not on top of the layer that pushed (S5.1)",
    ),
    Break(
        "dir_no_step_spends",
        "director",
        "eukhe.directors.stack",
        "                self.end = Outcome.YIELD.value\n                return \"no_step\", decision\n",
        "                self.end = Outcome.YIELD.value\n                self.stack = decision.stack\n                return \"no_step\", decision\n",
        "production: a continuation with no step left still spends the layer's budget (S5.3, S5.4)",
    ),
    Break(
        "dir_decode_accepts_negative_budget",
        "director",
        "eukhe.directors.document",
        "budget: StrictInt = Field(ge=0)",
        "budget: StrictInt = Field(ge=-9)",
        "production: a document with a negative budget is read as sound (S5.8)",
    ),
    Break(
        "dir_decode_drops_version_check",
        "director",
        "bend.director",
        "version != VERSION or not",
        "not",
        "model: a document of another version is read as sound (S5.8)",
    ),
]
