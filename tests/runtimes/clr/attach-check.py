#!/usr/bin/env python3
"""attach-check.py - checks a trace that `heaptrace record --pid` made of
the running attach-service (attach-service.cs) against the heap the service
keeps and, when given, dotnet-gcdump's report of a GC the trace dumped.

usage: attach-check.py [--gcdump REPORT] HEAPTRACE TRACE N

Checks, one line each (FAIL: or ok:), exits 1 if any failed:
  - `heaptrace check` exits 0 with 0 relocation inconsistencies;
  - the header says the trace was attached (metadata attached: yes);
  - there are three dumps at least (SIGUSR1 to record, dotnet-gcdump's
    full GC, the last at the detach), and each holds exactly the
    service's N accounts, N/4 sessions and one session array;
  - in every dump, the first included (the classes were all loaded before
    the attach), the references to accounts carry their field's name
    (Session.Account or Account.Next), not an array-like position;
  - with --gcdump: the dump of dotnet-gcdump's GC (the one before the
    last) agrees with its report on the count and bytes of the service's
    types (check-clr.py's comparison), the whole histogram reported.
"""
import importlib.util
import os
import sys

spec = importlib.util.spec_from_file_location(
    "check_clr", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                              "check-clr.py"))
clr = importlib.util.module_from_spec(spec)
spec.loader.exec_module(clr)


def expected_counts(n):
    return {
        "AttachService.Account": n,
        "AttachService.Session": n // 4,
        "AttachService.Session[]": 1,
    }


FIELD_STEPS = {"AttachService.Session.Account", "AttachService.Account.Next"}


def check_field_names(heaptrace, trace, dump):
    top = clr.analysis(heaptrace, "top", "--class", "AttachService.Account",
                       "-n", "5", "--dump", str(dump), trace)
    steps = []
    for o in top["objects"]:
        p = clr.analysis(heaptrace, "paths", "--to", o["id"], "-n", "1",
                         "--dump", str(dump), trace)
        if p["paths"]:
            steps.append(p["paths"][0]["objects"][-1]["step"])
    clr.check(steps and all(s in FIELD_STEPS for s in steps),
              "dump %d: references to accounts name their field (%s)"
              % (dump, ", ".join(sorted(set(steps)))),
              "dump %d: references to accounts without their field's name: "
              "%s" % (dump, steps))


def main():
    args = sys.argv[1:]
    report = None
    if args[:1] == ["--gcdump"]:
        report = args[1]
        args = args[2:]
    if len(args) != 3:
        sys.exit(__doc__)
    heaptrace, trace, n = args[0], args[1], int(args[2])
    expected = expected_counts(n)
    clr.check_attached_trace(heaptrace, trace)
    stats = clr.analysis(heaptrace, "stats", trace)
    dumps = [d["index"] for d in stats["dumps"]]
    if not clr.check(len(dumps) >= 3, "%d dumps" % len(dumps),
                     "%d dumps, not 3 at least (SIGUSR1, dotnet-gcdump's "
                     "GC, the detach)" % len(dumps)):
        return
    for d in dumps:
        clr.check_counts(stats, d, expected, "the service's heap")
        check_field_names(heaptrace, trace, d)
    if report:
        clr.compare_gcdump(stats, dumps[-2], report, expected)


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, ValueError, KeyError, IndexError) as e:
        clr.fail("cannot check: %s: %s" % (type(e).__name__, e))
    sys.exit(1 if clr.failures else 0)
