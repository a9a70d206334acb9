#!/usr/bin/env python3
"""check-rehash.py - checks `heaptrace diff` across a HashMap's resize
(rehash-test.sh): two dumps of Rehash (Rehash.java), the second after MORE
puts past the map's threshold, which moved its N entries to other slots
of a table twice as long.

usage: check-rehash.py [--label TEXT] HEAPTRACE A B N MORE

Checks, one line each (FAIL: or ok:), exiting 1 if any failed:
  - the dumps grew by 4 objects a put (a node, a key, its bytes and a
    value; the table that replaced the old one adds none) within 5%: the
    growth measured is the map's;
  - `heaptrace diff A B` matches objects by path and reports as new the
    real growth (objects in B minus objects in A) within 5%;
  - the map's entries are one row of diff's retainers, N of them before
    and N + MORE after, whatever slots the resize moved them to.
"""
import json
import os
import subprocess
import sys

# checks.py is in the runtime tests' shared folder; no .pyc left in the
# tree
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from checks import Result  # noqa: E402

TOLERANCE = 0.05
OBJECTS_A_PUT = 4
ENTRY = "java.util.HashMap$Node"


def run_json(heaptrace, *args):
    out = subprocess.run([heaptrace] + list(args), check=True,
                         stdout=subprocess.PIPE).stdout
    return json.loads(out)


def objects(heaptrace, dump):
    return run_json(heaptrace, "stats", "--format", "json",
                    dump)["dumps"][-1]["objects"]


def main():
    argv = sys.argv[1:]
    label = ""
    if argv[:1] == ["--label"]:
        label, argv = argv[1], argv[2:]
    if len(argv) != 5:
        sys.exit(__doc__)
    heaptrace, a, b = argv[:3]
    n, more = int(argv[3]), int(argv[4])
    r = Result(label)

    growth = objects(heaptrace, b) - objects(heaptrace, a)
    expected = OBJECTS_A_PUT * more
    r.check(abs(growth - expected) <= TOLERANCE * expected,
            "the dumps grew by %d objects, about %d for %d puts"
            % (growth, expected, more))
    d = run_json(heaptrace, "diff", "-n", "0", "--format", "json", a, b)
    r.check(d["matched_by"] == "path",
            "diff matches objects by path (%s)" % d["matched_by"])
    new = d["new_objects"]
    r.check(abs(new - growth) <= TOLERANCE * growth,
            "diff reports %d new objects for a real growth of %d (%+.2f%%, "
            "within %d%%)" % (new, growth, 100.0 * (new - growth) / growth,
                              100 * TOLERANCE))
    rows = [x for x in d["retainers"] if x["class"] == ENTRY]
    entries = [x for x in rows if x["objects"]["before"] == n and
               x["objects"]["after"] == n + more]
    r.check(len(entries) == 1,
            "the map's entries are one row, %d -> %d %s (rows of %s: %s)"
            % (n, n + more, ENTRY, ENTRY,
               "; ".join("%d -> %d" % (x["objects"]["before"],
                                      x["objects"]["after"])
                         for x in rows[:5]) or "none"))
    sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
