"""The 12 config laws of control.md S4b over the model ``bend.config``, run on production too.

Judges: the seed's S4b tables and rules transcribed in spec/oracles/config.py (the guarded items
of S4b.5, the reading of S4b.1, the limits of S4b.4), never the model's own predicates.

Proved (about the code):
- rmw_refuses_broken: rmw itself returns the file as it was whenever read gives a reason (its
  callees abstracted: ``rmw_structure``), and read itself gives one exactly where S4b.1 says, for
  every version number (``read_exhaust``, get and is_int proved apart).
- limit_malformed_fails_closed, limit_number_applies: in_flight itself on every shape of
  providerMaxInFlight (``in_flight_exhaust``), judged by the claims stated from S4b.4; production's
  slots (eukhe.agent.inflight) then hold that many requests at once and no more, on real lock
  files (``slots_hold_the_limit``, bounded: limits 0..3).
- rmw_keeps_others, rmw_applies_change: induction on the length of the changed path, of
  bend.config.apply (``rmw_induction``), for every document whose objects name each key once (the
  keys of a JSON object) at any depth, every path and every value. Base and step: apply's own
  unfolding checked on its code (``apply_unfolding``: apply run on opaque values, a path known by
  its first key and an opaque rest, its callees get, put, remove, len and its own call on the rest
  abstracted to each outcome: a whole finite domain), get's search (``get_search``), put's and
  remove's facts (``store_steps``: z3 over their encodings generated from their code, ten
  one-quantifier steps: put and remove hold the value at the key or have no pair of it, keep the
  entry of every other name, add no name), and how a path reads through documents so related
  (``rmw_base_lemmas``, ``rmw_step_lemmas``: lemmas about no code, over an uninterpreted sort of
  JSON values, the facts as premises in the vocabulary of reading). rmw itself writes apply(the
  document read, the change) or nothing (``rmw_structure``, ``read_exhaust``). Every z3 check of
  these laws takes well under a second.
- settings_save_preserves: the setter itself run on opaque documents (disk, loaded copy, value,
  higher layers), its callees (lookup, check, rmw, shadowed) abstracted to each of their
  outcomes, over every declared id and an undeclared one (spec.proofs.callees): it never reads the
  loaded copy and writes exactly rmw(disk, the change at the id's key path) or nothing; rmw's
  laws above do the rest.
- project_entry_never_merges, global_entry_kept: induction on the project entries folded, of
  bend.config.merge_servers (its fold of put checked on its code: ``merge_unfolding``), the step
  z3 proofs over the encodings of put and remove generated from their code by spec.z3gen (every
  object: pairs of any number, any names, entries of any JSON value, which put only carries; the
  filter and sorted() of put encoded by the facts that define them, the order sorted picks left
  open), five steps of one quantifier each (``put_steps``), each from the facts of the one way of
  sorted or the filter it reads, so every z3 check is small (tens of milliseconds). Over every object o, name k, entry v, name n other than k and entry w: put(o, k, v) holds
  v at k, and holds w at n when o does ("holds w at n": has a pair (n, w) and each pair of name n
  holds w). The project's names are distinct (the keys of a JSON object), and the global entry of
  a name n is the w the global map holds at n.
Bounded:
- leaf_applied_or_reported and leaf_not_both. The leaf walk interleaves the type checks of every
  cvar kind (values of any JSON shape) with a worklist walk over nested objects of any depth; no
  encoding of the walk was written, so they are bounded (the finite domains below) and hunted by
  Hypothesis (documents over every declared key, unicode and empty keys, values of every JSON
  kind, huge and negative numbers) with production's leaves compared. A proof would also follow
  the dotted keys: S4b.3 takes the known keys from the Settings type, whose keys are names, so a
  key with a dot (other than an MCP server's name) is Undeclared, named in quotes
  (``"retry.enabled"``) so that it never reads as the nested path retry.enabled; the domains and
  the hunt hold such keys, and production is compared on them.
- untrusted_changes_nothing_guarded, trusted_project_applies: the worlds below, and the guarded
  predicate of the model and of production against the seed's list on every declared setting,
  every name of S4b.5 and some server entries (an item is any text: bounded). A proof would need
  the structure of ``effective`` (which project sets, entries and prompts it keeps) checked on its
  code beside the folds of bend/cvar.py (spec/laws/cvar.py), and for trusted_project_applies the
  leaf walk too (that every leaf it applies passes ``check``), which is not proved.

Bounded domains (the rules never read a key's text beyond equality, or a value beyond its kind):
- Files: missing, unreadable, not JSON, a JSON array, and every object over the keys {a, b}
  (each absent, 1 or {c: 1}) without a version, with version 1 or version 2: 31 files; changes:
  put 2 or {} at a, b or a.c, or remove one of them: 9 changes.
- Setters: 12 disk files x 12 loaded copies (settings documents over retry.enabled and
  transport, each absent, good or wrong-typed, and the broken files) x 2 ids x 3 values x 2
  higher layers (none, or a global config.cfg setting the id).
- Leaves: documents over retry (absent, a Bool, an object with a good or bad enabled),
  transport (absent, good, bad), an undeclared key (absent, a value, an object) and
  mcpServers (absent, an entry, a non-entry, not an object).
- Limits: providerMaxInFlight absent, not a map (3 kinds), or a map whose entry for the
  provider is absent or one of 8 values (whole numbers, negative, fraction, string, bool, null, object).
- Trust: the global document (trustedProjects absent, this project or another; maxToolRounds
  absent or 7; mcpServers none, git or web), the project document (maxToolRounds absent, 9 or
  wrong; transport absent or sse; autonomous.enabled absent or true; mcpServers none or git),
  the project config.cfg (none, maxToolRounds, transport), the global config.cfg (none, or
  trusting the project), and the project prompts (each of SYSTEM.md, APPEND_SYSTEM.md or not).
"""

from __future__ import annotations

import errno
import functools
import itertools
import json
import os
import resource
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import z3

from bend import config as m
from bend.cvar import CvarError, Obj, Set, Value, to_json
from spec import z3gen
from spec.evidence import (
    Bound,
    Evidence,
    Finite,
    LawFailed,
    all_of,
    also,
    boolean,
    bounded,
    domain,
    exhaust,
    induction,
)
from spec.oracles import config as oracle
from spec.proofs import Cons, Opaque, Rest, callees, lemma, prove, stateless_loop
from spec.registry import BOUNDED, PROVED, law
from spec.z3gen import facts, fresh, generated, side_facts

_FAST_TMP = "/dev/shm" if Path("/dev/shm").is_dir() else None

INNER = Obj((("c", 1),))
SLOT_VALUES: tuple[Value | None, ...] = (None, 1, INNER)


def _obj(pairs: dict[str, Value | None]) -> Obj:
    return Obj(tuple(sorted((k, v) for k, v in pairs.items() if v is not None)))


def _files() -> tuple[m.File, ...]:
    out = [m.File(m.MISSING), m.File(m.UNREADABLE), m.File(m.INVALID), m.File(m.TEXT, (1, 2))]
    for a, b, version in itertools.product(SLOT_VALUES, SLOT_VALUES, (None, 1, 2)):
        out.append(m.File(m.TEXT, _obj({"a": a, "b": b, "version": version})))
    for odd in (True, "1", 10**30, 1.5, -1, 0, ()):  # versions that are not 1: a Bool, text, huge, a fraction, negative
        out.append(m.File(m.TEXT, Obj((("a", 1), ("version", odd)))))
    out += [m.File(m.TEXT, "text"), m.File(m.TEXT, None), m.File(m.TEXT, 3), m.File(m.TEXT, Obj((("a", Obj((("b", Obj((("c", (1, "x")),))),))),)))]
    return tuple(out)


FILES = _files()
CHANGES = tuple(
    m.Change(path, value, remove)
    for path in (("a",), ("b",), ("a", "c"))
    for value, remove in ((2, False), (Obj(()), False), (None, True))
)
RMW_LABEL = f"{len(FILES)} files (missing, unreadable, not JSON, not an object, odd versions, nested) x {len(CHANGES)} changes"


def _oracle_read(f: m.File) -> tuple[bool, str]:
    state = {m.MISSING: "missing", m.UNREADABLE: "unreadable", m.INVALID: "invalid"}.get(f.kind, "text")
    return oracle.read(state, to_json(f.value) if f.kind == m.TEXT else None)


def _place(path: Path, f: m.File) -> None:
    if f.kind == m.UNREADABLE:
        path.mkdir(parents=True)
    elif f.kind == m.INVALID:
        path.write_text('{"not json', encoding="utf-8")
    elif f.kind == m.TEXT:
        path.write_text(json.dumps(to_json(f.value)), encoding="utf-8")


@functools.cache
def production_rmw() -> Evidence:
    """production's read-modify-write (files.update_document through config.put/remove) on real
    files, every file and change of the model's domain, plus a file that is not UTF-8: the file
    after is the model's, a refused write leaves the bytes as they were with the oracle's reason."""
    from eukhe.settings import config as production
    from eukhe.settings.files import DocumentError

    count = 0
    with tempfile.TemporaryDirectory(dir=_FAST_TMP) as root:
        for number, (f, change) in enumerate(itertools.product(FILES + (m.File(m.UNREADABLE, "bytes"),), CHANGES)):
            path = Path(root) / f"d{number}" / "settings.json"
            path.parent.mkdir()
            if f.value == "bytes" and f.kind == m.UNREADABLE:
                path.write_bytes(b'{"a": "' + bytes([0xFF, 0xFE]) + b'"}')
            else:
                _place(path, f)
            before = path.read_bytes() if path.is_file() else None
            readable, why = _oracle_read(f)
            try:
                if change.remove:
                    production.remove(path, list(change.path))
                else:
                    production.put(path, list(change.path), to_json(change.value))
            except DocumentError as error:
                if readable or error.kind != why:
                    raise LawFailed(f"production refused {f!r} {change!r}: {error}") from None
                if (path.read_bytes() if path.is_file() else None) != before:
                    raise LawFailed(f"production wrote over a refused file {f!r}")
            else:
                if not readable:
                    raise LawFailed(f"production wrote over {f!r} ({why})")
                after, _ = m.rmw(f, change)
                if json.loads(path.read_text(encoding="utf-8")) != to_json(after.value):
                    raise LawFailed(f"production wrote {path.read_text()!r}, the model {after!r}")
            count += 1
        count += _file_cases(Path(root))
    return Evidence(BOUNDED, f"production update_document on real files: {RMW_LABEL} and a file that is not UTF-8 ({count:,} writes); "
                    f"{FILE_LABEL}")


FILE_LABEL = ("a settings file reached through a link (absolute, relative, a chain, dangling), a link loop and a self link "
              "(ELOOP, nothing written), a file of mode 0664 and, as root, of another owner (both kept), an auth file (0600), a new "
              "file (0600), a write the file system cuts (EFBIG: the old file whole, no temporary file left)")
OTHER_OWNER = (1234, 1235)  # a file of someone else, which root may write for them


def _listing(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def _file_cases(root: Path) -> int:
    """S4b.1 on the file beside its document: a writer writes the document it read with the change
    applied, to the file the user has (a link to a file is followed, and stays a link; a file of
    another owner or mode keeps them; a credential file and a new file are 0600), and a write that
    fails leaves the document as it was (the old bytes, no temporary file): nothing is lost. A link
    that loops cannot be read, so it is refused (ELOOP naming it, as an OSError or as a document that
    cannot be read) and nothing is written."""
    from eukhe.settings import config as production
    from eukhe.settings.files import DocumentError, update_document
    from spec.laws.session import with_limit

    count = 0
    home = root / "files"
    real = home / "dotfiles" / "settings.json"
    real.parent.mkdir(parents=True)
    links = {
        "absolute": (home / "a" / "settings.json", str(real)),
        "relative": (home / "b" / "settings.json", "../dotfiles/settings.json"),
        "a chain": (home / "c" / "settings.json", "../b/settings.json"),
    }
    for what, (link, points) in links.items():
        link.parent.mkdir(exist_ok=True)
        link.symlink_to(points)
        real.write_text(json.dumps({"a": 1, "b": {"c": 2}}), encoding="utf-8")
        production.put(link, ["a"], what)
        if not link.is_symlink() or os.readlink(link) != points:
            raise LawFailed(f"a write through a link ({what}) replaced the link")
        if json.loads(real.read_text(encoding="utf-8")) != {"a": what, "b": {"c": 2}}:
            raise LawFailed(f"a write through a link ({what}) left the file it names as {real.read_text()!r}")
        count += 1
    dangling, missing = home / "d" / "settings.json", home / "d" / "elsewhere" / "settings.json"
    missing.parent.mkdir(parents=True)
    dangling.symlink_to("elsewhere/settings.json")
    production.put(dangling, ["a"], 1)
    if not dangling.is_symlink() or json.loads(missing.read_text(encoding="utf-8")) != {"a": 1}:
        raise LawFailed("a write through a dangling link did not create the file it names, or replaced the link")
    if oct(missing.stat().st_mode & 0o777) != oct(0o600):
        raise LawFailed(f"a new settings file is {oct(missing.stat().st_mode & 0o777)}, not 0600")
    count += 1
    loops = home / "loops"
    loops.mkdir()
    (loops / "one.json").symlink_to("two.json")
    (loops / "two.json").symlink_to("one.json")
    (loops / "self.json").symlink_to("self.json")
    for name in ("one.json", "self.json"):
        before = _listing(loops)
        try:
            production.put(loops / name, ["a"], 1)
        except (OSError, DocumentError) as error:  # refused as a path that cannot be resolved, or a document that cannot be read
            if isinstance(error, OSError):
                loop_named = error.errno == errno.ELOOP and error.filename == str(loops / name)
            else:
                loop_named = error.path == loops / name and os.strerror(errno.ELOOP) in error.detail
            if not loop_named:
                raise LawFailed(f"a link loop gave {error!r}, not ELOOP naming {loops / name}") from None
        else:
            raise LawFailed(f"a write through the link loop {name} succeeded")
        if _listing(loops) != before or not all((loops / n).is_symlink() for n in before):
            raise LawFailed(f"a refused write through the link loop {name} wrote {_listing(loops)}")
        count += 1
    owned = home / "owned" / "config.json"
    owned.parent.mkdir()
    owned.write_text(json.dumps({"a": 1}), encoding="utf-8")
    owner = OTHER_OWNER if os.geteuid() == 0 else (os.getuid(), os.getgid())  # only root may give a file away
    os.chown(owned, *owner)
    os.chmod(owned, 0o664)
    production.put(owned, ["b"], 2)
    kept = owned.stat()
    if (kept.st_uid, kept.st_gid, kept.st_mode & 0o777) != (*owner, 0o664) or json.loads(owned.read_text()) != {"a": 1, "b": 2}:
        raise LawFailed(f"a write of a 0664 file of {owner} left it {kept.st_uid}:{kept.st_gid} {oct(kept.st_mode & 0o777)}")
    count += 1
    auth = home / "owned" / "auth.json"
    auth.write_text(json.dumps({"p": {"key": "k"}}), encoding="utf-8")
    os.chmod(auth, 0o644)
    update_document(auth, lambda doc: doc.update(q={"key": "s"}), private=True)
    if auth.stat().st_mode & 0o777 != 0o600 or json.loads(auth.read_text()) != {"p": {"key": "k"}, "q": {"key": "s"}}:
        raise LawFailed(f"a credential file written is {oct(auth.stat().st_mode & 0o777)}, not 0600")
    count += 1
    full = home / "full" / "settings.json"
    full.parent.mkdir()
    full.write_text(json.dumps({"a": 1}), encoding="utf-8")
    before_bytes, before = full.read_bytes(), _listing(full.parent)
    caught = with_limit(resource.RLIMIT_FSIZE, 64, lambda: production.put(full, ["big"], "x" * 10_000))  # the kernel cuts the write at 64 bytes (EFBIG)
    if caught is None or caught.errno != errno.EFBIG:
        raise LawFailed(f"a write the file system cut gave {caught!r}, not EFBIG")
    left = [n for n in _listing(full.parent) if n not in before and not n.endswith(".lock")]
    if full.read_bytes() != before_bytes or left:
        raise LawFailed(f"a write the file system cut changed the file or left {left}")
    return count + 1


def _at(obj: Value, path: tuple[str, ...]) -> tuple[bool, Value]:
    for key in path:
        if not isinstance(obj, Obj):
            return False, None
        present, obj = m.get(obj, key)
        if not present:
            return False, None
    return True, obj


# -- proofs of the rmw laws: induction on the length of the changed path ------------------------------
#
# apply(o, Change(path, x, rm)) calls itself on the rest of the path. Both rmw laws are proved by
# induction on the length of the path, of bend.config.apply, from three kinds of proof:
# - apply's own unfolding, checked on its code (``apply_unfolding``: apply itself run on opaque
#   values, its callees get, put, remove and its own call on the rest abstracted to each outcome;
#   a whole finite domain), and get's search of the pairs (``get_search``, induction of get);
# - what put and remove do to the key and to every other name, for every object (pairs of any
#   number, names and entries any): z3 over their encodings generated from their code by
#   spec.z3gen, ties proved (``store_steps``, with put's ``put_steps``), each a one-quantifier step;
# - how a path reads through documents so related (``rmw_base_lemmas``, ``rmw_step_lemmas``):
#   lemmas, about no code, over an uninterpreted sort of JSON values (objects of any size and
#   depth), the reading of a path given by instances of its definition, the facts above as premises.
# The vocabulary the lemmas share with the facts: an object ``has`` a name when one of its pairs has
# that name; its ``get`` of a name it has is the entry every pair of that name holds (``_holds``); a
# JSON object names each key once, so a document read from JSON holds one entry at each name it
# has, and get's search (the first pair of the name) finds that entry. ``at`` of a path reads its
# names in turn: nothing where a value on the way is not an object or has not the name. Read so,
# put's proved facts are the premise ``put_rel`` (``sets``: put(o, k, v) holds v at k; ``keeps``:
# o's entry at another name n is held there still; ``absent``: a name n that o has not, put(o, k,
# v) has not) and remove's are ``remove_rel`` (``gone``, ``kept``, ``absent``).

V = z3.DeclareSort("Value")  # a JSON value
K = z3.StringSort()
PathSort = z3.SeqSort(K)
Opt = z3.Datatype("Opt")
Opt.declare("none")
Opt.declare("some", ("it", V))
Opt = Opt.create()
isobj = z3.Function("isobj", V, z3.BoolSort())
has = z3.Function("has", V, K, z3.BoolSort())
get = z3.Function("get", V, K, V)
At = z3.Function("at", V, PathSort, Opt)


def _cons(head: Any, tail: Any) -> Any:
    return z3.Concat(z3.Unit(head), tail)


def _unfold(d: Any, key: Any, rest: Any) -> Any:
    """An instance of the definition of at: at(d, key::rest) descends into d's key when d is an
    object holding it, else nothing is there."""
    return At(d, _cons(key, rest)) == z3.If(z3.And(isobj(d), has(d, key)), At(get(d, key), rest), Opt.none)


def _incomparable(a: Any, b: Any) -> Any:
    return z3.And(z3.Not(z3.PrefixOf(a, b)), z3.Not(z3.PrefixOf(b, a)))


def _same_at(o: Any, o2: Any, other: Any) -> Any:
    """o2 has the name ``other`` exactly when o does, and holds o's entry there when o has it."""
    return z3.And(has(o2, other) == has(o, other), z3.Implies(has(o, other), get(o2, other) == get(o, other)))


# The premises of the lemmas: put's and remove's proved facts (``store_steps``) in the vocabulary
# of reading, seen at the name ``other`` (any name). Premises, not encodings: the lemmas are about
# no code; the facts are proved on the code apart.


def put_rel(o: Any, key: Any, x: Any, o2: Any, other: Any) -> Any:
    """o2 = put(o, key, x): an object holding x at key (sets), every other name as in o (keeps, absent)."""
    return z3.And(isobj(o2), has(o2, key), get(o2, key) == x, z3.Implies(other != key, _same_at(o, o2, other)))


def remove_rel(o: Any, key: Any, o2: Any, other: Any) -> Any:
    """o2 = remove(o, key): an object without key (gone), every other name as in o (kept, absent)."""
    return z3.And(isobj(o2), z3.Not(has(o2, key)), z3.Implies(other != key, _same_at(o, o2, other)))


def apply_one(o: Any, h: Any, x: Any, rm: Any, o2: Any, other: Any) -> Any:
    """o2 = apply(o, Change((h,), x, rm)): a path of one key removes it or puts x at it (``apply_unfolding``)."""
    return z3.If(rm, remove_rel(o, h, o2, other), put_rel(o, h, x, o2, other))


def _nested(o: Any, h: Any) -> Any:
    return z3.And(isobj(o), has(o, h), isobj(get(o, h)))


def apply_into(o: Any, h: Any, y: Any, inner: Any, empty: Any, o2: Any, other: Any) -> Any:
    """o2 = apply(o, Change(h::t, x, rm)) for a put, or a remove through an object (``apply_unfolding``):
    ``inner`` is o's entry at h (get's) when it is an object, else {} (``empty``), and o2 = put(o, h, y)
    where y is apply(inner, Change(t, x, rm))."""
    return z3.And(inner == z3.If(_nested(o, h), get(o, h), empty), put_rel(o, h, y, o2, other))


def apply_past_leaf(o: Any, h: Any, o2: Any) -> Any:
    """o2 = apply(o, Change(h::t, x, True)) when o's entry at h is not an object: o itself (``apply_unfolding``)."""
    return o2 == o


class _KeyPath:
    """A change's path known by its first key (``path[0]``) and its rest (``path[1:]``, opaque):
    reading it otherwise fails the law; its length is asked through ``len``, abstracted to a number
    whose == 1 answers once (``_Whole``): a path of one key, or of more, whatever they are."""

    def __init__(self, head: str, rest: Any) -> None:
        self.head, self.rest = head, rest

    def __getitem__(self, index: object) -> Any:
        if type(index) is int and index == 0:
            return self.head
        if isinstance(index, slice) and (index.start, index.stop, index.step) == (1, None, None):
            return self.rest
        raise LawFailed(f"apply read the path at {index!r}")

    def _refuse(self, *args: object, **kwargs: object) -> Any:
        raise LawFailed("apply read the path otherwise than by its head and its rest")

    __len__ = __iter__ = __contains__ = __eq__ = __hash__ = __add__ = __radd__ = _refuse


class _SealedObj(Obj):
    """An object found at the key: the function under proof may test it with isinstance and pass
    it on, never read it, so a check that ran on it holds for every object in its place."""

    def __getattribute__(self, name: str) -> Any:
        if name == "__class__":
            return object.__getattribute__(self, name)
        raise LawFailed(f"the function under proof read the object found ({name})")

    __hash__ = None  # type: ignore[assignment]


def apply_unfolding(real: Any = None) -> Evidence:
    """``apply`` itself (``m.apply``, or ``real``: a function of bend.config's namespace), one
    unfolding: run on an opaque document and value, a path known by its first key and an opaque
    rest (``_KeyPath``, its length a number whose == 1 answers each way), its callees (get, put,
    remove, its own call on the rest of the path, and ``len``) abstracted to each outcome, the
    object get finds sealed (``_SealedObj``). A path of one key is remove(o, h) or put(o, h, x); a
    longer one puts apply(inner, Change(the rest, x, rm)) at h, inner being o's value at h when it
    is an object, else {} (a remove through a value that is not an object returns o, calling no
    more). These are the premises apply_one, apply_into and apply_past_leaf."""
    real = m.apply if real is None else real
    o: Any = Opaque("document")
    x: Any = Opaque("value")
    y: Any = Opaque("the rest applied")
    put_out: Any = Opaque("put's result")
    removed: Any = Opaque("remove's result")
    shapes = Finite("the path (one key; or a first key and a rest of one key or more, apply's len(path) == 1 answering)", ("one key", "more"))
    found = Finite("what get finds at the key (nothing, an object, null, another value)", ("nothing", "an object", "null", "a value"))

    def case(shape: str, rm: bool, at: str) -> bool:
        calls: list[tuple[Any, ...]] = []
        value: Any = Opaque("another value")
        inner_obj = _SealedObj(())
        tail: Any = Opaque("the rest of the path")
        path = _KeyPath("h", tail)

        def get_(obj: Any, key: str) -> Any:
            calls.append(("get", obj, key))
            return (False, None) if at == "nothing" else (True, {"an object": inner_obj, "null": None}.get(at, value))

        def put_(obj: Any, key: str, v: Any) -> Any:
            calls.append(("put", obj, key, v))
            return put_out

        def remove_(obj: Any, key: str) -> Any:
            calls.append(("remove", obj, key))
            return removed

        def apply_(obj: Any, change: m.Change) -> Any:
            calls.append(("apply", obj, change))
            return y

        def len_(of: Any) -> Any:
            if of is not path:
                raise LawFailed("apply measured something other than the path")
            return _Whole(shape == "one key", "==", 1)

        setattr(m, "len", len_)  # a global of the module, found before the builtin (not kept: deleted after)
        try:
            with callees(m, get=get_, put=put_, remove=remove_, apply=apply_):
                got = real(o, m.Change(path, x, rm))  # type: ignore[arg-type]
        finally:
            delattr(m, "len")
        if shape == "one key":
            return (got is removed and calls == [("remove", o, "h")]) if rm else (got is put_out and calls == [("put", o, "h", x)])
        if not calls or calls[0] != ("get", o, "h"):
            return False
        if rm and at != "an object":
            return got is o and len(calls) == 1
        inner = calls[1][1] if len(calls) > 1 and calls[1][0] == "apply" else None
        want_inner = inner is inner_obj if at == "an object" else (type(inner) is Obj and inner == Obj(()))
        rest = calls[1][2] if len(calls) > 1 and calls[1][0] == "apply" else None
        return (want_inner and isinstance(rest, m.Change) and rest.path is tail and rest.value is x and rest.remove is rm
                and calls[2:] == [("put", o, "h", y)] and got is put_out)

    return exhaust(domain(shapes, boolean("a remove"), found), case, about=[real])


def rmw_step_lemmas() -> tuple[Evidence, Evidence]:
    """(keeps, applies): the step from a path t to h::t, for put and remove, every document."""
    o, inner, y, o2, empty, v = z3.Consts("o inner y o2 empty v", V)
    h, q0 = z3.Strings("h q0")
    t, q1 = z3.Consts("t q1", PathSort)
    q = _cons(q0, q1)
    empty_is = z3.And(isobj(empty), z3.Not(has(empty, q0)), z3.Not(has(empty, h)),
                      z3.Implies(z3.Length(q1) > 0, z3.Not(has(empty, q1[0]))))  # {} holds no key
    p = _cons(h, t)
    defs = z3.And(
        _unfold(o2, q0, q1), _unfold(o, q0, q1), _unfold(o2, h, t), _unfold(o, h, t),
        z3.Implies(z3.Length(q1) > 0, _unfold(empty, q1[0], z3.SubSeq(q1, 1, z3.Length(q1) - 1))),
        z3.Implies(z3.Length(q1) > 0, q1 == _cons(q1[0], z3.SubSeq(q1, 1, z3.Length(q1) - 1))),
        z3.Implies(z3.And(z3.Length(q1) > 0, z3.Not(isobj(get(o, h)))),
                   At(get(o, h), q1) == Opt.none),  # a leaf has nothing under it (an instance of the definition)
    )
    ih_keeps = z3.Implies(_incomparable(q1, t), At(y, q1) == At(inner, q1))
    ih_applies = At(y, t) == Opt.some(v)
    put_step = z3.And(isobj(o), empty_is, apply_into(o, h, y, inner, empty, o2, q0), defs)

    keeps = lemma(
        lambda: At(o2, q) == At(o, q),
        assumptions=[put_step, ih_keeps, _incomparable(q, p)],
        label="keeps, step t -> h::t (put, or a remove through an object): every path incomparable with h::t reads as before",
    )
    applies = lemma(
        lambda: At(o2, p) == Opt.some(v),
        assumptions=[put_step, ih_applies],
        label="applies, step t -> h::t: the changed path holds the value",
    )
    # a remove through a value that is not an object changes nothing; then the path reads nothing
    gone = lemma(
        lambda: z3.And(At(o2, p) == Opt.none, At(o2, q) == At(o, q)),
        assumptions=[isobj(o), z3.Not(_nested(o, h)), apply_past_leaf(o, h, o2), _unfold(o2, h, t), z3.Length(t) > 0,
                     z3.Implies(z3.And(has(o2, h), z3.Not(isobj(get(o2, h)))), At(get(o2, h), t) == Opt.none)],
        label="remove through a value that is not an object: every path reads as before and the path holds nothing",
    )
    return all_of(keeps, gone), all_of(applies, gone)


def rmw_base_lemmas() -> tuple[Evidence, Evidence]:
    """Paths of length 1: put or remove one key of an object, every other key kept."""
    o, o2, x = z3.Consts("o o2 x", V)
    h, q0 = z3.Strings("h q0")
    rm = z3.Bool("remove")
    q1 = z3.Const("q1", PathSort)
    defs = z3.And(_unfold(o2, q0, q1), _unfold(o, q0, q1), _unfold(o2, h, z3.Empty(PathSort)), _unfold(o, h, z3.Empty(PathSort)),
                  At(x, z3.Empty(PathSort)) == Opt.some(x))
    q = _cons(q0, q1)
    p = z3.Unit(h)
    keeps = lemma(
        lambda: At(o2, q) == At(o, q),
        assumptions=[isobj(o), apply_one(o, h, x, rm, o2, q0), defs, _incomparable(q, p)],
        label="keeps, base (one key put or removed): every other key reads as before",
    )
    applies = lemma(
        lambda: At(o2, p) == z3.If(rm, Opt.none, Opt.some(x)),
        assumptions=[isobj(o), apply_one(o, h, x, rm, o2, q0), defs],
        label="applies, base: the key holds the value put, or nothing after a remove",
    )
    return keeps, applies


def remove_keeps_pair(remove_of: z3gen.Generated, ties: list[Any]) -> Evidence:
    """For every object o, name k, and pair (n, w) of o at any index with n other than k: the pair
    is a pair of remove(o, k) (filter back). A step of both remove's facts and put's keeps (put
    runs remove's filter first)."""
    o = fresh(m.Obj, "o")
    k, n = z3.Strings("k n")
    w = z3.Const("w", z3gen.OBJECT)
    at = z3.Int("at")
    keys, entries = o.pairs.array
    return prove(
        lambda: _has(remove_of(o, k), n, w),
        assumptions=lambda: [*facts(o), n != k, 0 <= at, at < o.pairs.length, keys[at] == n, entries[at] == w, *side_facts(remove_of(o, k), only="filter back")],
        ties=ties, label="o's pair (n, w), n other than k, is a pair of remove(o, k)",
    )


def store_steps(put_of: z3gen.Generated, remove_of: z3gen.Generated) -> tuple[Evidence, Evidence]:
    """(put's facts, remove's facts), for every object o (pairs of any number, names and entries
    any), name k, entry v, name n other than k and entry w, over the encodings generated from the
    code (ties proved), each a z3 proof of one step from the facts of the one way of sorted() or
    of the filter it reads: put's are ``put_steps`` (sets: put(o, k, v) holds v at k; keeps: o's
    entry w at n is held by put(o, k, v)) and (absent) when o has no pair of name n, put(o, k, v)
    has none (sorted forward, filter forward: each of its pairs is the appended one or one the
    filter kept); remove's are (gone) remove(o, k) has no pair of name k, (kept) o's entry w at n is
    held by remove(o, k) (filter back: the pair survives; filter forward: every pair of name n
    in the result is one of o's), (absent) as put's (filter forward)."""
    o = fresh(m.Obj, "o")
    k, n = z3.Strings("k n")
    v, w = z3.Consts("v w", z3gen.OBJECT)
    ties = [put_of.tie, remove_of.tie]
    forward = ("sorted forward", "filter forward")
    gone = prove(
        lambda: _none(remove_of(o, k), k),
        assumptions=lambda: [*facts(o), *side_facts(remove_of(o, k), only="filter forward")],
        ties=ties, label="remove(o, k) has no pair of name k",
    )
    survives = remove_keeps_pair(remove_of, ties)
    only = prove(
        lambda: _only(remove_of(o, k), n, w),
        assumptions=lambda: [*facts(o), n != k, _only(o, n, w), *side_facts(remove_of(o, k), only="filter forward")],
        ties=ties, label="o's pairs of name n, other than k, all hold w: so do remove(o, k)'s",
    )
    removed_absent = prove(
        lambda: _none(remove_of(o, k), n),
        assumptions=lambda: [*facts(o), n != k, _none(o, n), *side_facts(remove_of(o, k), only="filter forward")],
        ties=ties, label="o has no pair of name n, other than k: nor has remove(o, k)",
    )
    sets, keeps = put_steps(put_of, remove_of)
    absent = prove(
        lambda: _none(put_of(o, k, v), n),
        assumptions=lambda: [*facts(o), n != k, _none(o, n), *side_facts(put_of(o, k, v), only=forward)],
        ties=ties, label="o has no pair of name n, other than k: nor has put(o, k, v)",
    )
    return all_of(sets, keeps, absent), all_of(gone, survives, only, removed_absent)


def rmw_induction(put_of: z3gen.Generated, remove_of: z3gen.Generated, apply_of: Any = None) -> tuple[Evidence, Evidence]:
    """(keeps, applies) of apply (``m.apply``, or ``apply_of``), by induction on the length of
    the changed path, for every document whose objects name each key once (a JSON object's keys)
    at every depth, every path and every value. Base (one key): apply's unfolding (remove or put,
    checked on its code), put's and remove's facts (z3 over their generated encodings) and the
    base lemmas (reading). Step (h::t, the hypothesis for apply on t and every document): apply's
    unfolding (put(o, h, apply(inner, t)), inner o's entry at h when an object, else {}; a remove
    through a value that is not an object returns o), get's search (inner is the entry o holds at
    h), put's facts and the step lemmas."""
    unfolding = apply_unfolding(apply_of)
    put_facts, remove_facts = store_steps(put_of, remove_of)
    base_keeps, base_applies = rmw_base_lemmas()
    step_keeps, step_applies = rmw_step_lemmas()
    of, label = "bend.config.apply", "the length of the changed path"
    base, step = all_of(unfolding, put_facts, remove_facts), all_of(unfolding, get_search(), put_facts)
    return (induction(all_of(base, base_keeps), all_of(step, step_keeps), of=of, label=label),
            induction(all_of(base, base_applies), all_of(step, step_applies), of=of, label=label))


@functools.cache
def rmw_proofs() -> tuple[Evidence, Evidence]:
    """``rmw_induction`` of bend.config.apply over put's and remove's encodings generated from their code."""
    return rmw_induction(PUT, REMOVE)


class _Unread(str):
    """A text the code under proof may pass on and join to others, but never compare or hash."""

    def _refuse(self, *args: object, **kwargs: object) -> Any:
        raise LawFailed(f"the code under proof compared the text {str.__str__(self)!r}")

    __eq__ = __ne__ = __hash__ = _refuse


class _Reason(str):
    """Any reason a read gives: a text whose content rmw may pass on but never read."""

    def _refuse(self, *args: object, **kwargs: object) -> Any:
        raise LawFailed("rmw read the text of the read's reason")

    __eq__ = __ne__ = __hash__ = __len__ = __iter__ = __getitem__ = __contains__ = __add__ = __radd__ = _refuse


def rmw_structure() -> Evidence:
    """``m.rmw`` itself on an opaque file and change, its callees (read, apply) abstracted to each
    outcome: a read that gives a reason (any text) returns the file as it was with that reason and
    calls no apply; a read that gives a document returns a text file of apply(document, change) and
    no error. A whole finite domain: the class of read's outcome."""
    f: Any = Opaque("file")
    change: Any = Opaque("change")
    doc: Any = Opaque("document")
    applied: Any = Opaque("the document changed")

    def case(outcome: str) -> bool:
        calls: list[str] = []
        reason = _Reason("why")

        def read(got: Any) -> Any:
            calls.append("read")
            if got is not f:
                raise LawFailed("rmw read another file")
            return reason if outcome == "a reason" else doc

        def apply(d: Any, c: Any) -> Any:
            calls.append("apply")
            if d is not doc or c is not change:
                raise LawFailed("rmw applied something else")
            return applied

        with callees(m, read=read, apply=apply):
            after, error = m.rmw(f, change)
        if outcome == "a reason":
            return after is f and error is reason and calls == ["read"]
        return isinstance(after, m.File) and after.kind == m.TEXT and after.value is applied and error is None and calls == ["read", "apply"]

    return exhaust(domain(Finite("what read gives (a reason: any text; a document)", ("a reason", "a document"))), case, about=[m.rmw])


# -- read and in_flight on their code: callees abstracted, get and is_int proved apart ---------------
#
# ``read`` and ``in_flight`` read a value only through ``get`` (an object's entry of a key),
# ``is_int`` (a whole number, not a Bool) and one comparison of a whole number (== 1, >= 0). They are
# run themselves with get and is_int abstracted to each outcome and the number a token whose
# comparison answers each way; ``get`` is a search of the object's pairs (induction, of get) and
# ``is_int`` reads only a value's class (every class a value has, as a spy whose content raises when
# read). Each abstract point is judged by the oracle on a JSON value of that class (S4b.1, S4b.4).


class _Pairs(Cons):
    """An object known by its first pair alone (``Cons``: asking for more raises ``Rest``)."""

    def __init__(self, head: tuple[str, Any]) -> None:
        super().__init__(head)
        self.pairs = self


@functools.cache
def get_search() -> Evidence:
    """``get`` returns the entry of the first pair of the key, else (False, None): induction on the
    pairs, of get. Base: an object with no pair holds nothing. Step: get itself on an object known
    by its first pair: a pair of the key gives its value without reading the rest; any other pair
    sends the search on to the rest and does nothing else (the loop carries no state: checked on
    its source, ``stateless_loop``)."""
    real = m.get
    stateless_loop(real, "obj.pairs")
    base = exhaust(domain(Finite("an object with no pair", (Obj(()),))), lambda obj: real(obj, "k") == (False, None), about=[real])

    def step(matches: bool) -> bool:
        value: Any = Opaque("the pair's value")
        try:
            got = real(_Pairs(("k" if matches else "other", value)), "k")  # type: ignore[arg-type]
        except Rest:
            return not matches
        return matches and got[0] is True and got[1] is value

    return induction(base, exhaust(domain(boolean("the first pair's key is the key")), step, about=[real]),
                     of="bend.config.get", label="the pairs of the object searched (get returns the first entry of the key)")


@functools.cache
def is_int_by_class() -> Evidence:
    """``is_int`` reads only a value's class: run on a value of every class a value has (a spy of
    int, float, text, list and object, whose content raises when read), it says whole exactly
    where the oracle does on a JSON value of that class (S4b.4: a Bool is not a number)."""
    from spec.laws.cvar import _value_classes

    classes = _value_classes()
    judged: dict[int, Any] = dict(zip(map(id, classes.values), (True, False, None, 7, 0.5, "x", [1], {"p": 1})))
    return exhaust(domain(classes), lambda x: m.is_int(x) == oracle.whole(judged[id(x)]), about=[m.is_int])


class _Whole:
    """A number a function under proof may compare once with a given number, the answer given."""

    def __init__(self, answer: bool, op: str, to: int) -> None:
        self.answer, self.op, self.to, self.asked = answer, op, to, 0

    def _ask(self, op: str, other: object) -> bool:
        if op != self.op or type(other) is not int or other != self.to or self.asked:
            raise LawFailed(f"the number was compared {op} {other!r}")
        self.asked += 1
        return self.answer

    def __eq__(self, other: object) -> bool:
        return self._ask("==", other)

    def __ge__(self, other: object) -> bool:
        return self._ask(">=", other)

    __hash__ = None  # type: ignore[assignment]


KINDS = Finite("the file (missing, unreadable, not JSON, JSON text)", (m.MISSING, m.UNREADABLE, m.INVALID, m.TEXT))
SHAPES = Finite("the JSON value (an object, another value)", ("an object", "another value"))


@functools.cache
def read_exhaust() -> Evidence:
    """``read`` itself on every file, get and is_int abstracted to each outcome and the version a
    number whose == 1 answers each way: a missing file reads as {} ... exactly as the oracle's read
    of S4b.1 says on a JSON value of the same shape (the document itself when readable, else the
    oracle's reason)."""
    real = m.read

    def case(kind: str, shape: str, present: bool, whole: bool, one: bool) -> bool:
        doc = Obj((("the document", 1),)) if shape == "an object" else _token("another value")
        version = _Whole(one, "==", 1)
        asked: list[str] = []

        def get(obj: Any, key: str) -> Any:
            asked.append("get")
            if obj is not doc or key != "version":
                raise LawFailed("read looked up something else")
            return (True, version) if present else (False, None)

        def is_int(v: Any) -> bool:
            asked.append("is_int")
            if v is not version:
                raise LawFailed("read asked is_int of something else")
            return whole

        with callees(m, get=get, is_int=is_int):
            got = real(m.File(kind, doc))
        content: Any = None
        if kind == m.TEXT:
            content = [1] if shape != "an object" else {} if not present else {"version": (1 if one else 2) if whole else ("1" if not one else 1.0)}
        state = {m.MISSING: "missing", m.UNREADABLE: "unreadable", m.INVALID: "invalid"}.get(kind, "text")
        readable, why = oracle.read(state, content)
        if kind == m.MISSING:
            return readable and isinstance(got, Obj) and got == Obj(()) and asked == []
        if readable:
            return got is doc
        return isinstance(got, str) and got == why

    return exhaust(domain(KINDS, SHAPES, boolean("a version is there"), boolean("is_int says a whole number"), boolean("the number == 1")),
                   case, about=[real])


@functools.cache
def in_flight_exhaust() -> Evidence:
    """``in_flight`` itself on every shape of providerMaxInFlight, get and is_int abstracted to each
    outcome and the entry a number whose >= 0 answers each way: the limit the oracle's S4b.4 gives
    on a JSON value of the same shape (the entry itself when it is a whole number >= 0)."""
    real = m.in_flight
    provider: Any = _token("provider")

    def case(present: bool, shape: str, has: bool, whole: bool, nonneg: bool) -> bool:
        raw = Obj((("the map", 1),)) if shape == "an object" else _token("another value")
        entry = _Whole(nonneg, ">=", 0)

        def get(obj: Any, key: Any) -> Any:
            if obj is not raw or key is not provider:
                raise LawFailed("in_flight looked up something else")
            return (True, entry) if has else (False, None)

        def is_int(v: Any) -> bool:
            if v is not entry:
                raise LawFailed("in_flight asked is_int of something else")
            return whole

        with callees(m, get=get, is_int=is_int):
            got: Any = real(present, raw, provider)
        judged: Any = "many" if shape != "an object" else {} if not has else {"p": (5 if nonneg else -1) if whole else "5"}
        want = oracle.in_flight(present, judged, "p")
        return got is entry if want == 5 else (not isinstance(got, _Whole) and got == want)

    return exhaust(domain(boolean("a value is there"), SHAPES, boolean("the map has the provider"), boolean("is_int says a whole number"),
                          boolean("the number >= 0")), case, about=[real])


def _token(name: str) -> Any:
    return Opaque(name)


@law("rmw_refuses_broken", "S4b.1", "A document that could not be read or parsed is never written.", PROVED)
def rmw_refuses_broken() -> Evidence:
    """Proved: rmw itself returns the file as it was whenever read gives a reason (``rmw_structure``,
    its callees abstracted), and read gives one exactly where S4b.1 says (``read_exhaust``: read
    itself on every file, get and is_int abstracted, judged by the oracle; ``get_search`` and
    ``is_int_by_class`` prove get and is_int for every object and value). The bounded run of the
    model judged by the oracle, and production, stay."""
    def refuses(case: tuple[m.File, m.Change]) -> bool:
        f, change = case
        after, error = m.rmw(f, change)
        readable, why = _oracle_read(f)
        if not readable:
            return after == f and error == why
        return error is None and after.kind == m.TEXT

    model = bounded(itertools.product(FILES, CHANGES), refuses, label=RMW_LABEL)
    return also(all_of(rmw_structure(), read_exhaust(), get_search(), is_int_by_class()), model).with_production(production_rmw())


@law("rmw_keeps_others", "S4b.1", "A write keeps each key that the change does not touch.", PROVED)
def rmw_keeps_others() -> Evidence:
    """Proved: rmw itself writes apply(the document read, the change) or nothing (``rmw_structure``;
    read gives the file's own document, ``read_exhaust``), and apply keeps every path incomparable
    with the changed one, for every document whose objects name each key once (a JSON object's
    keys): induction on the length of the changed path, of bend.config.apply (``rmw_induction``:
    apply's unfolding on its code, put's and remove's facts over their generated encodings, the
    reading lemmas). The bounded run of the model judged by reading paths, and production, stay."""
    paths = (("a",), ("b",), ("version",), ("a", "c"), ("b", "c"))

    def keeps(case: tuple[m.File, m.Change]) -> bool:
        f, change = case
        before = m.read(f)
        if not _oracle_read(f)[0]:
            return True
        assert isinstance(before, Obj)
        after, _ = m.rmw(f, change)
        for path in paths:
            touched = path[: len(change.path)] == change.path or change.path[: len(path)] == path
            if not touched and _at(before, path) != _at(after.value, path):
                return False
        return True

    return also(all_of(rmw_structure(), read_exhaust(), rmw_proofs()[0]),
                bounded(itertools.product(FILES, CHANGES), keeps, label=RMW_LABEL)).with_production(production_rmw())


@law("rmw_applies_change", "S4b.1", "The key that the change sets has the value that it sets (a removed key is gone).", PROVED)
def rmw_applies_change() -> Evidence:
    """Proved, as rmw_keeps_others: the changed path of the document written holds the value put,
    or nothing after a remove (induction on the length of the path, of bend.config.apply)."""
    def applies(case: tuple[m.File, m.Change]) -> bool:
        f, change = case
        if not _oracle_read(f)[0]:
            return True
        after, _ = m.rmw(f, change)
        found = _at(after.value, change.path)
        return found == ((False, None) if change.remove else (True, change.value))

    return also(all_of(rmw_structure(), read_exhaust(), rmw_proofs()[1]),
                bounded(itertools.product(FILES, CHANGES), applies, label=RMW_LABEL)).with_production(production_rmw())


def _settings_files() -> tuple[m.File, ...]:
    out = [m.File(m.MISSING), m.File(m.UNREADABLE), m.File(m.INVALID)]
    for retry, transport in itertools.product((None, True, "x"), (None, "sse", 3)):
        pairs: dict[str, Value | None] = {"transport": transport}
        if retry is not None:
            pairs["retry"] = Obj((("enabled", retry),))
        out.append(m.File(m.TEXT, _obj(pairs)))
    return tuple(out)


SETTINGS_FILES = _settings_files()


UNDECLARED_ID = "an undeclared id"
SETTER_IDS = Finite("the id (each declared setting of the model's table; or an undeclared id: any text, which lookup does not find)",
                    tuple(d.id for d in m.SETTINGS) + (UNDECLARED_ID,))
VERDICTS = Finite("the value's check (valid, or each CvarError kind)", (None, "Undeclared", "BadValue", "Global", "NotBool"))
WRITES = Finite("the writer's outcome (written, refused)", ("written", "refused"))
SHADOWS = Finite("a higher layer's valid set (none, the global config.cfg)", (None, "global config.cfg"))


@functools.cache
def setter_proof() -> Evidence:
    """m.setter run on opaque disk, loaded copy, value and higher layers, with its callees abstracted
    to every outcome (lookup: the declaration or nothing; check: valid or each error kind; rmw:
    written or refused; shadowed: none or a file): it never reads the loaded copy, refuses without writing when the id is undeclared, the
    value is refused or the writer refuses, and otherwise returns exactly rmw(disk, the change
    putting the value at the id's key path), the path of the seed (the id's dotted parts)."""
    disk: Any = Opaque("disk")
    loaded: Any = Opaque("loaded copy")
    value: Any = Opaque("value")
    higher: Any = Opaque("higher layers")
    after: Any = Opaque("after")

    def case(named: str, verdict: str | None, write: str, where: str | None) -> bool:
        calls: list[str] = []
        undeclared = named == UNDECLARED_ID
        cvar = _Unread("no.such.setting") if undeclared else named

        def lookup(reg: Any, name: str) -> Any:
            calls.append("lookup")
            if reg is not m.SETTINGS or name is not cvar:
                raise LawFailed("setter looked up something else")
            return None if undeclared else Opaque("declaration")

        def check(reg: Any, s: Set, local_only: bool) -> Any:
            calls.append("check")
            if s.id != cvar or s.value is not value or local_only is not False:
                raise LawFailed(f"setter checked {s!r}, local_only={local_only}")
            return None if verdict is None else CvarError(verdict, cvar)

        def rmw(f: Any, change: m.Change) -> Any:
            calls.append("rmw")
            if f is not disk or change.path != tuple(cvar.split(".")) or change.value is not value or change.remove is not False:
                raise LawFailed(f"setter wrote {change!r} to {f!r}")
            return (after, None) if write == "written" else (f, "the reason")

        def shadowed(reg: Any, layers: Any, name: str) -> Any:
            calls.append("shadowed")
            if layers is not higher or name != cvar:
                raise LawFailed("setter asked for the shadow of something else")
            return where

        with callees(m, lookup=lookup, check=check, rmw=rmw, shadowed=shadowed):
            got, result = m.setter(m.SETTINGS, disk, loaded, cvar, value, higher)
        if undeclared:
            return got is disk and str.__eq__(result, "CvarError::Undeclared(" + cvar + ")") and calls == ["lookup"]
        if verdict is not None:
            return got is disk and result == f"CvarError::{verdict}({cvar})" and calls == ["lookup", "check"]
        if write == "refused":
            return got is disk and result == "refused: the reason" and calls == ["lookup", "check", "rmw"]
        want = "Persisted" if where is None else f"Persisted::Shadowed({where})"
        return got is after and result == want and calls == ["lookup", "check", "rmw", "shadowed"]

    return exhaust(domain(SETTER_IDS, VERDICTS, WRITES, SHADOWS), case, about=[m.setter])


@law("settings_save_preserves", "S4b.2", "A setter writes the document on disk with its key changed, whatever copy it loaded.", PROVED)
def settings_save_preserves() -> Evidence:
    """Proved: the setter, run on opaque documents with its callees abstracted to each of their
    outcomes (``setter_proof``, a whole finite domain: every declared id, and an undeclared one
    that lookup does not find), never reads its loaded copy and writes exactly rmw(disk, the change
    at the id's key path) or nothing; rmw writes apply(the document on disk, the change) or nothing
    (``rmw_structure``, ``read_exhaust``), and apply changes that key and keeps every other
    (rmw_keeps_others, rmw_applies_change: induction on the path, of bend.config.apply, over put's
    and remove's encodings generated from their code). The bounded run of the whole setter (real
    callees, typing judged) and production stay."""
    values: dict[str, tuple[Value, ...]] = {"retry.enabled": (True, False, "no"), "transport": ("sse", "websocket", 3)}

    def cases() -> Iterator[tuple[m.File, m.File, str, Value, bool]]:
        for disk, loaded in itertools.product(SETTINGS_FILES, repeat=2):
            for cvar, vs in values.items():
                for v in vs:
                    for shadow in (False, True):
                        yield disk, loaded, cvar, v, shadow

    def preserves(case: tuple[m.File, m.File, str, Value, bool]) -> bool:
        disk, loaded, cvar, v, shadow = case
        higher = (("global config.cfg", False, (Set(cvar, v),) if shadow else ()),)
        after, result = m.setter(m.SETTINGS, disk, loaded, cvar, v, higher)
        decl = m.lookup(m.SETTINGS, cvar)
        assert decl is not None
        if not m.has_type(decl.type, v):
            return after == disk and result.startswith("CvarError::BadValue")
        want, error = m.rmw(disk, m.Change(m.path_of(cvar), v, False))
        if error is not None:
            return after == disk and result == "refused: " + error
        return after == want and result == ("Persisted::Shadowed(global config.cfg)" if shadow else "Persisted")

    keeps, applies = rmw_proofs()
    checked = bounded(cases(), preserves, label=f"{len(SETTINGS_FILES)} disk files x {len(SETTINGS_FILES)} loaded copies x 2 ids x 3 values x 2 higher layers")
    return also(all_of(setter_proof(), rmw_structure(), read_exhaust(), keeps, applies), checked).with_production(production_setters())


def _documents() -> Iterator[tuple[Obj, bool]]:
    retries: tuple[Value | None, ...] = (None, True, Obj((("enabled", True),)), Obj((("enabled", 3),)))
    transports: tuple[Value | None, ...] = (None, "sse", 3)
    others: tuple[Value | None, ...] = (None, 1, Obj((("x", 1),)))
    servers: tuple[Value | None, ...] = (None, Obj((("git", Obj((("command", "g"),))),)), Obj((("git", "x"),)), 5)
    dotted: tuple[Value | None, ...] = (None, True, 3)  # a top-level key "retry.enabled": a name no setting has
    for r, t, o, s, d in itertools.product(retries, transports, others, servers, dotted):
        for project in (False, True):
            yield _obj({"retry": r, "transport": t, "bogus": o, "mcpServers": s, "retry.enabled": d, "defaultModel": "m" if project else None}), project


LEAF_LABEL = "4 retry x 3 transport x 3 undeclared x 4 mcpServers x 3 dotted retry.enabled x global or project"


def _leaf_paths(doc: Obj) -> tuple[str, ...]:
    """Every leaf of a document, found by a walk independent of the model's: a value that is
    not an object, the whole value of a cvar, or an mcpServers entry."""
    ids = {d.id for d in m.SETTINGS}
    out: list[str] = []
    todo: list[tuple[tuple[str, ...], Value]] = [((k,), v) for k, v in doc.pairs]
    while todo:
        keys, v = todo.pop()
        entry = len(keys) == 2 and keys[0] == "mcpServers"  # an MCP server entry, whatever its name holds (a dot too)
        if "." in keys[-1] and not entry:  # S4b.3: the Settings type's keys are names; a dotted key is a leaf named in quotes
            out.append(".".join(keys[:-1] + (f'"{keys[-1]}"',)))
            continue
        path = ".".join(keys)
        if path in ids or not isinstance(v, Obj) or entry:
            out.append(path)
        else:
            todo.extend((keys + (k,), inner) for k, inner in v.pairs)
    return tuple(out)


def _as_obj(doc: Any) -> Obj:
    value = m.from_json(doc)
    assert isinstance(value, Obj)
    return value


def _named_covers(named: tuple[tuple[str, str], ...], path: str) -> bool:
    return any(path == p or path.startswith(p + ".") for p, _ in named)


def _doc_st() -> Any:
    """Settings documents from every declared setting of the model's table, undeclared and unicode
    keys, nested objects, and values of every JSON kind (huge, negative, fractions, text)."""
    from hypothesis import strategies as st

    keys = st.sampled_from(sorted({part for d in m.SETTINGS for part in d.id.split(".")} | {"mcpServers", "bogus", "ß", "", "retry.enabled", "a.b"}))
    leaf = st.sampled_from([None, True, False, 0, 3, -1, 10**30, -(10**30), 2.5, "off", "none", "sse", "auto", "x", "", "ß"])
    tree = st.recursive(leaf, lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(keys, inner, max_size=3)), max_leaves=6)
    docs = st.dictionaries(keys, tree, max_size=4)
    return st.one_of(docs, docs.map(lambda d: dict(d, version=1)))  # a readable document: no version, or 1


def leaves_agree(doc: Any, project: bool) -> bool:
    """The model and production apply and name the same leaves of a document."""
    from eukhe.settings import config as production
    from eukhe.settings.cvar_table import registry

    model_doc = m.from_json(doc)
    assert isinstance(model_doc, Obj)
    applied, named = m.leaves(m.SETTINGS, model_doc, project)
    ids = {d.id for d in m.SETTINGS}
    found = production.leaves(registry(), doc, project=project)
    p_applied = {k for k in found.applied if k in ids or k == "version" or k.startswith("mcpServers.")}
    if {k for k, _ in applied} != p_applied:
        raise LawFailed(f"{doc!r}: model applies {sorted(k for k, _ in applied)}, production {sorted(p_applied)}")
    m_named = sorted((path, kind) for path, kind in named if path not in found.applied)  # production declares more settings
    p_named = sorted((path, error.kind) for path, error in found.named)
    if m_named != p_named:
        raise LawFailed(f"{doc!r}: model names {m_named}, production {p_named}")
    return True


def leaf_hunt(check: Any) -> Evidence:
    from hypothesis import strategies as st

    from spec.evidence import examples

    def prop(doc: Any, project: bool) -> bool:
        model_doc = m.from_json(doc)
        assert isinstance(model_doc, Obj)
        return check((model_doc, project)) and leaves_agree(doc, project)

    return examples(prop, doc=_doc_st(), project=st.booleans())


@law("leaf_applied_or_reported", "S4b.3", "Each leaf applies or is named by a diagnostic.", BOUNDED)
def leaf_applied_or_reported() -> Evidence:
    """Not proved: the walk over nested objects of any depth, interleaved with the typing of every
    cvar kind, has no encoding here. The judge walks key paths as tuples (an MCP server whose name
    holds a dot is one entry: the dotted-path judge counted its fields as leaves); keys with a dot
    are checked explicitly beside the bounded domain and the hunt."""
    def covered(case: tuple[Obj, bool]) -> bool:
        doc, project = case
        applied, named = m.leaves(m.SETTINGS, doc, project)
        paths = {p for p, _ in applied}
        return all(p in paths or _named_covers(named, p) for p in _leaf_paths(doc))

    dotted = (
        {"mcpServers": {"a.b": {"command": "g"}, "c": 1}},
        {"retry.enabled": True},
        {"retry.enabled": True, "retry": {"enabled": 3}},
        {"retry.enabled": 3, "retry": {"enabled": True}},
        {"retry": {"enabled.x": True}},
    )
    named = bounded(
        [(doc, project) for doc in dotted for project in (False, True)],
        lambda case: covered((_as_obj(case[0]), case[1])) and leaves_agree(*case),
        label="keys with a dot, on the model and production: an MCP server named a.b, a top-level retry.enabled (alone, beside a nested retry.enabled), a nested enabled.x",
    )
    return also(all_of(bounded(_documents(), covered, label=LEAF_LABEL), named), leaf_hunt(covered))


@law("leaf_not_both", "S4b.3", "No leaf both applies and is named.", BOUNDED)
def leaf_not_both() -> Evidence:
    def once(case: tuple[Obj, bool]) -> bool:
        doc, project = case
        applied, named = m.leaves(m.SETTINGS, doc, project)
        return not any(_named_covers(named, p) for p, _ in applied) and len({p for p, _ in applied}) == len(applied)

    return also(bounded(_documents(), once, label=LEAF_LABEL), leaf_hunt(once))


ENTRIES: tuple[Value, ...] = (0, 3, -1, 2.5, "3", True, False, None, Obj(()), (), 10**30, -(10**30), 1.0, "", "ß")
RAWS: tuple[tuple[bool, Value], ...] = ((False, None), (True, 5), (True, "many"), (True, (2,)), (True, Obj(())), (True, None), (True, True), (True, 2.5)) + tuple(
    (True, Obj((("p", e),))) for e in ENTRIES
) + tuple((True, Obj((("other", e),))) for e in ENTRIES[:3])


@functools.cache
def limit_proofs() -> Evidence:
    """Both limit laws: in_flight itself on every shape (``in_flight_exhaust``), get and is_int for
    every object and value, judged by S4b.4; and model and production judged by the oracle on
    every value of RAWS."""
    judged = bounded(RAWS, limits_judged, label=f"model and production judged by S4b.4 on {len(RAWS)} values")
    return also(all_of(in_flight_exhaust(), get_search(), is_int_by_class()), judged)


def limits_judged(case: tuple[bool, Value]) -> bool:
    """model and production give the oracle's limit (S4b.4 word for word)."""
    from eukhe.settings.config import MISSING, in_flight

    present, raw = case
    want = oracle.in_flight(present, to_json(raw), "p")
    got = (m.in_flight(present, raw, "p"), in_flight(to_json(raw) if present else MISSING, "p"))
    if got != (want, want):
        raise LawFailed(f"providerMaxInFlight {raw!r}: oracle {want}, model and production {got}")
    return True


@law("limit_malformed_fails_closed", "S4b.4", "A malformed in-flight limit limits to 1, never to no limit.", PROVED)
def limit_malformed_fails_closed() -> Evidence:
    """Proved: in_flight itself, on every shape of providerMaxInFlight with its callees abstracted,
    gives the limit of S4b.4 (the oracle), so a value that is not a map, or an entry that is not a
    whole number >= 0, limits to 1; get and is_int proved for every object and value. Production
    judged by the oracle on the bounded values."""
    return limit_proofs().with_production(bounded(RAWS, limits_judged, label=f"production in_flight judged by S4b.4 on {len(RAWS)} values"))


@law("limit_number_applies", "S4b.4", "A whole-number entry is its provider's limit.", PROVED)
def limit_number_applies() -> Evidence:
    """Proved, as limit_malformed_fails_closed: a whole-number entry >= 0 is the limit itself.
    Production's slots then hold that many requests at once and no more (``slots_hold_the_limit``)."""
    judged = bounded(RAWS, limits_judged, label=f"production in_flight judged by S4b.4 on {len(RAWS)} values")
    held = bounded((0, 1, 2, 3), slots_hold_the_limit, label="production's slots (eukhe.agent.inflight) under limits 0..3: that many requests at once, the next waits for one to end")
    return limit_proofs().with_production(judged).with_production(held)


def _locked(path: Path) -> bool:
    """Whether another open file of ``path`` holds its lock (a try of our own fails)."""
    import fcntl

    fd = os.open(path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def slots_hold_the_limit(limit: int) -> bool:
    """S4b.4 "at most N requests of a provider at once": with ``limit`` requests of a provider
    holding their slots (real lock files in a fresh agent dir), one more waits (it is told the slot
    it waits on) and does not start until one of them ends; then it starts, although another
    request waited on the same slot and was given up (its turn aborted) before the slot came free;
    once both have had the slot, no slot stays locked. A limit of 0 is taken as 1 (derived: no
    request could ever run). The wait is bounded only as a failure (a request that never starts
    fails the law)."""
    import asyncio
    import contextlib
    from concurrent.futures import ThreadPoolExecutor

    from eukhe.agent.inflight import Slots

    at_once = max(1, limit)

    async def run() -> bool:
        loop = asyncio.get_running_loop()
        loop.set_default_executor(ThreadPoolExecutor(max_workers=1))  # the waits run in the order they began
        with tempfile.TemporaryDirectory(prefix="eukhe-inflight-law-") as agent:
            waits: list[int] = []
            told = asyncio.Event()

            def on_wait(index: int) -> None:
                waits.append(index)
                told.set()

            slots = Slots(Path(agent), "p", limit, on_wait)
            async with contextlib.AsyncExitStack() as holding:
                indexes = [await holding.enter_async_context(slots.held()) for _ in range(at_once)]
                if sorted(indexes) != list(range(at_once)) or waits:
                    raise LawFailed(f"limit {limit}: {at_once} requests took slots {indexes}, waited {waits}")
                released, entered = asyncio.Event(), asyncio.Event()

                async def one_more() -> int:
                    async with slots.held() as index:
                        entered.set()
                        await released.wait()  # its slot is its own once the others ended: locked by it
                        if not _locked(slots.dir / f"{index}.lock"):
                            raise LawFailed(f"limit {limit}: a request holds slot {index} unlocked")
                        return index

                extra = asyncio.ensure_future(one_more())
                either = [asyncio.ensure_future(told.wait()), asyncio.ensure_future(entered.wait())]
                await asyncio.wait(either, timeout=60, return_when=asyncio.FIRST_COMPLETED)
                for task in either:
                    task.cancel()
                if entered.is_set() or waits != [os.getpid() % at_once]:
                    raise LawFailed(f"limit {limit}: a request past the limit started (or waited on {waits})")
                told.clear()

                async def given_up() -> None:
                    async with slots.held():
                        raise LawFailed(f"limit {limit}: a request given up as it waited took a slot")

                quitter = asyncio.ensure_future(given_up())
                await asyncio.wait_for(told.wait(), 60)
                quitter.cancel()  # its turn is aborted while it waits on the slot
                with contextlib.suppress(asyncio.CancelledError):
                    await quitter
            # the holders ended (the stack closed): the waiting request starts, on the slot it waited
            # on, whichever waiter the lock went to first (one given up holds it not at all)
            released.set()
            started = await asyncio.wait_for(extra, 60)
            await loop.run_in_executor(None, lambda: None)  # after the wait of the request given up
            kept = [index for index in range(at_once) if _locked(slots.dir / f"{index}.lock")]
            if kept:
                raise LawFailed(f"limit {limit}: slots {kept} stay locked once every request has ended or was given up")
            return started == waits[0]

    return asyncio.run(run())


GIT0 = Obj((("command", "g"), ("url", "https://global")))
GIT1 = Obj((("command", "p"),))
WEB0 = Obj((("command", "w"), ("headers", Obj((("Authorization", "secret"),)))))

World = tuple[Obj, Obj, tuple[Set, ...], tuple[Set, ...], tuple[str, ...]]


def _trust_worlds() -> Iterator[World]:
    for trusted_list, mtr, gserv in itertools.product((None, ("PROJECT",), ("other",)), (None, 7), (None, "git", "web")):
        servers = None if gserv is None else Obj(((gserv, GIT0 if gserv == "git" else WEB0),))
        g = _obj({"trustedProjects": trusted_list, "maxToolRounds": mtr, "mcpServers": servers})
        for pm, pt, pa, ps, pv in itertools.product((None, 9, "x"), (None, "sse"), (None, True), (False, True), (None, 1)):
            p = _obj({"version": pv, "maxToolRounds": pm, "transport": pt, "autonomous": None if pa is None else Obj((("enabled", True),)),
                      "mcpServers": Obj((("git", GIT1),)) if ps else None})
            for pcfg in ((), (Set("maxToolRounds", 11),), (Set("transport", "websocket"),), (Set("maxToolRounds", 11), Set("maxToolRounds", 12))):
                for gcfg in ((), (Set("trustedProjects", ("PROJECT",)),)):
                    for prompts in ((), ("SYSTEM.md",), ("APPEND_SYSTEM.md",), ("SYSTEM.md", "APPEND_SYSTEM.md")):
                        yield g, p, gcfg, pcfg, prompts


TRUST_LABEL = "18 global documents x 48 project documents (with and without their version) x 4 project cfgs (two sets of one id among them) x 2 global cfgs x 4 prompt sets"


def _is_trusted(world: World) -> bool:
    g, _, gcfg, _, _ = world
    gsets = tuple(Set(k, v) for k, v in m.leaves(m.SETTINGS, g, False)[0])
    return m.trusted("PROJECT", (gsets, gcfg))


def _items() -> tuple[str, ...]:
    """Every item a project can bring: every declared setting of production's table and of the
    model's, every name of the seed's S4b.5 list, the prompts, server entries and a group's child."""
    from eukhe.settings.cvar_table import TABLE

    found = {c.id for c in TABLE} | {d.id for d in m.SETTINGS} | set(oracle.GUARDED) | set(oracle.NAMED_SETTINGS)
    found |= {"mcpServers.git", "mcpServers.", "kernelTransport.kind", "autonomous.anything", "directorsX", "maxToolRoundsX", "SYSTEM.mdX", ""}
    return tuple(sorted(found))


@functools.cache
def guarded_items() -> Evidence:
    """The guarded predicate of the model and of production is the seed's list on every item: a
    whole finite domain (every declared id of both tables, every name the seed lists)."""
    from eukhe.settings.cvar_table import TABLE
    from eukhe.settings.config import guarded as production_guarded

    declared = {c.id for c in TABLE}
    for name in oracle.GUARDED_SETTINGS:
        if name not in declared and not any(i.startswith(name + ".") for i in declared):
            raise LawFailed(f"the seed guards {name}, which production does not declare")

    def same(item: str) -> bool:
        want = oracle.guarded(item)
        if m.guarded(item) != want or production_guarded(item) != want:
            raise LawFailed(f"{item!r}: the seed's S4b.5 says guarded={want}, model {m.guarded(item)}, production {production_guarded(item)}")
        return True

    items = Bound("items", _items(), bound="every declared setting of both tables, every name of S4b.5, and a few server entries and near-miss names (an item is any text)")
    return exhaust(domain(items), same)


@law("untrusted_changes_nothing_guarded", "S4b.5", "An untrusted project changes no limit, prompt or credential.", BOUNDED)
def untrusted_changes_nothing_guarded() -> Evidence:
    def nothing(world: World) -> bool:
        if _is_trusted(world):
            return True
        g, p, gcfg, pcfg, prompts = world
        values, applied_prompts, withheld = m.effective(m.SETTINGS, g, p, gcfg, pcfg, prompts, False)
        bare, _, _ = m.effective(m.SETTINGS, g, Obj(()), gcfg, (), (), False)
        table, bare_table = dict(values), dict(bare)
        for key in set(table) | set(bare_table):
            if oracle.guarded(key) and table.get(key) != bare_table.get(key):
                return False
        return applied_prompts == () and all(oracle.guarded(w) for w in withheld)

    worlds = bounded(_trust_worlds(), nothing, label=TRUST_LABEL)
    return all_of(worlds, guarded_items()).with_production(all_of(guarded_items(), production_untrusted()))


@functools.cache
def production_untrusted() -> Evidence:
    """production's config.load on real files: an untrusted project that sets every setting of the
    table (a valid value of its type) in its settings.json and config.cfg, and brings both prompts
    and an MCP entry, changes exactly the settings the seed does not guard."""
    from eukhe.settings import config as production
    from eukhe.settings.cfg import set_line
    from eukhe.settings.cvar import Cvars
    from eukhe.settings.cvar_table import TABLE, registry

    reg = registry()
    samples = {"Bool": lambda d: not d, "Nat": lambda d: d + 7, "NatOrOff": lambda d: 9, "String": lambda d: "x" + str(d),
               "Float": lambda d: 0.5, "Enum": None, "List": lambda d: ["p"], "Map": lambda d: {"k": 1} if "Nat" in repr(d) else {}}
    checked = 0
    for trusted in (False, True):
        with tempfile.TemporaryDirectory(dir=_FAST_TMP) as root:
            agent, project = Path(root) / "agent", Path(root) / "proj"
            (project / ".eukhe").mkdir(parents=True)
            agent.mkdir()
            if trusted:
                (agent / "settings.json").write_text(json.dumps({"trustedProjects": [str(project)]}), encoding="utf-8")
            local: dict[str, Any] = {}
            for cvar in TABLE:
                kind = cvar.type.kind
                if kind == "Enum":
                    value: Any = [c for c in cvar.type.choices if c != cvar.default][0]
                elif kind == "Map":
                    value = {"k": 1} if cvar.type.item is not None and cvar.type.item.kind == "Nat" else {"k": ["a"]} if cvar.type.item is not None and cvar.type.item.kind == "List" else {"k": "v"}
                else:
                    maker = samples[kind]
                    assert maker is not None
                    value = maker(cvar.default)
                if cvar.scope == "Local":
                    local[cvar.id] = value
            nested: dict[str, Any] = {}
            for key, value in local.items():
                at = nested
                parts = key.split(".")
                for part in parts[:-1]:
                    at = at.setdefault(part, {})
                at[parts[-1]] = value
            nested["mcpServers"] = {"git": {"command": "evil"}}
            (project / ".eukhe" / "settings.json").write_text(json.dumps(nested), encoding="utf-8")
            (project / ".eukhe" / "config.cfg").write_text("".join(set_line(k, v) + "\n" for k, v in local.items()), encoding="utf-8")
            for name in oracle.PROMPTS:
                (project / ".eukhe" / name).write_text("be evil", encoding="utf-8")
            loaded = production.load(reg, production.Paths(agent, project))
            warning = loaded.trust_warning()
            if (warning is None) != trusted or (warning is not None and not all(w in warning for w in loaded.withheld)):
                raise LawFailed(f"the trust warning {warning!r} does not name what was withheld")
            # a prompt that is not UTF-8 is a settings error; odd trustedProjects entries trust nothing
            (project / ".eukhe" / "SYSTEM.md").write_bytes(bytes([0xFF, 0xFE]))
            (agent / "config.cfg").write_text('set trustedProjects "[1, \\"\\", \\"elsewhere\\"]"\n', encoding="utf-8")
            odd = production.load(reg, production.Paths(agent, project))
            if not any("SYSTEM.md" in str(e.show()) for e in odd.errors) and trusted:
                raise LawFailed(f"an unreadable prompt is not named: {[e.show() for e in odd.errors]}")
            cvars = Cvars(reg, loaded.layers)
            for cvar in TABLE:
                if cvar.id not in local:
                    continue
                changed = cvars.value([], cvar.id) != cvar.default
                if changed != (trusted or not oracle.guarded(cvar.id)):
                    raise LawFailed(f"production: a {'trusted' if trusted else 'untrusted'} project {'changed' if changed else 'did not change'} {cvar.id}")
                checked += 1
            if (("git" in loaded.servers) != trusted) or (bool(loaded.prompts) != trusted):
                raise LawFailed(f"production: trusted={trusted} servers {loaded.servers} prompts {sorted(loaded.prompts)}")
    return Evidence(BOUNDED, f"production load on real files: every Local setting of the table set by a project, untrusted and trusted ({checked} settings judged by the seed's list)")


@law("trusted_project_applies", "S4b.5", "A trusted project's item applies (unless a later layer sets it).", BOUNDED)
def trusted_project_applies() -> Evidence:
    def applies(world: World) -> bool:
        if not _is_trusted(world):
            return True
        g, p, gcfg, pcfg, prompts = world
        values, applied_prompts, withheld = m.effective(m.SETTINGS, g, p, gcfg, pcfg, prompts, True)
        table = dict(values)
        later = {s.id for s in gcfg + pcfg}
        for key, v in m.leaves(m.SETTINGS, p, True)[0]:
            if key != "version" and key not in later and table.get(key) != v:  # a document's version is no setting
                return False
        last = {s.id: s for s in pcfg if m.check(m.SETTINGS, s, True) is None}  # of two sets of an id, the later applies
        for s in last.values():
            if table.get(s.id) != s.value:
                return False
        return applied_prompts == prompts and withheld == ()

    return all_of(bounded(_trust_worlds(), applies, label=TRUST_LABEL), guarded_items()).with_production(production_untrusted())


SERVER_MAPS = tuple(
    Obj(tuple((n, e) for n, e in zip(("git", "web"), pick) if e is not None))
    for pick in itertools.product((None, GIT0, GIT1, WEB0), repeat=2)
)


# -- proofs of the mcpServers laws: put's encoding generated from its code -----------------------------
#
# put(o, k, v) = Obj(sorted(pairs of o whose key is not k, then (k, v))): spec.z3gen translates it,
# the entries carried as values of a sort nothing constrains (put never reads one), the filter and
# sorted() with the facts that define them (spec.z3gen.side_facts: a filter keeps exactly the pairs
# whose condition holds, sorted gives a permutation; the order sorted picks is not encoded, so the
# proofs hold whatever it is). An object ``holds`` w at n when it has a pair (n, w) and each of its
# pairs of name n holds w: what the name reads as, however the object is searched (first pair,
# last pair, a dict of the pairs).

PUT = generated(m.put)
REMOVE = generated(m.remove)


def _has(o: Any, name: Any, entry: Any) -> Any:
    at = z3.FreshInt("a")
    keys, entries = o.pairs.array
    return z3.Exists([at], z3.And(0 <= at, at < o.pairs.length, keys[at] == name, entries[at] == entry))


def _only(o: Any, name: Any, entry: Any) -> Any:
    at = z3.FreshInt("b")
    keys, entries = o.pairs.array
    return z3.ForAll([at], z3.Or(z3.Not(z3.And(0 <= at, at < o.pairs.length, keys[at] == name)), entries[at] == entry))


def _none(o: Any, name: Any) -> Any:
    """o has no pair of the name."""
    at = z3.FreshInt("c")
    keys, _ = o.pairs.array
    return z3.ForAll([at], z3.Not(z3.And(0 <= at, at < o.pairs.length, keys[at] == name)))


def _holds(o: Any, name: Any, entry: Any) -> Any:
    return z3.And(_has(o, name, entry), _only(o, name, entry))


@functools.cache
def put_proofs() -> tuple[Evidence, Evidence]:
    """``put_steps`` over the encodings of bend.config.put and remove generated from their code."""
    return put_steps(PUT, REMOVE)


def put_steps(put_of: z3gen.Generated, remove_of: z3gen.Generated) -> tuple[Evidence, Evidence]:
    """(sets, keeps), for every object o (pairs of any number, names and entries any), name k,
    entry v, name n other than k and entry w: (sets) put(o, k, v) holds v at k; (keeps) when o
    holds w at n, so does put(o, k, v). Five z3 proofs over the encodings generated from the code
    (ties proved), each one step of the argument, from the facts of the one way of sorted() or of
    the filter that step reads (``side_facts(..., only=...)``; fewer true facts, so each holds
    all the more), so each check is small: sets is (has) the pair (k, v) is in put(o, k, v)
    (sorted back: the appended pair is at some index of the result) and (alone) every pair of
    name k in put(o, k, v) holds v (sorted forward, filter forward: a pair of the result is the
    appended one or one the filter kept, whose name is not k); keeps is (survives) a pair (n, w)
    of o at any index is a pair of remove(o, k) (filter back: the filter put runs first, remove's
    code is that filter), (placed) a pair (n, w) of remove(o, k) at any index is a pair of
    put(o, k, v) (sorted back), and (only) when o's pairs of name n all hold w, so do
    put(o, k, v)'s (sorted forward, filter forward)."""
    o = fresh(m.Obj, "o")
    k, n = z3.Strings("k n")
    v, w = z3.Consts("v w", z3gen.OBJECT)
    at = z3.Int("at")
    ties = [put_of.tie, remove_of.tie]
    forward = ("sorted forward", "filter forward")

    def put() -> Any:
        return put_of(o, k, v)

    def removed_at() -> list[Any]:
        kept = remove_of(o, k)
        kept_keys, kept_entries = kept.pairs.array
        return [0 <= at, at < kept.pairs.length, kept_keys[at] == n, kept_entries[at] == w]

    has = prove(
        lambda: _has(put(), k, v),
        assumptions=lambda: [*facts(o), *side_facts(put(), only="sorted back")],
        ties=ties, label="put(o, k, v) has the pair (k, v)",
    )
    alone = prove(
        lambda: _only(put(), k, v),
        assumptions=lambda: [*facts(o), *side_facts(put(), only=forward)],
        ties=ties, label="each pair of name k of put(o, k, v) holds v",
    )
    survives = remove_keeps_pair(remove_of, ties)
    placed = prove(
        lambda: _has(put(), n, w),
        assumptions=lambda: [*facts(o), n != k, *removed_at(), *side_facts(put(), remove_of(o, k), only="sorted back")],
        ties=ties, label="a pair (n, w) of remove(o, k), n other than k, is a pair of put(o, k, v)",
    )
    only = prove(
        lambda: _only(put(), n, w),
        assumptions=lambda: [*facts(o), n != k, _only(o, n, w), *side_facts(put(), only=forward)],
        ties=ties, label="o's pairs of name n, other than k, all hold w: so do put(o, k, v)'s",
    )
    return all_of(has, alone), all_of(survives, placed, only)


def merge_unfolding() -> tuple[Evidence, Evidence]:
    """``m.merge_servers`` itself, run on opaque maps and entries with put abstracted: (base) with no
    project entry it returns the global map as it is; (step) each project entry is put into what
    the entries before it made, and the last put is the result: merge_servers is the left fold of
    put over the project's entries."""
    real = m.merge_servers
    g: Any = Opaque("global map")

    base = exhaust(domain(Finite("a project map with no entry", (Obj(()),))), lambda p: real(g, p) is g, about=[real])

    def step(shape: str) -> bool:
        state: Any = Opaque("the entries before, put into the global map")
        last: Any = Opaque("the result")
        e0: Any = Opaque("an earlier entry")
        e1: Any = Opaque("the entry")
        calls: list[tuple[Any, ...]] = []

        def put(obj: Any, name: str, entry: Any) -> Any:
            calls.append((obj, name, entry))
            return state if len(calls) == 1 else last

        with callees(m, put=put):
            got = real(g, Obj((("a", e0), ("b", e1))))
        return got is last and calls == [(g, "a", e0), (state, "b", e1)]

    return base, exhaust(domain(Finite("a project map of an entry after others (any state before it)", ("any",))), step, about=[real])


@functools.cache
def merge_proofs() -> tuple[Evidence, Evidence]:
    """merge_servers folds the project's entries into the global map one put at a time (checked on
    its code: ``merge_unfolding``). Induction on the number i of project entries folded (names
    distinct: the keys of a JSON object), for an arbitrary entry j and an arbitrary name n: (never
    merges) after entry i, the map holds each entry j <= i, whole, at its name: entry i by put's
    ``sets``, an earlier one (of another name) by put's ``keeps``; (kept) a name n no project entry
    has, whose global entry is w (the global map holds w at n), still holds w: put's ``keeps``.
    put's two facts are proved for every object, name and entry on its code (``put_proofs``)."""
    sets, keeps = put_proofs()
    base, fold = merge_unfolding()
    of = "bend.config.merge_servers"
    return (induction(base, all_of(fold, sets, keeps), of=of, label="the project entries folded"),
            induction(base, all_of(fold, keeps), of=of, label="the project entries folded"))


@law("project_entry_never_merges", "S4b.6", "A project MCP entry applies whole: no URL or credential from the global entry.", PROVED)
def project_entry_never_merges() -> Evidence:
    def whole(case: tuple[Obj, Obj]) -> bool:
        g, p = case
        merged = dict(m.merge_servers(g, p).pairs)  # read as pairs, not by the model's get
        return all(name in merged and merged[name] == entry for name, entry in p.pairs)

    return also(merge_proofs()[0], bounded(((g, p) for g in SERVER_MAPS for p in SERVER_MAPS), whole, label=f"{len(SERVER_MAPS)} x {len(SERVER_MAPS)} entry maps over {{git, web}}"))


@law("global_entry_kept", "S4b.6", "A global entry that the project does not name stays whole.", PROVED)
def global_entry_kept() -> Evidence:
    def kept(case: tuple[Obj, Obj]) -> bool:
        g, p = case
        merged, named = dict(m.merge_servers(g, p).pairs), dict(p.pairs)
        return all(name in merged and merged[name] == entry for name, entry in g.pairs if name not in named)

    return also(merge_proofs()[1], bounded(((g, p) for g in SERVER_MAPS for p in SERVER_MAPS), kept, label=f"{len(SERVER_MAPS)} x {len(SERVER_MAPS)} entry maps over {{git, web}}"))


@functools.cache
def production_setters() -> Evidence:
    """Production's setters on real files under S4b.2, judged by the model's setter:
    - SettingsManager.set on every disk file x loaded copy x id x value x shadowing of the law's
      domain: the document on disk after it, and the answer (Persisted, Shadowed, the refusal);
    - EukheSettings.set_global and toggle_global (the global config.cfg setter): a line another
      writer added after the settings were loaded stays, the value set reads back, a project file
      never changes what a global toggle flips; CvarAgent's sets, toggles, lines, /cvar save and
      settings error rows on a real session (the sets are session state, S4)."""
    from eukhe.session import Store
    from eukhe.settings import config as production
    from eukhe.settings.agent import CvarAgent, EukheSettings
    from eukhe.settings.cvar import CvarError, ExpandError, ParseError
    from eukhe.settings.cvar_table import registry

    reg = registry()
    count = 0
    values: dict[str, tuple[Value, ...]] = {"retry.enabled": (True, False, "no"), "transport": ("sse", "websocket", 3)}
    with tempfile.TemporaryDirectory(dir=_FAST_TMP) as root:
        for number, (disk, loaded) in enumerate(itertools.product(SETTINGS_FILES, repeat=2)):
            for cvar, vs in values.items():
                for v in vs:
                    for shadow in (False, True):
                        agent = Path(root) / f"a{number}-{cvar}-{v}-{shadow}"
                        agent.mkdir()
                        _place(agent / "settings.json", disk)
                        if shadow:
                            from eukhe.settings.cfg import set_line

                            (agent / "config.cfg").write_text(set_line(cvar, to_json(v)) + "\n", encoding="utf-8")
                        higher = (("global config.cfg", False, (Set(cvar, v),) if shadow else ()),)
                        want_file, want = m.setter(m.SETTINGS, disk, loaded, cvar, v, higher)
                        copy: Any = to_json(loaded.value) if loaded.kind == m.TEXT and isinstance(loaded.value, Obj) else {}
                        paths = production.Paths(agent)
                        manager = production.SettingsManager(reg, paths, copy, {paths.global_cfg: "global config.cfg"})
                        try:
                            got = manager.set(cvar, to_json(v)).show()
                        except CvarError as error:
                            got = "CvarError::" + error.kind + "(" + cvar + ")"
                        except Exception as error:  # DocumentError
                            got = "refused: " + getattr(error, "kind", str(error))
                        on_disk = agent / "settings.json"
                        if got != want:
                            raise LawFailed(f"setter {cvar}={v!r} over {disk!r} loaded {loaded!r}: production {got}, model {want}")
                        if want_file.kind == m.TEXT and json.loads(on_disk.read_text(encoding="utf-8")) != to_json(want_file.value):
                            raise LawFailed(f"setter {cvar}={v!r}: production wrote {on_disk.read_text()!r}, model {want_file!r}")
                        count += 1
        # the cfg setter and the session agent
        agent_dir, project = Path(root) / "cfg-agent", Path(root) / "cfg-project"
        (project / ".eukhe").mkdir(parents=True)
        agent_dir.mkdir()
        settings = EukheSettings(agent_dir, project, reg)
        (agent_dir / "config.cfg").write_text("set retry.maxRetries 9\n# a comment\n", encoding="utf-8")  # another writer
        settings.set_global("transport", "sse")
        text = (agent_dir / "config.cfg").read_text(encoding="utf-8")
        if "set retry.maxRetries 9" not in text or "# a comment" not in text or settings.cvars.value([], "transport") != "sse":
            raise LawFailed(f"set_global lost another writer's line or its value: {text!r}")
        (project / ".eukhe" / "config.cfg").write_text("set retry.enabled false\n", encoding="utf-8")
        before = settings.cvars.value([], "retry.enabled")
        flipped = settings.toggle_global("retry.enabled")
        if flipped is not False or "set retry.maxRetries 9" not in (agent_dir / "config.cfg").read_text(encoding="utf-8"):
            raise LawFailed(f"toggle_global flipped the project's value ({before!r} -> {flipped!r})")
        for refused in (lambda: settings.toggle_global("transport"), lambda: settings.set_global("bogus", "1"), lambda: settings.set_global("retry.maxRetries", "-1")):
            try:
                refused()
            except CvarError:
                count += 1
            else:
                raise LawFailed("a refused global set was written")
        (agent_dir / "agents").mkdir(exist_ok=True)
        (agent_dir / "agents" / "main.cfg").write_text('set transport websocket\nalias fast "set transport sse"\nset bogus 1\n', encoding="utf-8")
        (agent_dir / "subagent.cfg").write_text("set retry.enabled false\n", encoding="utf-8")
        store = Store(Path(root) / "sessions")
        with store.create("agent") as session:
            main = session.conversation("main")
            cvar_agent = CvarAgent(settings, main)
            if cvar_agent.value("transport") != "websocket":
                raise LawFailed("the profile of main does not apply")
            outcomes = cvar_agent.run_line('set retry.maxRetries 4; toggle retry.enabled; fast; alias slow "set transport auto"; bind k x; set bogus 2; set defaultModel m')
            if [o for _, o in outcomes][:4] != ["ok", "ok", "ok", "ok"] or cvar_agent.value("transport") != "sse" or cvar_agent.value("retry.maxRetries") != 4:
                raise LawFailed(f"run_line: {outcomes!r}")
            for bad in ("nosuchalias", 'set "unclosed'):
                try:
                    cvar_agent.run_line(bad)
                except (ExpandError, ParseError):
                    count += 1
                else:
                    raise LawFailed(f"run_line {bad!r} ran")
            cvar_agent.set("transport", "websocket")
            cvar_agent.toggle("retry.enabled")
            saved = dict(cvar_agent.save())
            if saved.get("transport") != "websocket" or "retry.maxRetries" not in saved:
                raise LawFailed(f"/cvar save wrote {saved!r}")
            main.commit(documents={"eukhe.cvar.agent": {"sets": [], "aliases": [["broken", 'set "x'], ["short"]]}})
            rows = cvar_agent.show_errors()
            if not rows or cvar_agent.show_errors():
                raise LawFailed(f"settings error rows {rows!r} (shown once)")
            main.commit(documents={"eukhe.cvar.agent": "not an object"})
            family = cvar_agent.family_json()
            if family[0]["name"] != "main":
                raise LawFailed(f"family {family!r}")
            count += 1
        # the other entry points of the documents: auth reads, a setter that loads its copy itself
        auth = production.AuthStorage(Path(root) / "auth.json")
        auth.set("openai", {"key": "k"})
        if auth.get("openai") != {"key": "k"}:
            raise LawFailed("auth.json does not read back")
        for state in (m.File(m.MISSING), m.File(m.INVALID), m.File(m.TEXT, Obj((("transport", "sse"),)))):
            lone = Path(root) / f"lone-{state.kind}-{count}"
            lone.mkdir()
            _place(lone / "settings.json", state)
            readable = _oracle_read(state)[0]
            try:
                production.set_setting(reg, production.Paths(lone), "retry.enabled", False)
                production.SettingsManager(reg, production.Paths(lone))
                if not readable:
                    raise LawFailed(f"set_setting wrote over {state!r}")
            except Exception as error:
                if readable or not hasattr(error, "kind"):
                    raise
            count += 1
    return Evidence(BOUNDED, f"production setters on real files: SettingsManager on the law's domain, the global config.cfg setter and a session agent ({count:,} checks)")
