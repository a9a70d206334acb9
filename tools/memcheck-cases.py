#!/usr/bin/env python3
"""memcheck-cases.py COVERAGE_BUILD - picks the command-level cases
(tests/cli/cases) that valgrind memcheck runs in tools/test-all.sh: few,
and cheap under memcheck, that between them run every line of heaptrace's
sources that the whole suite runs.

COVERAGE_BUILD is a gcc build of this tree made with -Db_coverage=true
(meson setup B -Db_coverage=true -Dtests=enabled && ninja -C B). Each case
runs alone (tests/cli/run-case.sh) with the counters cleared before it;
gcov then says which lines of src/ it ran. A greedy cover takes, again and
again, the case that runs the most lines no case taken so far runs for
what it costs under memcheck (START_COST, SLOWDOWN), until the taken
cases run every line some case runs; then drops each taken case whose
lines the others run.

Writes the cases left out, one a line with a comment on top, to standard
output: tests/cli/memcheck-skip.txt is that output. A case not named there,
a new one included, runs under memcheck; rerun this after adding cases to
move the ones that run nothing new into the list. Takes about 5 minutes on
one core (329 cases).
"""
import json
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CASES = os.path.join(ROOT, "tests", "cli", "cases")


def gcda_files(build):
    """The counters files the last run wrote under BUILD."""
    found = []
    for dirpath, _, names in os.walk(build):
        found += [os.path.join(dirpath, n) for n in names if n.endswith(".gcda")]
    return found


def clear_counters(build):
    for f in gcda_files(build):
        os.unlink(f)


def lines_run(build):
    """The (source, line) pairs of src/ that the counters say ran."""
    ran = set()
    for gcda in gcda_files(build):
        out = subprocess.run(
            ["gcov", "--json-format", "--stdout", gcda],
            cwd=os.path.dirname(gcda), capture_output=True, check=False)
        for doc in out.stdout.splitlines():
            if not doc.strip():
                continue
            for f in json.loads(doc).get("files", []):
                path = os.path.normpath(os.path.join(build, f["file"]))
                rel = os.path.relpath(path, ROOT)
                if not rel.startswith("src" + os.sep):
                    continue
                ran.update((rel, ln["line_number"]) for ln in f["lines"]
                           if ln["count"] > 0)
    return ran


# What a case costs under memcheck, in seconds: each start of heaptrace
# (memcheck's own start-up, about half a second), and its time run plain
# about forty times over (what memcheck's translation costs).
START_COST = 0.5
SLOWDOWN = 40


def counting_heaptrace(build, tmp):
    """A heaptrace that counts its starts in TMP/starts, then runs."""
    script = os.path.join(tmp, "heaptrace")
    with open(script, "w") as f:
        f.write('#!/bin/sh\necho >>"%s/starts"\nexec "%s" "$@"\n'
                % (tmp, os.path.join(build, "src", "cli", "heaptrace")))
    os.chmod(script, 0o755)
    return script


def run_case(build, case):
    """Runs CASE alone: its lines, and what it costs under memcheck."""
    clear_counters(build)
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, HEAPTRACE=counting_heaptrace(build, tmp),
                   HT_TESTDATA=os.path.join(ROOT, "testdata"))
        start = time.monotonic()
        done = subprocess.run(
            ["sh", os.path.join(ROOT, "tests", "cli", "run-case.sh"),
             os.path.join(CASES, case)],
            env=env, capture_output=True, check=False)
        took = time.monotonic() - start
        starts = 0
        if os.path.exists(os.path.join(tmp, "starts")):
            with open(os.path.join(tmp, "starts")) as f:
                starts = len(f.readlines())
    if done.returncode != 0:
        sys.exit("memcheck-cases.py: case %s fails:\n%s"
                 % (case, done.stdout.decode(errors="replace")))
    return lines_run(build), starts * START_COST + took * SLOWDOWN


def greedy_cover(runs):
    """Cases that between them run every line any case runs: the one
    that runs the most lines not yet run for its cost, again and again;
    then each taken case, the dearest first, is left out again when the
    others run all its lines."""
    left = set().union(*(lines for lines, _ in runs.values()))
    taken = []
    while left:
        best = max(runs, key=lambda c: len(runs[c][0] & left) / runs[c][1])
        taken.append(best)
        left -= runs[best][0]
    for case in sorted(taken, key=lambda c: -runs[c][1]):
        others = [runs[c][0] for c in taken if c != case]
        if runs[case][0] <= set().union(*others):
            taken.remove(case)
    return taken


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: memcheck-cases.py COVERAGE_BUILD")
    build = os.path.abspath(sys.argv[1])
    cases = sorted(os.listdir(CASES))
    runs = {c: run_case(build, c) for c in cases}
    taken = set(greedy_cover(runs))
    skipped = [c for c in cases if c not in taken]
    total = len(set().union(*(lines for lines, _ in runs.values())))
    print("# The command-level cases that valgrind memcheck leaves out")
    print("# (tools/test-all.sh): every line of src/ that they run, another")
    print("# case run under memcheck runs too. Written by")
    print("# tools/memcheck-cases.py: %d cases of %d run under memcheck,"
          % (len(taken), len(cases)))
    print("# %d lines of src/ between them." % total)
    for c in skipped:
        print(c)


if __name__ == "__main__":
    main()
