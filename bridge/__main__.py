"""python -m bridge replay [AREA [FILE ...]] | scenarios [AREA ...] | check [AREA ...]

replay     both sides on every committed scenario (or the files named), byte for byte
scenarios  regenerate the scenario files and digests (make scenarios)
check      fail when regeneration would change any committed file

Under EUKHE_BREAK=NAME, the named deliberate break (spec/breaks/) is installed first.

Exit status: 0 every scenario agrees; 1 a mismatch, a process of the production side that did
not answer within its deadline, or a fault of the environment; 2 bad usage, an unknown area,
or a scenario file that cannot be read or parsed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from spec import breaks

if __name__ == "__main__":  # python -m bridge: a named break (EUKHE_BREAK) before any code under test is imported
    breaks.install_from_env()

from bridge import core  # noqa: E402


def _selected(areas: list[str]) -> list[core.Bridge]:
    return [core.by_area(a) for a in areas] if areas else core.bridges()


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"replay", "scenarios", "check"}:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    verb, rest = argv[0], argv[1:]
    try:
        if verb == "scenarios":
            for b in _selected(rest):
                print(f"{b.area}: {core.regenerate(b)} scenarios written to {b.directory}")
            return 0
        if verb == "check":
            failed = False
            for b in _selected(rest):
                changed = core.stale(b)
                failed |= bool(changed)
                print(f"{b.area}: " + (f"{len(changed)} files differ from regeneration: {changed[:5]}" if changed else "committed scenarios are current"))
            return 1 if failed else 0
        if len(rest) > 1:
            b = core.by_area(rest[0])
            digests = core.read_digests(b.directory)
            try:
                bad = [m for p in rest[1:] if (m := core.replay(b, Path(p), digests.get(Path(p).name))) is not None]
            except BaseException:
                core.finish(b, quietly=True)
                raise
            core.finish(b)
            for m in bad:
                print(m)
            print(f"{b.area}: {len(rest) - 1} scenarios replayed, {len(bad)} differ")
            return 1 if bad else 0
        status = 0
        for b in _selected(rest):
            count, bad = core.replay_all(b)
            for m in bad:
                print(m)
            print(f"{b.area}: {count} scenarios replayed byte for byte, {len(bad)} differ")
            status |= 1 if bad else 0
        return status
    except core.BridgeError as error:
        print(f"bridge: {error}", file=sys.stderr)
        return 1 if isinstance(error, core.Stuck) else 2
    except BrokenPipeError:  # `| head`: stop quietly, as Unix tools do
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, sys.stdout.fileno())
        except (OSError, ValueError):
            pass
        return 1
    except OSError as error:
        print(f"bridge: {error.filename or ''}: {error.strerror or error}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
