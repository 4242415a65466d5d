"""The planner core: the built sizes, the view, the compaction view and their batched fit, on
native int vectors (memory.md §3, rules 19, 22-24, 33; F1). The hot path of the chat memory.

This module is pure Python and is also compiled with mypyc (``python -m eukhe.corebuild``,
run by the Makefile before the tests); ``eukhe.memory.view.CORE`` is the form in use. Both forms
run the same source and must give the same results: the bridge replays on each, and a
differential test checks the fit against the model (bend.optchat.view) on random histories.
It imports nothing from eukhe, so the compiled module stands alone.

Every sequence of ints is a ``librt.vecs.vec[i64]`` (the built sizes: ``vec[i32]`` chunks)
(librt: mypyc's runtime library on PyPI):
compiled, its items are unboxed 64-bit ints read and written inline, with no int object made or
compared (about 4 times fewer instructions a message than lists of ints); in the pure form it is
librt's C vector, slower than a list but the same values. ``append`` returns the vector (it may
move), so every append is assigned back.

Representation (no tuples, no closures on the per-message path):

- a node ``(l, i)`` is one int, ``code = i << 6 | l``: its right sibling is ``code + 64``, its
  first message ``(code >> 6) << l``, its parent ``(code >> 7) << 6 | (l + 1)``;
- the built sizes (``Sizes``, ``get``/``put``): node ``(l, i)``'s built line's size, 0 while it
  is not built, an i32 at the node's in-order place ``g = i * 2^(l+1) + 2^l - 1`` (every level in
  one array: message ``t`` is at ``2t``, and a node lies between its two children), kept in
  chunks of 2^13 (zeros until built) that are allocated once and never copied. A message adds
  8 bytes (two places), touches no page twice and sets its size in place; a node of level ``l``
  is built ``2^l`` places before the array's end, so nearly every write falls in the last
  chunk; a fit reads only the sizes of the view's candidate parents;
- a view is two parallel vectors (codes, sizes) and its byte total, kept incrementally; a message
  appends its line, with its final size when it is built at once; ``where`` maps each unbuilt
  message line to its position, so building it resizes the line in O(1);
- the chat's per-message path is one call, ``Planner.message``: the line appended, the parent it
  makes ready reported, and the fit run only when a view is over its ceiling or still shrinking.

The fit (rules 19, 23, 24): with ``T`` fixed, the due of the pair whose left line is ``(l, i)``
is ``(T + 1 - first) / 2^l`` (the seed's production form: ``(T - last) / 2^l`` shifted by 2); it
is kept exact as the integer ``(T + 1 - first) << (S - l)`` with ``S`` the number of levels.
Each candidate pair is one heap entry in two vectors, its due and ``k`` its left line's position:
the heap's first is the most due pair, the oldest (smallest ``k``) among equals. The
candidates are read once; each merge unlinks one line from a linked list and offers at most one
new pair (the parent and its adjacent sibling), so a batch costs O(lines + merges log lines).
A pair in the heap never goes stale: its left line is a left child, so no other merge takes it
or its right sibling.

When the chat view merges, the compaction view is the chat view merged further to its own
floor (rule 33). ``fit`` continues the same heap from the chat view's floor down to the
compaction floor instead of refitting a copy: the heap then holds exactly the candidate pairs
of the fitted view, with the same keys, so the merges are those a fresh fit would make.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable, Iterator
from heapq import heapify, heappop, heappush, heapreplace
from typing import TYPE_CHECKING, Any, Final, cast, final

from librt.vecs import append, extend, vec
from mypy_extensions import i32, i64

SOURCE = ""  # the compiled form records here the sha256 of the source it was built from

PLACEHOLDER: Final = 29  # bytes of "(not summarized yet: zoom it)" (memory.md rule 18)
NO_FIT: Final = -1
KEY_BITS: Final = 62  # a due scaled by 2^depth must fit a native int (see ``fit``)
CHUNK_BITS: Final = 13  # a level's built sizes are kept in chunks of 2^13 (32 KiB of i32)
CHUNK: Final = 1 << CHUNK_BITS
CHUNK_MASK: Final = CHUNK - 1
SIZE_LIMIT: Final = (1 << 31) - 1  # a built size is an i32
PLACE_BITS: Final = 40  # nodes cover messages below 2^39 (their places are below 2^40)
LEVELS: Final = PLACE_BITS - 1

if TYPE_CHECKING:  # aliases for the annotations only (compiled, vec[i64] is not built at run time)
    Ints = vec[i64]
    Chunks = vec[vec[i32]]


@final
class Sizes:
    """The built sizes of one chat's nodes (see ``get``) and ``depth``, one more than the highest
    level stored (at least 1)."""

    def __init__(self) -> None:
        self.chunks: Chunks = vec[vec[i32]]()
        self.depth: i64 = 1


def rows_of(levels: Iterable[Iterable[int]]) -> Sizes:
    """Built sizes given as rows of ints (``levels[l][i]``, any iterables) as the core's sizes;
    the depth is the number of rows (at least 1)."""
    out = Sizes()
    level: i64 = 0
    for row in levels:
        i: i64 = 0
        for length in row:
            put(out, level, i, length)
            i += 1
        level += 1
    if level > out.depth:
        out.depth = level
    return out


def zero_chunk() -> vec[i32]:
    """A chunk of ``CHUNK`` sizes, all 0 (doubled by copies of itself: a few memcpys)."""
    chunk = append(vec[i32](capacity=CHUNK), 0)
    while len(chunk) < CHUNK:
        chunk = extend(chunk, chunk[: CHUNK - len(chunk)])
    return chunk


def get(sizes: Sizes, level: i64, i: i64) -> i64:
    """The built size of node ``(level, i)`` (``level``, ``i`` >= 0), 0 when it is not built.

    The node's place is its in-order index ``i * 2^(level+1) + 2^level - 1`` (distinct for
    every node: ``place + 1`` is ``2^level`` times an odd number), in chunks of ``CHUNK`` i32."""
    if level >= LEVELS or i >> (LEVELS - level) != 0:
        return 0
    place = (i << (level + 1)) | ((1 << level) - 1)
    chunks = sizes.chunks
    c = place >> CHUNK_BITS
    if c >= len(chunks):
        return 0
    return i64(chunks[c][place & CHUNK_MASK])


def put(sizes: Sizes, level: i64, i: i64, length: i64) -> None:
    """Set the built size of node ``(level, i)``."""
    if length < 0 or length > SIZE_LIMIT or i < 0 or level < 0 or level >= LEVELS or i >> (LEVELS - level) != 0:
        raise ValueError(f"a built size is 0..{SIZE_LIMIT} bytes at a node (l, i) with 0 <= i * 2^l < 2^{PLACE_BITS - 1}, not {length} at ({level}, {i})")
    place = (i << (level + 1)) | ((1 << level) - 1)
    chunks = sizes.chunks
    c = place >> CHUNK_BITS
    if c >= len(chunks):
        while len(chunks) <= c:
            chunks = append(chunks, zero_chunk())
        sizes.chunks = chunks
    chunks[c][place & CHUNK_MASK] = i32(length)
    if level >= sizes.depth:
        sizes.depth = level + 1


@final
class Fitted:
    """What one fit did: the merges down to the first budget and the lines left, then (when
    asked and the first phase merged) the further merges down to the second budget."""

    def __init__(self, codes: Ints, sizes: Ints, total: i64) -> None:
        self.merges: i64 = 0
        self.codes: Ints = codes
        self.sizes: Ints = sizes
        self.total: i64 = total
        self.first_change: i64 = -1
        self.cmerges: i64 = 0
        self.ccodes: Ints = codes
        self.csizes: Ints = sizes
        self.ctotal: i64 = total


def due_key(code: int, t: int, depth: int) -> int:
    """The exact due of the pair whose left line is ``code``, at ``t`` messages, scaled by
    ``2^depth`` (``depth`` > the pair's level)."""
    return (t + 1 - ((code >> 6) << (code & 63))) << (depth - (code & 63))


@final
class Heap:
    """The fit's candidate pairs, most due first: the largest key (the pair's due, scaled), then
    the oldest pair, the smallest ``at`` (the pair's left line's position; all distinct, so the
    order is total and any heap takes the same entries in the same order).

    Packed: an entry is one native int, ``key << bits | (at ^ tie)``, where ``bits`` holds any
    position of the fit's lines and ``tie`` is ``2^bits - 1`` (the smaller position, the larger
    low part), so a sift compares and moves one int. ``add`` keeps the entries as given, and
    ``order`` packs them when the largest key leaves room in ``word`` bits; every entry offered
    after it is less due than one taken (see ``fit``), so it fits too. A key is its due scaled
    by ``2^depth``, and the dues of a chat's fits stay small (under 2^8 on the peers' stream:
    keys of 25 bits and entries of 34 at 10^5 messages), so fits pack up to the core's limit
    (about 2^31 messages) unless a pair waits unmerged for most of a long chat.
    Wide (a largest key with no room for a position): ``(-key, -(at ^ tie))`` tuples in a
    ``heapq`` list, slower, in the same order.

    ``keys`` and ``where``: the planner's scratch (``Scratch``), the first ``n`` entries the
    heap's: a fit over ``count`` lines never holds more than ``count`` pairs (no append or pop
    of the vectors, no copy a fit). ``take`` leaves the first entry in its slot (``held``) for
    the next ``push`` (one sift, not two) or ``drop``."""

    def __init__(self, keys: Ints, where: Ints, bits: i64, tie: i64, word: i64) -> None:
        self.keys: Ints = keys
        self.where: Ints = where
        self.n: i64 = 0
        self.bits: i64 = bits
        self.tie: i64 = tie
        self.mask: i64 = (1 << bits) - 1
        self.word: i64 = word
        self.largest: i64 = 0  # the largest key added
        self.held: bool = False  # the first entry is taken (``take``) but still in slot 0
        self.wide: bool = False
        self.entries: list[tuple[int, int]] = []  # the wide heap

    def size(self) -> i64:
        return self.n

    def add(self, key: i64, at: i64) -> None:
        """An entry, before ``order``."""
        n = self.n
        self.keys[n] = key
        self.where[n] = at
        self.n = n + 1
        if key > self.largest:
            self.largest = key

    def order(self) -> None:
        """Make the entries added a heap: packed when the largest key leaves room, else wide."""
        keys = self.keys
        where = self.where
        n = self.n
        if int(self.largest).bit_length() + self.bits > self.word:
            self.wide = True
            self.entries = [self._entry(keys[j], where[j]) for j in range(n)]
            heapify(self.entries)
            return
        j: i64 = 0
        while j < n:
            keys[j] = self._pack(keys[j], where[j])
            j += 1
        j = (n >> 1) - 1
        while j >= 0:
            self._sift_down(j, keys[j])
            j -= 1

    def push(self, key: i64, at: i64) -> None:
        if self.wide:
            self._push_wide(key, at)
            return
        packed = self._pack(key, at)
        if self.held:  # the taken first's slot gets the new entry: one sift, not two
            self.held = False
            self._sift_down(0, packed)
            return
        n = self.n
        self.n = n + 1
        self._sift_up(n, packed)

    def take(self) -> i64:
        """Take the first entry; returns its position (-1: the heap is empty). It leaves the heap
        at the next ``push`` (whose entry takes its slot) or ``drop``."""
        if self.n == 0:
            return -1
        self.held = True
        if self.wide:
            return self._first_wide()
        return (self.keys[0] & self.mask) ^ self.tie

    def drop(self) -> None:
        """The taken first entry leaves the heap (callers test ``held`` first, inline)."""
        self.held = False
        n = self.n - 1
        self.n = n
        if self.wide:
            heappop(self.entries)
        elif n > 0:
            self._sift_down(0, self.keys[n])

    def before(self, key: i64, at: i64) -> bool:
        """The first entry (a taken one left out) is more due than ``(key, at)``. With the first
        taken, the first is one of its children: the taken one stays in its slot."""
        if self.wide:
            return self._before_wide(key, at)
        n = self.n
        first: i64 = 1 if self.held else 0
        keys = self.keys
        packed = self._pack(key, at)
        return (first < n and keys[first] > packed) or (first == 1 and n > 2 and keys[2] > packed)

    def _pack(self, key: i64, at: i64) -> i64:
        return (key << self.bits) | (at ^ self.tie)

    # the wide heap's operations, apart so that the packed path's frames stay small

    def _entry(self, key: i64, at: i64) -> tuple[int, int]:
        return (-int(key), -int(at ^ self.tie))

    def _push_wide(self, key: i64, at: i64) -> None:
        if self.held:
            self.held = False
            heapreplace(self.entries, self._entry(key, at))
        else:
            heappush(self.entries, self._entry(key, at))
            self.n += 1

    def _first_wide(self) -> i64:
        return i64(-self.entries[0][1]) ^ self.tie

    def _before_wide(self, key: i64, at: i64) -> bool:
        entries = self.entries
        entry = self._entry(key, at)
        n = self.n
        first = 1 if self.held else 0
        return (first < n and entries[first] < entry) or (first == 1 and n > 2 and entries[2] < entry)

    def _sift_down(self, j: i64, packed: i64) -> None:
        """Put the entry ``packed`` at slot ``j`` and sift it down."""
        keys = self.keys
        n = self.n
        while True:
            c = 2 * j + 1
            if c >= n:
                break
            kc = keys[c]
            if c + 1 < n:
                kd = keys[c + 1]
                if kd > kc:
                    c += 1
                    kc = kd
            if kc < packed:
                break
            keys[j] = kc
            j = c
        keys[j] = packed

    def _sift_up(self, j: i64, packed: i64) -> None:
        """Put the entry ``packed`` at slot ``j`` and sift it up."""
        keys = self.keys
        while j > 0:
            p = (j - 1) >> 1
            kp = keys[p]
            if kp > packed:
                break
            keys[j] = kp
            j = p
        keys[j] = packed


@final
class Scratch:
    """A fit's work vectors, kept by a planner across fits (each of the same length, at least
    the lines of a fit): ``base[j]`` is ``j - 1`` (the fit copies its links from it); ``keys``
    and ``where`` are the heap's; ``skipped[k]`` is ``stamp`` while line ``k`` starts a pair
    skipped in its run (a new stamp a fit, so no fit clears what the last one left). ``word``:
    the bits a packed heap entry may take (63: a native int's; the tests lower it to run the
    wide heap on short chats)."""

    def __init__(self) -> None:
        self.base: Ints = vec[i64]()
        self.keys: Ints = vec[i64]()
        self.where: Ints = vec[i64]()
        self.skipped: Ints = vec[i64]()
        self.stamp: i64 = 0
        self.word: i64 = 63

    def ensure(self, n: i64) -> None:
        base = self.base
        if len(base) >= n:
            return
        keys, where, skipped = self.keys, self.where, self.skipped
        want = max(n, 2 * len(base), 64)
        while len(base) < want:
            base = append(base, len(base) - 1)
            keys = append(keys, 0)
            where = append(where, 0)
            skipped = append(skipped, 0)
        self.base, self.keys, self.where, self.skipped = base, keys, where, skipped


def fit(rows: Sizes, t: i64, codes: Ints, sizes: Ints, total: i64, budget: i64, cbudget: i64, scratch: Scratch) -> Fitted:
    """Merge the most due pair whose parent is built, the oldest among equals, until the lines
    are at most ``budget`` bytes or no pair can merge. When that merged and ``cbudget`` >= 0,
    go on to ``cbudget`` for the compaction view (the same heap continues: no copy is refitted).
    ``codes`` and ``sizes`` may be changed in place; the lines after each phase are returned as
    new vectors (the same ones when nothing merged).

    The heap (``Heap``) holds each candidate pair's key, its due ``(T + 1 - first) / 2^l``
    scaled by ``2^depth`` (exact, and under ``2^KEY_BITS`` while ``T + 1`` has at most
    ``KEY_BITS - depth`` bits, about 2^31 messages; a longer chat is refused, never
    mis-ordered), and its left line's position. Every pair offered after the candidates are
    read is less due than the pair just taken, so the keys the heap packs (``Heap.order``) bound
    every later one: a pair's lines are both in the chat, so ``T + 1 - first`` exceeds
    ``2^(l+1)`` and its due exceeds 2; the parent's pair is due ``due / 2`` (the parent on the
    left) or ``due / 2 + 1`` (on the right), the run's next pair ``due - 2``.

    Runs: at one level, adjacent candidate pairs ``(l, i), (l, i+2), ...`` are due in that
    order (the due falls by 2 from one to the next), so only the first pair of each run enters
    the heap; when a pair of a run merges, the next pair of the run (``skipped``) is merged
    at once if it is more due than the heap's best, else it enters the heap. A pair made by a
    merge (a parent beside its sibling) enters the heap itself."""
    out = Fitted(codes, sizes, total)
    count: i64 = len(codes)
    if total <= budget or count < 2:
        return out
    depth: i64 = rows.depth
    chunks = rows.chunks
    nchunks: i64 = len(chunks)
    # the chunk read last (``cc``, -1: none), kept: a line's parent and the next line's lie in the
    # same chunk nearly always, and a read through ``chunks`` costs a nested vector's reference
    chunk = vec[i32]()
    cc: i64 = -1
    tp: i64 = t + 1
    if int(tp).bit_length() + int(depth) > KEY_BITS:
        raise OverflowError(f"the planner core orders dues of chats up to 2^{KEY_BITS - int(depth)} messages, not {t}")
    bits: i64 = int(count).bit_length()  # a position's, packed in a heap entry
    tie: i64 = (1 << bits) - 1  # among equal dues, the oldest pair first: the larger k ^ tie
    scratch.ensure(count + 2)
    heap = Heap(scratch.keys, scratch.where, bits, tie, scratch.word)
    skipped = scratch.skipped
    stamp = scratch.stamp + 1
    scratch.stamp = stamp
    k: i64 = 0
    run: i64 = -3  # the position of the last candidate pair seen
    k = 0
    last: i64 = count - 1
    while k < last:
        code = codes[k]
        if code & 64 == 0 and codes[k + 1] == code + 64:
            level = code & 63
            if level + 1 < depth:
                # the parent's built size (``get``, inline): its place, then its chunk
                place = ((code >> 7) << (level + 2)) | ((1 << (level + 1)) - 1)
                c = place >> CHUNK_BITS
                if c != cc and c < nchunks:
                    chunk = chunks[c]
                    cc = c
                if c == cc and chunk[place & CHUNK_MASK] > 0:
                    if run == k - 2 and codes[run] == code - 128:
                        skipped[k] = stamp
                    else:
                        heap.add((tp - ((code >> 6) << level)) << (depth - level), k)
                    run = k
            k += 2
        else:
            k += 1
    if heap.size() == 0:
        return out
    heap.order()
    after = scratch.base[2 : count + 2]  # the next line of each line: k + 1
    before = scratch.base[:count]  # the line before: k - 1
    lowest: i64 = count
    phase = 0
    goal: i64 = budget
    while True:
        while total > goal:
            k = heap.take()
            if k < 0:
                break
            if k < lowest:  # the run's next pairs merged below lie further on
                lowest = k
            while True:
                right = after[k]
                code = codes[k]
                level = code & 63
                up = code >> 7
                place = (up << (level + 2)) | ((1 << (level + 1)) - 1)
                c = place >> CHUNK_BITS  # the parent is built: its chunk exists
                if c != cc:
                    chunk = chunks[c]
                    cc = c
                length = i64(chunk[place & CHUNK_MASK])
                total += length - sizes[k] - sizes[right]
                parent = (up << 6) | (level + 1)
                codes[k] = parent
                sizes[k] = length
                nxt = after[right]
                after[k] = nxt
                if nxt < count:
                    before[nxt] = k
                place = ((up >> 1) << (level + 3)) | ((1 << (level + 2)) - 1)
                c = place >> CHUNK_BITS
                if level + 2 < depth and c < nchunks:
                    if c != cc:
                        chunk = chunks[c]
                        cc = c
                    if chunk[place & CHUNK_MASK] > 0:
                        if up & 1 == 0:
                            if nxt < count and codes[nxt] == parent + 64:
                                heap.push((tp - (up << (level + 1))) << (depth - level - 1), k)
                        else:
                            prv = before[k]
                            if prv >= 0 and codes[prv] == parent - 64:
                                heap.push((tp - ((up - 1) << (level + 1))) << (depth - level - 1), prv)
                if nxt >= count or skipped[nxt] != stamp or codes[nxt] != code + 128:
                    break
                skipped[nxt] = 0
                key = (tp - ((up + 1) << (level + 1))) << (depth - level)
                if total <= goal or heap.before(key, nxt):
                    heap.push(key, nxt)
                    break
                k = nxt
            if heap.held:
                heap.drop()
        # the lines before the first merged one are unchanged; the linked rest is moved down,
        # then cut (no element appended): in place in the last phase, over a copy when the next
        # phase goes on over these positions
        if phase == 1 or cbudget < 0:
            new_codes = codes
            new_sizes = sizes
        else:
            new_codes = codes[:count]
            new_sizes = sizes[:count]
        w: i64 = lowest
        k = lowest
        while k < count:
            new_codes[w] = codes[k]
            new_sizes[w] = sizes[k]
            w += 1
            k = after[k]
        new_codes = new_codes[:w]
        new_sizes = new_sizes[:w]
        if phase == 0:
            out.first_change = lowest
            out.merges = count - len(new_codes)  # one line leaves with each merge
            out.codes = new_codes
            out.sizes = new_sizes
            out.total = total
            out.ccodes = new_codes
            out.csizes = new_sizes
            out.ctotal = total
            if cbudget < 0:
                return out
            phase = 1
            goal = cbudget
        else:
            out.cmerges = len(out.codes) - len(new_codes)
            out.ccodes = new_codes
            out.csizes = new_sizes
            out.ctotal = total
            return out


def positions(codes: Ints, where: dict[int, int]) -> dict[int, int]:
    """``where`` (message index -> line position of its unbuilt line) for the lines ``codes``."""
    out: dict[int, int] = {}
    if not where:
        return out
    k: i64 = 0
    n: i64 = len(codes)
    while k < n:
        code = codes[k]
        if code & 63 == 0 and int(code >> 6) in where:
            out[int(code >> 6)] = int(k)
        k += 1
    return out


@final
class Planner:
    """The built sizes, the view and the compaction view of one chat, and their fits.

    ``ceiling``/``floor`` are the view's budgets, ``cceiling``/``cfloor`` the compaction view's;
    a negative ``cceiling`` keeps no compaction view. Lines and sizes are native int vectors
    (``librt.vecs``); callers outside the core set them through ``load``, ``line`` and
    ``resize``."""

    def __init__(self, ceiling: i64, floor: i64, cceiling: i64, cfloor: i64) -> None:
        self.ceiling: i64 = ceiling
        self.floor: i64 = floor
        self.cceiling: i64 = cceiling
        self.cfloor: i64 = cfloor
        self.with_cview: bool = cceiling >= 0
        self.t: i64 = 0
        self.rows: Sizes = Sizes()
        self.codes: Ints = vec[i64]()
        self.sizes: Ints = vec[i64]()
        self.total: i64 = 0
        self.where: dict[int, int] = {}
        self.ccodes: Ints = vec[i64]()
        self.csizes: Ints = vec[i64]()
        self.ctotal: i64 = 0
        self.cwhere: dict[int, int] = {}
        self.open: bool = False
        self.batch: i64 = NO_FIT
        self.cmerge: i64 = 0  # 0: none, 1: merged again from the view, 2: merged past its ceiling
        self.first_change: i64 = -1
        self.cfirst_change: i64 = -1
        self.scratch = Scratch()

    # -- built sizes ---------------------------------------------------------------------------

    def size(self, level: i64, i: i64) -> i64:
        """The size of node ``(level, i)``'s line, 0 when it is not built."""
        if i < 0 or level < 0:
            return 0
        return get(self.rows, level, i)

    def store(self, level: i64, i: i64, length: i64) -> None:
        put(self.rows, level, i, length)

    def build(self, level: i64, i: i64, length: i64) -> i64:
        """Node ``(level, i)`` is built with a line of ``length`` bytes; an unbuilt message line
        in either view takes that size. Returns the size of its sibling's line (0 when it is not
        built): when both are built, their parent is ready."""
        rows = self.rows
        sibling: i64 = -1
        # ``put`` and ``get`` inline in the common case: a node below the depth and low enough
        # for its sibling to share its chunk, at a place that exists
        if 0 <= level < rows.depth and level + 1 < CHUNK_BITS and 0 <= i and i >> (LEVELS - level) == 0 and 0 <= length <= SIZE_LIMIT:
            place = (i << (level + 1)) | ((1 << level) - 1)
            chunks = rows.chunks
            c = place >> CHUNK_BITS
            if c < len(chunks):
                chunk = chunks[c]
                at = place & CHUNK_MASK
                chunk[at] = i32(length)
                sibling = i64(chunk[at ^ (1 << (level + 1))])
        if sibling < 0:
            put(rows, level, i, length)
            sibling = get(rows, level, i ^ 1)
        if level == 0:
            self.resize(False, i, length)
            self.resize(True, i, length)
        return sibling

    # -- lines ---------------------------------------------------------------------------------

    def add(self, length: i64) -> None:
        """Message ``t`` arrives and appends its line (rule 22): built with ``length`` bytes, or
        (``length`` 0) unbuilt, showing the placeholder."""
        i = self.t
        self.t = i + 1
        code = i << 6
        if length > 0:
            self.store(0, i, length)
            shown = length
        else:
            shown = PLACEHOLDER
            self.where[int(i)] = len(self.codes)
            if self.with_cview:
                self.cwhere[int(i)] = len(self.ccodes)
        self.codes = append(self.codes, code)
        self.sizes = append(self.sizes, shown)
        self.total += shown
        if self.with_cview:
            self.ccodes = append(self.ccodes, code)
            self.csizes = append(self.csizes, shown)
            self.ctotal += shown

    def line(self, compaction: bool, code: i64, length: i64) -> None:
        """Append a line to the view (``compaction``: the compaction view), as it is given; a
        message line can be resized once built."""
        if compaction:
            if code & 63 == 0:
                self.cwhere[int(code >> 6)] = len(self.ccodes)
            self.ccodes = append(self.ccodes, code)
            self.csizes = append(self.csizes, length)
            self.ctotal += length
        else:
            if code & 63 == 0:
                self.where[int(code >> 6)] = len(self.codes)
            self.codes = append(self.codes, code)
            self.sizes = append(self.sizes, length)
            self.total += length

    def resize(self, compaction: bool, i: i64, length: i64) -> None:
        """Message ``i``'s unbuilt line (if the view shows one) takes the size ``length``."""
        if compaction:
            k = self.cwhere.pop(int(i), -1)
            if k >= 0:
                self.ctotal += length - self.csizes[k]
                self.csizes[k] = length
        else:
            k = self.where.pop(int(i), -1)
            if k >= 0:
                self.total += length - self.sizes[k]
                self.sizes[k] = length

    def load(self, compaction: bool, codes: list[int], sizes: list[int], where: dict[int, int]) -> None:
        """Replace a view's lines (a chat reopened from its log, a copied view)."""
        total: i64 = 0
        for length in sizes:
            total += length
        if compaction:
            self.ccodes, self.csizes, self.ctotal, self.cwhere = vec[i64](codes), vec[i64](sizes), total, dict(where)
        else:
            self.codes, self.sizes, self.total, self.where = vec[i64](codes), vec[i64](sizes), total, dict(where)

    def message(self, length: i64, free: i64) -> i64:
        """Message ``t`` arrives, its line appended (rule 22): built with ``length`` bytes, or
        (``length`` 0) unbuilt, showing the placeholder; then the batch and the compaction view
        (``step``), in one call: the chat's per-message path. When the message is built and its
        left sibling is built, their parent is ready: joined of at most ``free`` bytes it is
        built at once, before the fit (rule 12), so the fit is left to the caller (``step``)
        and the sibling's size is returned negated; else the fit runs and the sibling's size is
        returned (the parent waits for a call). 0: no parent ready, the fit has run."""
        i = self.t
        self.t = i + 1
        code = i << 6
        sibling: i64 = 0  # an odd message's left sibling's built size
        if length > 0:
            chunks = self.rows.chunks
            c = i >> (CHUNK_BITS - 1)  # message i's place is 2i (its left sibling's, 2i - 2)
            if c < len(chunks) and length <= SIZE_LIMIT:
                chunk = chunks[c]
                at = (i << 1) & CHUNK_MASK
                chunk[at] = i32(length)
                if i & 1 == 1:
                    sibling = i64(chunk[at - 2])
            else:
                put(self.rows, 0, i, length)
                if i & 1 == 1:
                    sibling = get(self.rows, 0, i - 1)
            shown = length
        else:
            shown = PLACEHOLDER
            self.where[int(i)] = len(self.codes)
            if self.with_cview:
                self.cwhere[int(i)] = len(self.ccodes)
        self.codes = append(self.codes, code)
        self.sizes = append(self.sizes, shown)
        self.total += shown
        if self.with_cview:
            self.ccodes = append(self.ccodes, code)
            self.csizes = append(self.csizes, shown)
            self.ctotal += shown
        if sibling > 0 and length + 1 + sibling <= free:
            return -sibling
        if self.open or self.total > self.ceiling or (self.with_cview and self.ctotal > self.cceiling):
            self.step()
        else:  # what ``step`` does when nothing is over its budget
            self.batch = NO_FIT
            self.cmerge = 0
            self.first_change = -1
        return sibling

    def push(self, length: i64) -> None:
        """A message whose line is built at once with ``length`` bytes (> 0): append it, then
        fit (the whole per-message path, nothing else)."""
        if length <= 0:
            raise ValueError(f"a pushed message is built: its size is at least 1 byte, not {length}")
        self.message(length, 0)

    # -- fits ----------------------------------------------------------------------------------

    def refit(self, compaction: bool, t: i64, budget: i64) -> i64:
        """Fit one view alone to ``budget`` at ``t`` messages (a reopened chat, a view of its
        own); returns the merges."""
        if compaction:
            done = fit(self.rows, t, self.ccodes, self.csizes, self.ctotal, budget, -1, self.scratch)
            self.ccodes, self.csizes, self.ctotal, self.cfirst_change = done.codes, done.sizes, done.total, done.first_change
            if done.merges > 0 and self.cwhere:
                self.cwhere = positions(self.ccodes, self.cwhere)
        else:
            done = fit(self.rows, t, self.codes, self.sizes, self.total, budget, -1, self.scratch)
            self.codes, self.sizes, self.total, self.first_change = done.codes, done.sizes, done.total, done.first_change
            if done.merges > 0 and self.where:
                self.where = positions(self.codes, self.where)
        return done.merges

    def step(self) -> None:
        """After a message: the batch (past the ceiling, or while still shrinking: rules 23, 24,
        F1), then the compaction view (rule 33)."""
        self.batch = NO_FIT
        self.cmerge = 0
        self.first_change = -1
        if self.open or self.total > self.ceiling:
            cbudget = self.cfloor if self.with_cview else -1
            done = fit(self.rows, self.t, self.codes, self.sizes, self.total, self.floor, cbudget, self.scratch)
            self.batch = done.merges
            if done.merges > 0:
                self.codes = done.codes
                self.sizes = done.sizes
                self.total = done.total
                self.first_change = done.first_change
                if self.where:
                    self.where = positions(self.codes, self.where)
                if self.with_cview:
                    self.ccodes = done.ccodes
                    self.csizes = done.csizes
                    self.ctotal = done.ctotal
                    self.cwhere = positions(self.ccodes, self.cwhere)
                    self.cmerge = 1
            self.open = self.total > self.floor
        if self.with_cview and self.cmerge == 0 and self.ctotal > self.cceiling:
            done = fit(self.rows, self.t, self.ccodes, self.csizes, self.ctotal, self.cfloor, -1, self.scratch)
            if done.merges > 0:
                self.ccodes = done.codes
                self.csizes = done.sizes
                self.ctotal = done.total
                if self.cwhere:
                    self.cwhere = positions(self.ccodes, self.cwhere)
            self.cfirst_change = done.first_change
            self.cmerge = 2


# -- views ----------------------------------------------------------------------------------------

Node = tuple[int, int]


@final
class View:
    """Lines oldest first, each a node ``(l, i)`` with its byte size (the built line's, or the
    placeholder's): one of a planner's two views (``compaction``: the compaction view), or a
    view of its own (``View()``: on a planner of its own). A class of the core's, so reading
    ``total`` (once a message, by the chat's callers) is a compiled getter."""

    def __init__(self, planner: Planner | None = None, compaction: bool = False) -> None:
        self._p = planner if planner is not None else Planner(0, 0, -1, 0)
        self._c = compaction

    def _codes(self) -> Ints:
        return self._p.ccodes if self._c else self._p.codes

    @property
    def nodes(self) -> list[Node]:
        return [(int(code & 63), int(code >> 6)) for code in self._codes()]

    @property
    def sizes(self) -> list[int]:
        return [int(length) for length in (self._p.csizes if self._c else self._p.sizes)]

    @property
    def total(self) -> i64:
        """The lines' bytes."""
        return self._p.ctotal if self._c else self._p.total

    @property
    def first_change(self) -> i64:
        return self._p.cfirst_change if self._c else self._p.first_change

    def __len__(self) -> int:
        return len(self._codes())

    def __iter__(self) -> Iterator[Node]:
        return iter(self.nodes)

    def copy(self) -> View:
        other = View()
        p, q = self._p, other._p
        if self._c:
            q.load(False, [int(code) for code in p.ccodes], self.sizes, dict(p.cwhere))
        else:
            q.load(False, [int(code) for code in p.codes], self.sizes, dict(p.where))
        return other

    def append(self, node: Node, length: int) -> None:
        """A message appends its line (rule 22); a message line can be resized once built."""
        self._p.line(self._c, node[1] << 6 | node[0], length)

    def resize(self, node: Node, length: int) -> None:
        """``node``'s line was built: its size becomes the line's."""
        if node[0] == 0:
            self._p.resize(self._c, node[1], length)

    def fit(self, t: int, levels: Iterable[Iterable[int]], budget: int) -> int:
        """Merge the most due built-parent pair, oldest among equals, until at most ``budget``
        bytes or no pair can merge. ``levels[l][i]`` is the size of node ``(l, i)``'s line, 0
        when it is not built. Returns the number of merges; ``first_change`` is the first line
        the batch rewrote (-1 when none)."""
        self._p.rows = rows_of(levels)
        return self.refit(t, budget)

    def refit(self, t: int, budget: int) -> int:
        """``fit`` on the planner's own built sizes."""
        return int(self._p.refit(self._c, t, budget))


# -- the work queue's per-message path ----------------------------------------------------------

LATER: Final = 1  # ``Work.todo``: the chat's own ``_after`` must run (retries, message nodes, a waiting turn)
FREED: Final = 2  # ``Work.todo``: free merges were built whose texts the chat keeps (``Work.freed``)
# the rule cases the per-message path meets most, as bits of ``Work.seen``: each is added to the
# chat's ``cases`` (a set that only grows) the first time only, not once a message
FREE_MESSAGE: Final = 1
GROW: Final = 2
MERGE_CALL: Final = 4
FREE_MERGE: Final = 8


@final
class Work:
    """The chat's work queue on its per-message path (``eukhe.memory.chat.Chat``): a message
    (``message``), a compactor's answer (``done``, ``build``) and the start of ready merges, each
    one call, with the chat's counters. ``message`` and ``done`` are the chat's own (``Chat``
    binds them), so the per-message path runs no Python frame of the chat's. The containers are
    the chat's own (``Chat.running``, ``merges``, ``fresh``, ``retry``, ``failed``, ``fails``,
    ``_pending``, ``cases``: the same objects, changed in place on both sides, never rebound).
    Only the common case runs here; the chat's methods given as hooks do the rest: ``before``
    keeps a message's text and queues failed nodes to retry (only when texts are kept or a node
    failed), ``keep_line`` keeps a compactor's line (only when texts are kept), and ``leave``
    gets ``todo`` when it is not 0: ``LATER`` when a retry, an unstarted message node or a
    waiting turn is queued (the chat's ``_after``: the window and the queue order, rules 39, 40,
    42, D5), ``FREED`` when free merges (rule 12) were built and the chat keeps texts (listed in
    ``freed``, in the order built, for the chat to set their lines)."""

    def __init__(
        self,
        core: Planner,
        jobs: i64,
        free: i64,
        keep: bool,
        running: list[Node],
        merges: deque[Node],
        fresh: deque[int],
        retry: list[Node],
        failed: list[Node],
        fails: dict[Node, int],
        pending: dict[int, int],
        cases: set[str],
        before: Callable[[str | None, int], None],
        keep_line: Callable[[Node, str], None],
        leave: Callable[[int], None],
    ) -> None:
        self.core = core
        self.jobs: i64 = jobs
        self.free: i64 = free
        self.keep: bool = keep
        # tuple[int, ...]: a node's tuple moves as it is (typed Node, compiled, it would be
        # unboxed and boxed anew, and found again by comparing tuples), its items read natively
        self.running: list[tuple[int, ...]] = cast("list[tuple[int, ...]]", running)
        self.merges = merges
        # the hooks and the merge queue take a node's tuple as it is (``tuple[int, ...]``): typed
        # Node, compiled, each call would unbox it and box a new tuple
        self.queue_merge: Callable[[tuple[int, ...]], None] = cast("Callable[[tuple[int, ...]], None]", merges.append)  # bound once: no lookup a call
        self.next_merge: Callable[[], Any] = merges.popleft
        self.fresh = fresh
        self.retry = retry
        self.failed = failed
        self.fails = fails
        self.pending = pending
        self.cases = cases
        self.before = before
        self.keep_line: Callable[[tuple[int, ...], str], None] = cast("Callable[[tuple[int, ...], str], None]", keep_line)
        self.leave = leave
        self.freed: list[Node] = []
        self.built: i64 = 0
        self.started: i64 = 0
        self.unbuilt: i64 = 0
        self.waiting: bool = False
        self.todo: i64 = 0
        self.seen: i64 = 0  # the bits of the cases already in ``cases``
        # ``ready`` started a merge at once and queued none after it: ``after`` has nothing to do
        self.started_at_once: bool = False
        # 1: the running list's only slot still holds the call ``done`` just ended, for a merge
        # started at once to take (one item set, not a clear that frees the list's array and an
        # append that allocates it again)
        self.vacant: i64 = 0

    def case(self, bit: i64, name: str) -> None:
        """Case ``name`` (bit ``bit``) was met; callers test ``seen`` first, inline."""
        self.seen |= bit
        self.cases.add(name)

    def message(self, text: str | int) -> None:
        """A message arrives (rules 22-24, 33, 38): its text, or (texts not kept) its size in
        bytes. One positional argument: a call with a keyword costs the caller a parse of its
        names, more than the rest of a message's common case (callgrind).

        A message of at most ``free`` bytes is its own node at once (rule 12): the line is
        appended with its final size; when its sibling is built their parent is ready: built at
        once before the fit (rule 12) or queued (the core fits then); a longer one waits for its
        call; then the batch, the compaction view, the rule cases and the start of ready
        merges."""
        if isinstance(text, str):
            length = len(text.encode("utf-8"))
            given: str | None = text
        else:
            length = text
            given = None
        if length < 1:
            raise ValueError("a message has at least one byte")
        if self.keep or self.failed:
            self.before(given, length)
        core = self.core
        i = core.t
        resumed = core.open
        self.todo = 0
        self.started_at_once = False
        if length <= self.free:
            if not self.seen & FREE_MESSAGE:
                self.case(FREE_MESSAGE, "free_message")
            self.built += 1
            sib_size = core.message(length, self.free)
            if sib_size > 0:
                self.ready((1, int(i >> 1)), True)
            elif sib_size < 0:
                self.up(0, i, length, -sib_size, True)
                core.step()
        else:
            core.message(0, self.free)
            self.unbuilt += 1
            self.pending[int(i)] = length
            self.fresh.append(int(i))
        if core.batch < 0 and core.cmerge == 0:  # most messages: the line appended, no merge
            if not self.seen & GROW:
                self.case(GROW, "grow")
        else:
            cases = self.cases
            if core.batch < 0:
                cases.add("grow")
            else:
                cases.add("batch" if not resumed else ("batch_resumed" if core.batch else "batch_open_empty"))
                if core.open:
                    cases.add("batch_short")
            if core.cmerge == 1:
                cases.add("cview_from_view")
            elif core.cmerge == 2:
                cases.add("cview_ceiling")
        if not self.started_at_once:
            self.after()
        if self.todo:
            self.leave(self.todo)

    def done(self, k: int, line: str | int) -> tuple[int, ...] | None:
        """The ``k``-th running call (modulo) ends with its line (or, texts not kept, its size:
        1 to ``free`` bytes). Returns its node (the running list's own tuple), None when no call runs."""
        if isinstance(line, str):
            length = len(line.encode("utf-8"))
        else:
            length = line
        if not 1 <= length <= self.free:
            raise ValueError(f"a compactor's line is 1-{self.free} bytes, not {length}")
        self.todo = 0
        self.started_at_once = False
        running = self.running
        if not running:
            return None
        if len(running) == 1:  # the common case: the slot is left to a merge started at once
            node = running[0]
            self.vacant = 1
        else:
            j = k % len(running)
            node = running[j]
            del running[j]
        level: i64 = node[0]
        if level == 0:
            self.started -= 1
        self.built_node(node, level, node[1], length, True)
        if self.vacant:
            self.vacant = 0
            running.clear()
        if not self.started_at_once:
            self.after()
        if self.keep and isinstance(line, str):
            self.keep_line(node, line)
        if self.todo:
            self.leave(self.todo)
        return node

    def build(self, level: i64, i: i64, length: i64) -> None:
        """Build ``(level, i)`` (once, rule 13); a parent whose halves are now both built is built
        at once when its joined input fits ``free`` bytes (rule 12), else it waits in the merge
        queue (rule 42)."""
        node = (int(level), int(i))
        running = self.running
        if node in running:  # a call whose third failure builds it (rule 38, D5)
            running.remove(node)
            if level == 0:
                self.started -= 1
        self.built_node(node, level, i, length, False)

    def built_node(self, node: Any, level: i64, i: i64, length: i64, start: bool) -> None:
        """``build`` of a node no longer running, given its tuple too (``start``: see ``ready``)."""
        sib_size = self.core.build(level, i, length)
        self.built += 1
        if self.fails:
            self.fails.pop(node, None)
        if level == 0:
            self.pending.pop(int(i), None)
            self.unbuilt -= 1
        if sib_size:
            self.up(level, i, length, sib_size, start)

    def up(self, level: i64, i: i64, length: i64, sib_size: i64, start: bool) -> None:
        """``(level, i)`` was built and its sibling is built too: their parent is built at once
        (joined input of at most ``free`` bytes, rule 12) or waits in the merge queue."""
        joined = length + 1 + sib_size
        if joined <= self.free:
            if not self.seen & FREE_MERGE:
                self.case(FREE_MERGE, "free_merge")
            if self.keep:
                self.freed.append((int(level + 1), int(i >> 1)))
                self.todo |= FREED
            self.build(level + 1, i >> 1, joined)
        else:
            self.ready((int(level + 1), int(i >> 1)), start)

    def ready(self, node: tuple[int, ...], start: bool) -> None:
        """A merge is ready: it waits in the merge queue, or (``start``: ``after`` runs next in
        the same call) starts at once when nothing else waits and a job is free, as ``after``
        would start it then, without the queue's append and pop."""
        running = self.running
        if start and len(running) - self.vacant < self.jobs and not len(self.merges) and not self.retry and not len(self.fresh) and not self.waiting:
            if self.vacant:
                running[0] = node
                self.vacant = 0
            else:
                running.append(node)
            self.started_at_once = True
            if not self.seen & MERGE_CALL:
                self.case(MERGE_CALL, "merge_call")
        else:
            self.started_at_once = False
            self.queue_merge(node)

    def after(self) -> None:
        """Start what fits when only merges wait (the oldest first); anything else queued (a
        retry, a message node, a waiting turn) is left to the chat (``LATER``)."""
        # the deques' ``len``, not their truth: a native size call, not the generic truth test
        if self.retry or len(self.fresh) or self.waiting:
            self.todo |= LATER
            return
        ready = len(self.merges)
        if ready:
            running = self.running
            free = self.jobs - len(running)
            if free <= 0:
                self.cases.add("jobs_full")
                return
            next_merge = self.next_merge
            count: i64 = min(free, ready)
            while count > 0:
                running.append(next_merge())
                count -= 1
            if not self.seen & MERGE_CALL:
                self.case(MERGE_CALL, "merge_call")


# -- the pure form's vectors ---------------------------------------------------------------------
# Interpreted, librt's vectors are slower than lists (each append from Python makes a new vector
# object), so the pure form binds ``vec``, ``append`` and ``extend`` to list equivalents with the
# same results. Compiled, these names are native operations and the rebinding never runs.


class _ListVec:
    def __getitem__(self, item: object) -> Callable[..., list[Any]]:
        return _new_list


def _new_list(items: Iterable[Any] | None = None, capacity: int = 0) -> list[Any]:
    return [] if items is None else list(items)


def _list_append(v: list[Any], x: Any) -> list[Any]:
    v.append(x)
    return v


def _list_extend(v: list[Any], items: Iterable[Any]) -> list[Any]:
    v.extend(items)
    return v


PURE: Final = type(_list_append).__name__ == "function"  # mypyc makes builtin functions
if PURE:
    # i64(x) and i32(x) are conversions compiled; interpreted, mypy_extensions' are Python-level
    # classes whose call returns int(x): int itself gives the same values
    globals().update(vec=_ListVec(), append=_list_append, extend=_list_extend, i64=int, i32=int)

