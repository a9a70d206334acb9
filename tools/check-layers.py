#!/usr/bin/env python3
"""check-layers.py SOURCE_ROOT - every internal include stays within the
layers of doc/design.md section 7: a folder of src/ includes only itself and
the folders below it, so that each layer can be built, linked and tested
without the ones above. Exits 1 naming each include that crosses a layer."""
import os
import re
import sys

# What each folder of src/ may include besides itself (doc/design.md 7).
ALLOWED = {
    "util": set(),
    "lib/common": {"util"},
    "lib/record": {"util", "lib/common"},
    "lib/read": {"util", "lib/common"},
    "analysis": {"util", "lib/common", "lib/read"},
    "recorders": {"util", "lib/common", "lib/record"},
    "cli": {"util", "lib/common", "lib/record", "lib/read", "analysis",
            "recorders/core/options.h"},
    "tools": {"util", "lib/common", "lib/record"},
}


def layer_of(path):
    for layer in sorted(ALLOWED, key=len, reverse=True):
        if path == layer or path.startswith(layer + "/"):
            return layer
    return None


def main():
    src = os.path.join(sys.argv[1], "src")
    bad = 0
    for folder, _, files in os.walk(src):
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(folder, name)
            own = layer_of(os.path.relpath(path, src))
            with open(path, encoding="utf-8") as f:
                for n, line in enumerate(f, 1):
                    m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
                    if not m or m.group(1) == "ht_config.h":
                        continue
                    target = m.group(1)
                    if "/" not in target:
                        print(f"{path}:{n}: {target} is not named with its folder")
                        bad += 1
                        continue
                    to = layer_of(target)
                    if to == own or to is None and target in ALLOWED[own]:
                        continue
                    if to in ALLOWED[own] or target in ALLOWED[own]:
                        continue
                    print(f"{path}:{n}: {own} may not include {target}")
                    bad += 1
    print(f"{bad} includes cross a layer" if bad else "layers kept")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
