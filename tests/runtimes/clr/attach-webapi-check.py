#!/usr/bin/env python3
"""attach-webapi-check.py - checks a trace that `heaptrace record --pid`
made of the SDK's webapi template under load (attach-webapi-test.sh).

usage: attach-webapi-check.py [--gcdump REPORT] HEAPTRACE TRACE

Checks, one line each (FAIL: or ok:), exits 1 if any failed:
  - `heaptrace check` exits 0 with 0 relocation inconsistencies;
  - the header says the trace was attached (metadata attached: yes);
  - two dumps at least (dotnet-gcdump's full GC, the last at the detach);
  - with --gcdump: the dump of dotnet-gcdump's GC (the one before the
    last) and its report hold the same number of objects within 1%, and
    types of the same count in both hold 97% of the trace's objects at
    least (the rest: types the two name differently, as check-clr.py's
    comparison says).
"""
import importlib.util
import os
import sys

spec = importlib.util.spec_from_file_location(
    "check_clr", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "check-clr.py"))
clr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(clr)


def main():
    args = sys.argv[1:]
    report = None
    if args[:1] == ["--gcdump"]:
        report = args[1]
        args = args[2:]
    if len(args) != 2:
        sys.exit(__doc__)
    heaptrace, trace = args
    clr.check_attached_trace(heaptrace, trace)
    stats = clr.analysis(heaptrace, "stats", trace)
    dumps = [d["index"] for d in stats["dumps"]]
    if not clr.check(len(dumps) >= 2, "%d dumps" % len(dumps),
                     "%d dumps, not 2 at least (dotnet-gcdump's GC, the "
                     "detach)" % len(dumps)):
        return
    if not report:
        return
    agreeing, ours, theirs = clr.compare_gcdump(stats, dumps[-2], report, {})
    clr.check(abs(ours - theirs) <= theirs / 100,
              "the dump of dotnet-gcdump's GC (dump %d) holds %d objects, "
              "dotnet-gcdump %d" % (dumps[-2], ours, theirs),
              "the dump of dotnet-gcdump's GC (dump %d) holds %d objects, "
              "dotnet-gcdump %d: more than 1%% apart"
              % (dumps[-2], ours, theirs))
    clr.check(agreeing >= 0.97 * ours,
              "types of the same count in the trace and dotnet-gcdump hold "
              "%.1f%% of the trace's objects" % (100.0 * agreeing / max(ours, 1)),
              "types of the same count in the trace and dotnet-gcdump hold "
              "only %.1f%% of the trace's objects"
              % (100.0 * agreeing / max(ours, 1)))


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, ValueError, KeyError, IndexError) as e:
        clr.fail("cannot check: %s: %s" % (type(e).__name__, e))
    sys.exit(1 if clr.failures else 0)
