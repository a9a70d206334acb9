#!/usr/bin/env python3
"""selftest.py - tools/check-layers.py finds every fault of the fixture
tree beside this file, one of each kind it reports, and nothing else: the
lines in `expected`, in order, and status 1. Without this the test
`layers` would pass as well for a script that checks nothing. Also: a
wrong command line is a usage line and status 2, not a traceback."""
import os
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
script = os.path.join(here, "..", "..", "tools", "check-layers.py")
failed = False

run = subprocess.run([sys.executable, script, here], capture_output=True,
                     text=True)
with open(os.path.join(here, "expected"), encoding="utf-8") as f:
    want = f.read()
if run.stdout != want or run.returncode != 1:
    print(f"check-layers.py over {here}: status {run.returncode}, "
          f"wanted 1; its report:\n{run.stdout}{run.stderr}"
          f"wanted:\n{want}")
    failed = True

for args in (["a", "b"], ["--help"], [os.path.join(here, "no-such-tree")]):
    run = subprocess.run([sys.executable, script] + args,
                         capture_output=True, text=True)
    if run.returncode != 2 or run.stdout or not run.stderr \
            or "Traceback" in run.stderr:
        print(f"check-layers.py {' '.join(args)}: status {run.returncode}, "
              f"wanted 2 and one line on stderr:\n{run.stderr}")
        failed = True

print("check-layers.py finds each fault" if not failed else "")
sys.exit(1 if failed else 0)
