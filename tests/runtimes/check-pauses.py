#!/usr/bin/env python3
"""check-pauses.py [--label L] [--min-gcs N] STATS_JSON - the GC times of a
real recording are present and plausible.

Reads `heaptrace stats --format json` of a trace a recorder wrote (the
recorders stamp every GC's start and finish and every dump's begin and
end) and checks: at least N GCs (default 1); every finished GC has a start
and a finish time with start <= finish and a pause, finish - start, above 0
(the clock counts nanoseconds: no real collection takes none) and below the
run; every dump that began has a begin time, and one that ended ends no
earlier; the summary counts the timed GCs, its total is their sum, its
p50 <= p99 <= max, and the share of the run is above 0 and at most 100%.
Prints each check (checks.py) and the pause figures; exits 1 when one fails.
"""
import argparse
import json
import sys

from checks import Result


def check_gcs(res, gcs, run):
    """Each GC: both times, in order, a pause in (0, run)."""
    pauses = []
    for g in gcs:
        where = "gc %d" % g["index"]
        if not g["finished"]:
            continue
        start, finish = g.get("start_time"), g.get("finish_time")
        timed = start is not None and finish is not None
        res.check(timed, "%s has a start and a finish time" % where)
        if not timed:
            continue
        res.check(start <= finish, "%s: start %d <= finish %d"
                  % (where, start, finish))
        pause = g.get("pause")
        res.check(pause == finish - start,
                  "%s: pause %s is finish - start" % (where, pause))
        if pause == finish - start:
            pauses.append(pause)
            res.check(0 < pause < run, "%s: pause %d ns is above 0 and "
                      "below the run (%d ns)" % (where, pause, run))
    return pauses


def check_dumps(res, dumps):
    """Each dump bracket: a begin time, and an end no earlier."""
    for d in dumps:
        if d["gc_dump"]:
            continue
        begin, end = d.get("begin_time"), d.get("end_time")
        res.check(begin is not None, "dump %d has a begin time" % d["index"])
        if begin is not None and end is not None:
            res.check(begin <= end, "dump %d: begin %d <= end %d"
                      % (d["index"], begin, end))


def check_summary(res, p, pauses):
    """The summary adds up to the GCs' own figures."""
    res.check(p["count"] == len(pauses),
              "summary counts %d timed GCs" % len(pauses))
    res.check(p["total"] == sum(pauses), "summary total %d ns is the sum"
              % p["total"])
    res.check(p["p50"] <= p["p99"] <= p["max"] == max(pauses),
              "p50 %d <= p99 %d <= max %d ns" % (p["p50"], p["p99"],
                                                 p["max"]))
    res.check(0 < p["share"] <= 100,
              "GC time is %.3f%% of the run, above 0 and at most 100%%"
              % p["share"])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default="")
    ap.add_argument("--min-gcs", type=int, default=1)
    ap.add_argument("stats")
    args = ap.parse_args()
    with open(args.stats, encoding="utf-8") as f:
        stats = json.load(f)
    res = Result(args.label)
    gcs = stats["gcs"]
    res.check(len(gcs) >= args.min_gcs, "%d GCs recorded (at least %d)"
              % (len(gcs), args.min_gcs))
    p = stats.get("pauses")
    res.check(p is not None, "the trace has times (a pauses summary)")
    if p is None:
        return 1
    pauses = check_gcs(res, gcs, p["run"])
    check_dumps(res, stats["dumps"])
    if pauses:
        check_summary(res, p, pauses)
    print("pauses: %s%d GCs, total %.3f ms, mean %.3f ms, p50 %.3f ms, "
          "p99 %.3f ms, max %.3f ms; %.2f%% of a %.3f s run"
          % (res.label, p["count"], p["total"] / 1e6, p["mean"] / 1e6,
             p["p50"] / 1e6, p["p99"] / 1e6, p["max"] / 1e6, p["share"],
             p["run"] / 1e9))
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
