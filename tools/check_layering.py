#!/usr/bin/env python3
"""Fails when a source file includes a module at its own level or above (ARCHITECTURE.md order).

Usage: check_layering.py SRC_DIR. Each `#include "module/file.h"` in src/<module>/ must name the
module itself or one on a lower level. Prints every violation as file:line and exits 1.
"""
import pathlib
import re
import sys

# ARCHITECTURE.md's order is core → spec → workload/cost → analytic/graph → sim → ..., and it
# also gives workload/ the ExecGraph builder, which prices operators with cost/ and emits a
# graph/ ExecGraph. Both hold only if cost/ and graph/ (which need nothing but core/ and spec/)
# sit below workload/, so they are split out one level lower; no module gains a new dependency
# upward and the published order is otherwise kept.
LEVELS = [
    ["core"],
    ["spec"],
    ["cost", "graph"],
    ["workload"],
    ["analytic"],
    ["sim"],
    ["trace", "whatif", "analysis"],
    ["search", "stochastic", "reliability", "validate"],
    ["report"],
    ["cli"],
]
LEVEL = {m: i for i, mods in enumerate(LEVELS) for m in mods}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"')


def main() -> int:
    src = pathlib.Path(sys.argv[1])
    bad = []
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cpp"):
            continue
        module = path.relative_to(src).parts[0]
        if module not in LEVEL:
            bad.append(f"{path}: module '{module}' is not in the layering table of check_layering.py")
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            m = INCLUDE.match(line)
            if not m or m.group(1) == module:
                continue
            target = m.group(1)
            if target not in LEVEL:
                bad.append(f"{path}:{number}: includes unknown module '{target}'")
            elif LEVEL[target] >= LEVEL[module]:
                bad.append(f"{path}:{number}: '{module}' (level {LEVEL[module]}) must not include "
                           f"'{target}' (level {LEVEL[target]})")
    for b in bad:
        print(b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
