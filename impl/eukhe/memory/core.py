"""The planner core: the built sizes, the view, the compaction view and their batched fit, on
plain ints (memory.md §3, rules 19, 22-24, 33; F1). The hot path of the chat memory.

This module is pure Python and is also compiled with mypyc (``python -m eukhe.corebuild``,
run by the Makefile before the tests); ``eukhe.memory.view.CORE`` is the form in use. Both forms
run the same source and must give the same results: the bridge replays on each, and a
differential test checks the fit against the model (bend.optchat.view) on random histories.
It imports nothing from eukhe, so the compiled module stands alone.

Representation (no tuples, no closures on the per-message path):

- a node ``(l, i)`` is one int, ``code = i << 6 | l``: its right sibling is ``code + 64``, its
  first message ``(code >> 6) << l``, its parent ``(code >> 7) << 6 | (l + 1)``;
- ``rows[l][i]`` is the size of node ``(l, i)``'s built line, 0 while it is not built; rows grow
  by appending (sizes are appended per level as nodes are built in order);
- a view is two parallel lists (codes, sizes) and its byte total, kept incrementally; a message
  appends its line, with its final size when it is built at once; ``where`` maps each unbuilt
  message line to its position, so building it resizes the line in O(1).

The fit (rules 19, 23, 24): with ``T`` fixed, the due of the pair whose left line is ``(l, i)``
is ``(T + 1 - first) / 2^l`` (the seed's production form: ``(T - last) / 2^l`` shifted by 2); it
is kept exact as the integer ``(T + 1 - first) << (S - l)`` with ``S`` the number of levels.
Each candidate pair is one heap int ``-due << B | k`` (``k`` its left line's position, ``B``
bits for positions): the heap's smallest is the most due pair, the oldest among equals. The
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

from heapq import heapify, heappop, heappush
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:  # a native 64-bit int for mypyc; a plain int in the pure form
    from mypy_extensions import i64

SOURCE = ""  # the compiled form records here the sha256 of the source it was built from

_RANGE: list[int] = list(range(-1, 1024))  # _RANGE[j] == j - 1, grown on demand
PLACEHOLDER = 29  # bytes of "(not summarized yet: zoom it)" (memory.md rule 18)
NO_FIT = -1


class Fitted:
    """What one fit did: the merges down to the first budget and the lines left, then (when
    asked and the first phase merged) the further merges down to the second budget."""

    def __init__(self) -> None:
        self.merges = 0
        self.codes: list[int] = []
        self.sizes: list[int] = []
        self.total = 0
        self.first_change = -1
        self.cmerges = 0
        self.ccodes: list[int] = []
        self.csizes: list[int] = []
        self.ctotal = 0


def due_key(code: int, t: int, depth: int) -> int:
    """The exact due of the pair whose left line is ``code``, at ``t`` messages, scaled by
    ``2^depth`` (``depth`` > the pair's level)."""
    return (t + 1 - ((code >> 6) << (code & 63))) << (depth - (code & 63))


def fit(rows: list[list[int]], t: int, codes: list[int], sizes: list[int], total: int, budget: int, cbudget: int) -> Fitted:
    """Merge the most due pair whose parent is built, the oldest among equals, until the lines
    are at most ``budget`` bytes or no pair can merge. When that merged and ``cbudget`` >= 0,
    go on to ``cbudget`` for the compaction view. ``codes`` and ``sizes`` may be changed in
    place; the lines after each phase are returned as new lists (the same lists when nothing
    merged).

    Runs: at one level, adjacent candidate pairs ``(l, i), (l, i+2), ...`` are due in that
    order (the due falls by 2 from one to the next), so only the first pair of each run enters
    the heap; when a pair of a run merges, the next pair of the run (``skipped``) is merged
    at once if it is more due than the heap's best, else it enters the heap. A pair made by a
    merge (a parent beside its sibling) enters the heap itself."""
    out = Fitted()
    out.codes = codes
    out.sizes = sizes
    out.total = total
    count = len(codes)
    if total <= budget or count < 2:
        return out
    depth = len(rows)
    bits = count.bit_length()
    mask = (1 << bits) - 1
    tie = 0  # a key ends with its position k ^ tie: among equal dues, the oldest pair first
    tp = t + 1
    heap: list[int] = []
    skipped = [False] * count
    run = -3  # the position of the last candidate pair seen
    k = 0
    last = count - 1
    while k < last:
        code = codes[k]
        if code & 64 == 0 and codes[k + 1] == code + 64:
            level = code & 63
            if level + 1 < depth:
                row = rows[level + 1]
                up = code >> 7
                if up < len(row) and row[up] > 0:
                    if run == k - 2 and codes[run] == code - 128:
                        skipped[k] = True
                    else:
                        heap.append((((code >> 6 << level) - tp) << (depth - level) << bits) | (k ^ tie))
                    run = k
            k += 2
        else:
            k += 1
    if not heap:
        return out
    heapify(heap)
    pop = heappop
    push = heappush
    while len(_RANGE) < count + 2:
        _RANGE.extend(range(len(_RANGE) - 1, 2 * len(_RANGE)))
    after = _RANGE[2 : count + 2]  # the next line of each line (slices copy references: no new ints)
    before = _RANGE[:count]  # the line before
    lowest = count
    phase = 0
    goal = budget
    while True:
        while total > goal and heap:
            k = (pop(heap) & mask) ^ tie
            if k < lowest:  # the run's next pairs merged below lie further on
                lowest = k
            while True:
                right = after[k]
                code = codes[k]
                level = code & 63
                up = code >> 7
                length = rows[level + 1][up]
                total += length - sizes[k] - sizes[right]
                parent = (up << 6) | (level + 1)
                codes[k] = parent
                sizes[k] = length
                nxt = after[right]
                after[k] = nxt
                if nxt < count:
                    before[nxt] = k
                if level + 2 < depth:
                    row = rows[level + 2]
                    grand = up >> 1
                    if grand < len(row) and row[grand] > 0:
                        if up & 1 == 0:
                            if nxt < count and codes[nxt] == parent + 64:
                                push(heap, (((up << level + 1) - tp) << (depth - level - 1) << bits) | (k ^ tie))
                        else:
                            prv = before[k]
                            if prv >= 0 and codes[prv] == parent - 64:
                                push(heap, ((((up - 1) << level + 1) - tp) << (depth - level - 1) << bits) | (prv ^ tie))
                if nxt >= count or not skipped[nxt] or codes[nxt] != code + 128:
                    break
                skipped[nxt] = False
                key = ((((up + 1) << level + 1) - tp) << (depth - level) << bits) | (nxt ^ tie)
                if total <= goal or (heap and heap[0] < key):
                    push(heap, key)
                    break
                k = nxt
        if phase == 0:
            # the lines before the first merged one are unchanged: sliced; then the linked rest
            # (moved as objects: no int is unboxed and boxed again in the compiled form)
            raw_codes = cast("list[object]", codes)
            raw_sizes = cast("list[object]", sizes)
            new_codes = cast("list[object]", codes[:lowest])
            new_sizes = cast("list[object]", sizes[:lowest])
            out.first_change = lowest
            k = lowest
            while k < count:
                new_codes.append(raw_codes[k])
                new_sizes.append(raw_sizes[k])
                k = after[k]
            out.merges = count - len(new_codes)  # one line leaves with each merge
            out.codes = cast("list[int]", new_codes)
            out.sizes = cast("list[int]", new_sizes)
            out.total = total
            if cbudget < 0:
                return out
            phase = 1
            goal = cbudget
        else:
            raw_codes = cast("list[object]", codes)
            raw_sizes = cast("list[object]", sizes)
            c_codes = cast("list[object]", codes[:lowest])
            c_sizes = cast("list[object]", sizes[:lowest])
            k = lowest
            while k < count:
                c_codes.append(raw_codes[k])
                c_sizes.append(raw_sizes[k])
                k = after[k]
            out.cmerges = len(out.codes) - len(c_codes)
            out.ccodes = cast("list[int]", c_codes)
            out.csizes = cast("list[int]", c_sizes)
            out.ctotal = total
            return out


def positions(codes: list[int], where: dict[int, int]) -> dict[int, int]:
    """``where`` (message index -> line position of its unbuilt line) for the lines ``codes``."""
    out: dict[int, int] = {}
    if not where:
        return out
    for k in range(len(codes)):
        code = codes[k]
        if code & 63 == 0 and (code >> 6) in where:
            out[code >> 6] = k
    return out


class Planner:
    """The built sizes, the view and the compaction view of one chat, and their fits.

    ``ceiling``/``floor`` are the view's budgets, ``cceiling``/``cfloor`` the compaction view's;
    a negative ``cceiling`` keeps no compaction view."""

    def __init__(self, ceiling: int, floor: int, cceiling: int, cfloor: int) -> None:
        self.ceiling = ceiling
        self.floor = floor
        self.cceiling = cceiling
        self.cfloor = cfloor
        self.with_cview = cceiling >= 0
        self.t = 0
        self.rows: list[list[int]] = [[]]
        self.codes: list[int] = []
        self.sizes: list[int] = []
        self.total = 0
        self.where: dict[int, int] = {}
        self.ccodes: list[int] = []
        self.csizes: list[int] = []
        self.ctotal = 0
        self.cwhere: dict[int, int] = {}
        self.open = False
        self.batch = NO_FIT
        self.cmerge = 0  # 0: none, 1: merged again from the view, 2: merged past its ceiling
        self.first_change = -1
        self.cfirst_change = -1

    # -- built sizes ---------------------------------------------------------------------------

    def size(self, level: int, i: int) -> int:
        """The size of node ``(level, i)``'s line, 0 when it is not built."""
        if level >= len(self.rows) or i < 0:
            return 0
        row = self.rows[level]
        return row[i] if i < len(row) else 0

    def store(self, level: int, i: int, length: int) -> None:
        rows = self.rows
        while len(rows) <= level:
            rows.append([])
        row = rows[level]
        have = len(row)
        if i == have:
            row.append(length)
        else:
            if i > have:
                row.extend([0] * (i - have))
                row.append(length)
            else:
                row[i] = length

    def build(self, level: int, i: int, length: int) -> None:
        """Node ``(level, i)`` is built with a line of ``length`` bytes; an unbuilt message line
        in either view takes that size."""
        self.store(level, i, length)
        if level == 0:
            k = self.where.pop(i, -1)
            if k >= 0:
                self.total += length - self.sizes[k]
                self.sizes[k] = length
            k = self.cwhere.pop(i, -1)
            if k >= 0:
                self.ctotal += length - self.csizes[k]
                self.csizes[k] = length

    # -- lines ---------------------------------------------------------------------------------

    def add(self, length: int) -> None:
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
            self.where[i] = len(self.codes)
            if self.with_cview:
                self.cwhere[i] = len(self.ccodes)
        self.codes.append(code)
        self.sizes.append(shown)
        self.total += shown
        if self.with_cview:
            self.ccodes.append(code)
            self.csizes.append(shown)
            self.ctotal += shown

    def push(self, length: int) -> None:
        """A message whose line is built at once with ``length`` bytes (> 0): append it, then
        fit (the whole per-message path, nothing else)."""
        i = self.t
        self.t = i + 1
        row = self.rows[0]
        if len(row) == i:
            row.append(length)
        else:
            self.store(0, i, length)
        code = i << 6
        self.codes.append(code)
        self.sizes.append(length)
        self.total += length
        self.batch = NO_FIT
        self.cmerge = 0
        if self.with_cview:
            self.ccodes.append(code)
            self.csizes.append(length)
            self.ctotal += length
            if self.open or self.total > self.ceiling or self.ctotal > self.cceiling:
                self.step()
        elif self.open or self.total > self.ceiling:
            self.step()

    # -- fits ----------------------------------------------------------------------------------

    def step(self) -> None:
        """After a message: the batch (past the ceiling, or while still shrinking: rules 23, 24,
        F1), then the compaction view (rule 33)."""
        self.batch = NO_FIT
        self.cmerge = 0
        self.first_change = -1
        if self.open or self.total > self.ceiling:
            cbudget = self.cfloor if self.with_cview else -1
            done = fit(self.rows, self.t, self.codes, self.sizes, self.total, self.floor, cbudget)
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
            done = fit(self.rows, self.t, self.ccodes, self.csizes, self.ctotal, self.cfloor, -1)
            if done.merges > 0:
                self.ccodes = done.codes
                self.csizes = done.sizes
                self.ctotal = done.total
                if self.cwhere:
                    self.cwhere = positions(self.ccodes, self.cwhere)
            self.cfirst_change = done.first_change
            self.cmerge = 2


def run_h_stream(planner: Planner, count: int) -> int:
    """The issue-16 benchmark stream, whole loop, sizes computed here: message ``t``'s line is
    ``200 + h(0, t) % 313`` bytes; a parent ``(l, i)`` is ``300 + h(l, i) % 213`` bytes, built
    as soon as its second child exists, before the message is appended and the view fitted.
    ``h`` is the issue's 32-bit mix (64-bit products masked to 32 bits: the same in both forms).
    Returns the sum of the view's byte totals after each message (a check value)."""
    check = 0
    t: i64 = 0
    end: i64 = count
    while t < end:
        x: i64 = ((t * 0x9E3779B1) & 0xFFFFFFFF) ^ 0x85EBCA77 ^ 12345
        x ^= x >> 16
        x = (x * 0x85EBCA6B) & 0xFFFFFFFF
        x ^= x >> 13
        x = (x * 0xC2B2AE35) & 0xFFFFFFFF
        x ^= x >> 16
        length = 200 + x % 313
        i: i64 = t
        level: i64 = 0
        while i & 1:
            i >>= 1
            level += 1
            x = ((i * 0x9E3779B1) & 0xFFFFFFFF) ^ (((level + 1) * 0x85EBCA77) & 0xFFFFFFFF) ^ 12345
            x ^= x >> 16
            x = (x * 0x85EBCA6B) & 0xFFFFFFFF
            x ^= x >> 13
            x = (x * 0xC2B2AE35) & 0xFFFFFFFF
            x ^= x >> 16
            planner.store(level, i, 300 + x % 213)
        planner.push(length)
        check += planner.total
        t += 1
    return check
