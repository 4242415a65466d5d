"""The seed as the judge: a law line of a seed's table that states its rule as clauses, read and
evaluated as written.

A rule line reads ``<law> <preamble>: COND → RESULT; COND → RESULT; else COND → RESULT (S6.6).``
(004_cf1da0cad29d7f64.txt, infer_threshold_over_exact). Its clauses are tried in order and the
first whose condition holds gives the result (``else`` before a later clause says that reading
outright). A condition is a tiny expression: names, whole numbers, ``+``, the comparisons ``>``,
``<``, ``≤``, ``≥``, ``==``, ``and``, ``or``, ``not``, ``NAME NUMBER`` for "NAME is NUMBER"
("window 0"), and words the caller defines by an expression over its names ("off" meaning
"not enabled"). Anything else raises ``RuleError``: a rule this parser cannot read is never
guessed at.

The law lines are copied here verbatim (``LINES``) because CI and the laws run where the seeds may
be absent; where the seed file is present beside the repository (``../shared/seeds``, as in CI
and the workbench), the copy is checked against it, so a changed seed fails the law instead of
judging with a stale rule.

A rule is evaluated two ways, from the same parse: ``result`` on Python values (the oracle), and
``gives`` as a z3 formula (the condition under which the rule gives a result), which a proof can
set against an encoding of the code: the formula is built from the seed's clauses, never from
the code or its encoding.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import z3

# The law lines this module reads, verbatim from the seed (file name, line).
LINES: dict[str, tuple[str, str]] = {
    "infer_threshold_over_exact": (
        "004_cf1da0cad29d7f64.txt",
        "infer_threshold_over_exact The compiled threshold: off or window 0 → none; tokens + reserve > window → blocking; "
        "else margin > 0 and tokens + reserve + margin > window → background (S6.6).",
    ),
}

SEEDS = Path(__file__).resolve().parents[2].parent / "shared" / "seeds"


class RuleError(ValueError):
    """A seed rule that cannot be read, or evaluated on the values given."""


def seed_line(law: str) -> str:
    """The law's line of the seed, as copied here; checked against the seed file when present."""
    if law not in LINES:
        raise RuleError(f"no seed line copied for {law}")
    name, line = LINES[law]
    seed = SEEDS / name
    if seed.exists() and line not in seed.read_text(encoding="utf-8").splitlines():
        raise RuleError(f"the copied line of {law} is not a line of {seed}: the seed changed")
    return line


# -- the expression grammar --------------------------------------------------------------------

# ("name", n), ("num", digits), ("+", a, b), ("cmp", op, a, b), ("and", parts), ("or", parts), ("not", x)
Expr = tuple[Any, ...]

_TOKEN = re.compile(r"\s*(?:(?P<num>\d+)|(?P<name>[A-Za-z_][A-Za-z_0-9]*)|(?P<op>==|≤|≥|>|<|\+))")
_KEYWORDS = frozenset({"and", "or", "not", "else"})
_COMPARE: dict[str, Callable[[Any, Any], Any]] = {
    ">": operator.gt, "<": operator.lt, "≤": operator.le, "≥": operator.ge, "==": operator.eq,
}


def _tokens(text: str) -> list[str]:
    out: list[str] = []
    at = 0
    while at < len(text):
        if not text[at:].strip():
            break
        found = _TOKEN.match(text, at)
        if found is None:
            raise RuleError(f"cannot read {text[at:]!r} in the condition {text!r}")
        out.append(found.group("num") or found.group("name") or found.group("op"))
        at = found.end()
    return out


class _Parser:
    def __init__(self, text: str, words: Mapping[str, Expr]) -> None:
        self.text, self.words = text, words
        self.tokens = _tokens(text)
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self) -> str:
        token = self.peek()
        if token is None:
            raise RuleError(f"the condition {self.text!r} ends too soon")
        self.at += 1
        return token

    def parse(self) -> Expr:
        expr = self.disjunction()
        if self.peek() is not None:
            raise RuleError(f"cannot read {' '.join(self.tokens[self.at:])!r} in the condition {self.text!r}")
        return expr

    def disjunction(self) -> Expr:
        parts = [self.conjunction()]
        while self.peek() == "or":
            self.take()
            parts.append(self.conjunction())
        return parts[0] if len(parts) == 1 else ("or", tuple(parts))

    def conjunction(self) -> Expr:
        parts = [self.test()]
        while self.peek() == "and":
            self.take()
            parts.append(self.test())
        return parts[0] if len(parts) == 1 else ("and", tuple(parts))

    def test(self) -> Expr:
        if self.peek() == "not":
            self.take()
            return ("not", self.test())
        token = self.peek()
        if token is not None and token in self.words:
            self.take()
            return self.words[token]
        left = self.sum()
        following = self.peek()
        if following in _COMPARE:
            op = self.take()
            return ("cmp", op, left, self.sum())
        if left[0] == "name" and following is not None and following.isdigit():  # "window 0": window is 0
            return ("cmp", "==", left, ("num", self.take()))
        if left[0] != "name":
            raise RuleError(f"a sum is not a condition in {self.text!r}")
        return left  # a name that is itself a condition

    def sum(self) -> Expr:
        left = self.term()
        while self.peek() == "+":
            self.take()
            left = ("+", left, self.term())
        return left

    def term(self) -> Expr:
        token = self.take()
        if token.isdigit():
            return ("num", token)
        if token in _KEYWORDS or token in self.words or not re.fullmatch(r"[A-Za-z_][A-Za-z_0-9]*", token):
            raise RuleError(f"expected a name or a number, found {token!r} in {self.text!r}")
        return ("name", token)


def condition(text: str, words: Mapping[str, str] | None = None) -> Expr:
    """Parse one condition; ``words`` gives each special word its meaning as a condition."""
    meanings = {word: _Parser(meaning, {}).parse() for word, meaning in (words or {}).items()}
    return _Parser(text, meanings).parse()


class _Logic:
    """How to evaluate: Python values, or z3 terms."""

    def __init__(self, conj: Callable[[list[Any]], Any], disj: Callable[[list[Any]], Any], neg: Callable[[Any], Any]) -> None:
        self.conj, self.disj, self.neg = conj, disj, neg


PYTHON = _Logic(all, any, operator.not_)
Z3 = _Logic(lambda xs: z3.And(*xs), lambda xs: z3.Or(*xs), z3.Not)


def evaluate(expr: Expr, env: Mapping[str, Any], logic: _Logic = PYTHON) -> Any:
    """The value of ``expr`` with each name bound by ``env`` (a name it lacks raises)."""
    kind = expr[0]
    if kind == "name":
        if expr[1] not in env:
            raise RuleError(f"the rule names {expr[1]!r}, which has no value")
        return env[expr[1]]
    if kind == "num":
        return int(expr[1]) if logic is PYTHON else z3.IntVal(int(expr[1]))
    if kind == "+":
        return evaluate(expr[1], env, logic) + evaluate(expr[2], env, logic)
    if kind == "cmp":
        return _COMPARE[expr[1]](evaluate(expr[2], env, logic), evaluate(expr[3], env, logic))
    if kind == "and":
        return logic.conj([evaluate(part, env, logic) for part in expr[1]])
    if kind == "or":
        return logic.disj([evaluate(part, env, logic) for part in expr[1]])
    if kind == "not":
        return logic.neg(evaluate(expr[1], env, logic))
    raise RuleError(f"unknown expression {expr!r}")


# -- rules ------------------------------------------------------------------------------------------

_SECTION = re.compile(r"\s*\((S[0-9][^()]*)\)\.?\s*$")


@dataclass(frozen=True)
class Rule:
    """A law's rule: its clauses (condition, result) in the seed's order."""

    law: str
    clauses: tuple[tuple[Expr, str], ...]

    @property
    def results(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(result for _, result in self.clauses))

    def result(self, env: Mapping[str, Any], *, otherwise: str | None = None) -> str:
        """The result of the first clause whose condition holds; ``otherwise`` when none does (the
        caller says where that comes from: the line does not state it), else RuleError."""
        for cond, result in self.clauses:
            if evaluate(cond, env, PYTHON):
                return result
        if otherwise is None:
            raise RuleError(f"no clause of {self.law} holds for {dict(env)!r}")
        return otherwise

    def gives(self, result: str, env: Mapping[str, Any], *, otherwise: str | None = None) -> Any:
        """The z3 condition under which the rule gives ``result``: some clause with that result
        holds and no clause before it does (or, for ``otherwise``, no clause holds)."""
        conds = [evaluate(cond, env, Z3) for cond, _ in self.clauses]
        ways = [
            z3.And(*[z3.Not(c) for c in conds[:i]], conds[i]) for i, (_, said) in enumerate(self.clauses) if said == result
        ]
        if result == otherwise:
            ways.append(z3.And(*[z3.Not(c) for c in conds]))
        if result not in self.results and result != otherwise:
            raise RuleError(f"{self.law} never gives {result!r}")
        return z3.Or(*ways) if ways else z3.BoolVal(False)


def parse_rule(law: str, line: str, words: Mapping[str, str] | None = None) -> Rule:
    """Parse a law line: the law's name, a preamble up to ':', the clauses, the section."""
    if not line.startswith(law + " "):
        raise RuleError(f"the line {line!r} is not the line of {law}")
    text = _SECTION.sub("", line[len(law) + 1 :])
    if text == line[len(law) + 1 :]:
        raise RuleError(f"the line of {law} does not end with its section")
    preamble, colon, body = text.partition(": ")
    if not colon or not preamble:
        raise RuleError(f"the line of {law} has no preamble before ':'")
    clauses: list[tuple[Expr, str]] = []
    for number, clause in enumerate(body.split(";")):
        clause = clause.strip()
        if clause.startswith("else "):
            if number == 0:
                raise RuleError(f"the first clause of {law} starts with else")
            clause = clause[len("else ") :]
        if clause.count("→") != 1:
            raise RuleError(f"the clause {clause!r} of {law} is not COND → RESULT")
        cond, result = (part.strip() for part in clause.split("→"))
        if not re.fullmatch(r"[a-z_]+", result):
            raise RuleError(f"the result {result!r} of {law} is not one word")
        clauses.append((condition(cond, words), result))
    return Rule(law, tuple(clauses))


@cache
def _rule(law: str, words: tuple[tuple[str, str], ...]) -> Rule:
    return parse_rule(law, seed_line(law), dict(words))


def rule(law: str, words: Mapping[str, str] | None = None) -> Rule:
    """The rule of ``law`` as the seed states it."""
    return _rule(law, tuple(sorted((words or {}).items())))


def results_cover(found: Rule, results: Sequence[str]) -> None:
    """Raise unless the rule gives only results among ``results``."""
    extra = set(found.results) - set(results)
    if extra:
        raise RuleError(f"{found.law} gives {sorted(extra)}, not among {list(results)}")
