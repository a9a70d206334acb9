#!/usr/bin/env python3
"""check-sites.py HEAPTRACE TRACE SOURCE OUT MODE - checks the allocation
sites that `heaptrace record --sites` wrote for Sites.cs (sites-test.sh).

SOURCE is Sites.cs, whose lines marked "site:NAME" are the three sites;
OUT what the program printed (how many objects each site made). The trace
is read through `heaptrace cat`: the header's `sites`, the method events
(name, file, line), the stack events and each object_allocated's stack. A
site's allocations are those whose stack's innermost frame is its method.

MODE all (--sites=all): every allocation has a stack; each site's
allocations are exactly what the program made, in number, class and
size, each at the marked line (from the PDB); a few kept objects are
followed by `heaptrace history` from their allocation to the last dump,
and a few elders to their death.

MODE default (--sites, the runtime's sampling at 102400 bytes), or a
number of bytes (--sites=BYTES, the recorder's own sampler): each
site's bytes estimated from its samples, each weighted by 1/p with
p = 1 - exp(-size/INTERVAL), are within four standard deviations of what
the program made (the deviation of that estimator for the true counts):
a failure by chance, for the three sites, about once in 5,000 runs
(normal approximation).
"""
import json
import math
import re
import subprocess
import sys

RUNTIME_INTERVAL = 102400
# byte[1000], byte[100], byte[2000]: 24 bytes of header and length
SITES = {"Keep": 1024, "Churn": 124, "Elder": 2024}


def fail(msg):
    print("FAIL: " + msg)
    return 1


def ok(msg):
    print("ok: " + msg)
    return 0


def site_lines(source):
    lines = {}
    with open(source, encoding="utf-8") as f:
        for n, text in enumerate(f, 1):
            m = re.search(r"site:(\w+)", text)
            if m:
                lines[m.group(1)] = n
    return lines


def made(out):
    m = re.search(r"kept (\d+) churned (\d+) elders (\d+)", out)
    return {"Keep": int(m.group(1)), "Churn": int(m.group(2)),
            "Elder": int(m.group(3))}


def read_trace(heaptrace, trace):
    text = subprocess.run([heaptrace, "cat", trace], check=True,
                          capture_output=True, text=True).stdout
    header = {}
    methods, stacks, classes, allocs = {}, {}, {}, []
    m = re.search(r"^  sites: \"?([^\"\n]+)\"?$", text, re.M)
    header["sites"] = m.group(1) if m else None
    for line in text.splitlines():
        if line.startswith("  - method: "):
            mid = re.search(r"id: (0x[0-9a-f]+)", line).group(1)
            name = re.search(r"name: \"?([^,\"}]+)", line).group(1)
            fm = re.search(r"file: \"?([^,\"}]+)", line)
            lm = re.search(r"line: (\d+)", line)
            methods[int(mid, 16)] = (name, fm.group(1) if fm else None,
                                     int(lm.group(1)) if lm else 0)
        elif line.startswith("  - class: "):
            cid = re.search(r"id: (0x[0-9a-f]+)", line).group(1)
            name = re.search(r"name: \"?([^,\"}]+)", line).group(1)
            classes[int(cid, 16)] = name
        elif line.startswith("  - stack: "):
            sid = int(re.search(r"id: (\d+)", line).group(1))
            frames = re.search(r"frames: \[([^\]]*)\]", line).group(1)
            stacks[sid] = [int(f, 16) for f in frames.split(", ") if f]
        elif line.startswith("  - object_allocated: "):
            oid = re.search(r"id: (0x[0-9a-f]+)", line).group(1)
            cls = re.search(r"class: (0x[0-9a-f]+)", line).group(1)
            size = int(re.search(r"size: (\d+)", line).group(1))
            sm = re.search(r"stack: (\d+)", line)
            allocs.append((int(oid, 16), int(cls, 16), size,
                           int(sm.group(1)) if sm else 0))
    return header, methods, stacks, classes, allocs


def by_site(methods, stacks, allocs):
    """Each site's allocations: (id, class, size, innermost method)."""
    out = {name: [] for name in SITES}
    for oid, cls, size, sid in allocs:
        frames = stacks.get(sid)
        if not frames:
            continue
        top = methods.get(frames[0])
        if not top:
            continue
        for name in SITES:
            if top[0] == "Demo.Sites." + name:
                out[name].append((oid, cls, size, top))
    return out


def history(heaptrace, trace, oid):
    text = subprocess.run([heaptrace, "history", "--format", "json", trace,
                           hex(oid)], check=True, capture_output=True,
                          text=True).stdout
    return json.loads(text)


def check_all(heaptrace, trace, lines, counts, sites, classes, allocs):
    failures = 0
    unstacked = sum(1 for a in allocs if not a[3])
    failures += (ok if unstacked == 0 else fail)(
        "%d allocations, %d without a stack" % (len(allocs), unstacked))
    for name, size in SITES.items():
        got = sites[name]
        at_line = [a for a in got if a[3][1] == "Sites.cs" and
                   a[3][2] == lines[name]]
        wrong = [a for a in got if a[2] != size or
                 classes.get(a[1]) != "System.Byte[]"]
        if len(got) == counts[name] and len(at_line) == len(got) and \
                not wrong:
            failures += ok("%s: %d allocations of %d B at Sites.cs:%d, as "
                           "the program made" % (name, len(got), size,
                                                 lines[name]))
        else:
            failures += fail("%s: %d allocations (%d at Sites.cs:%d, %d of "
                             "another class or size), the program made %d"
                             % (name, len(got), len(at_line), lines[name],
                                len(wrong), counts[name]))
    # the kept ones live to the end, the elders die, each followed by its
    # allocation's id
    for name, fate in (("Keep", "alive"), ("Elder", "died")):
        got = sites[name]
        for k in range(0, len(got), max(1, len(got) // 4)):
            oid = got[k][0]
            h = history(heaptrace, trace, oid)
            objs = h["objects"]
            events = [e["event"] for e in h["timeline"]]
            if len(objs) == 1 and objs[0]["fate"] == fate and \
                    events[0] == "allocated" and "seen_in_dump" in events:
                failures += ok("%s object %#x: allocated, seen in a dump, "
                               "%s" % (name, oid, fate))
            else:
                failures += fail("%s object %#x: %s, events %s" % (
                    name, oid, [o["fate"] for o in objs],
                    sorted(set(events))))
    return failures


def check_sampled(sites, counts, interval):
    failures = 0
    for name, size in SITES.items():
        p = 1 - math.exp(-size / interval)
        estimate = sum(a[2] / (1 - math.exp(-a[2] / interval))
                       for a in sites[name])
        truth = counts[name] * size
        # the estimator's variance: n * size^2 * (1 - p) / p
        sd = math.sqrt(counts[name] * size * size * (1 - p) / p)
        err = abs(estimate - truth)
        msg = ("%s: %d samples, %.0f B estimated, %d B made (%+.1f%%, "
               "%.1f standard deviations of %.0f B)" % (
                   name, len(sites[name]), estimate, truth,
                   100.0 * (estimate - truth) / truth, err / sd, sd))
        failures += (ok if err <= 4 * sd else fail)(msg)
    return failures


def main():
    heaptrace, trace, source, out, mode = sys.argv[1:6]
    with open(out, encoding="utf-8") as f:
        counts = made(f.read())
    lines = site_lines(source)
    header, methods, stacks, classes, allocs = read_trace(heaptrace, trace)
    interval = RUNTIME_INTERVAL if mode == "default" else \
        None if mode == "all" else int(mode)
    want = "all" if mode == "all" else str(interval)
    failures = (ok if header["sites"] == want else fail)(
        "the header says sites: %s" % header["sites"])
    sites = by_site(methods, stacks, allocs)
    if mode == "all":
        failures += check_all(heaptrace, trace, lines, counts, sites,
                              classes, allocs)
    else:
        failures += check_sampled(sites, counts, interval)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
