#!/usr/bin/env python3
"""check-sites.py [--label L] [--alloc] [--ids FILE] YAML SOURCE
SITE=METHOD:COUNT:SIZE... - the allocation sites a recorder wrote for a
program whose sites are known.

YAML is `heaptrace cat` of the trace; SOURCE the program's source, whose
line ending with "// site: NAME" is where site NAME allocates. Each
SITE=METHOD:COUNT:SIZE says that METHOD, at that line of SOURCE, made
exactly COUNT objects of SIZE bytes (in the trace's rounding).

With the header's `sites: all`, every allocation carries its stack: the
allocations whose innermost frame is METHOD at its line, in a file named
as SOURCE, must be exactly COUNT, all of SIZE bytes. With `sites:
INTERVAL`, each sampled object of s bytes stands for 1/p objects, p = 1 -
exp(-s/INTERVAL): the estimate of COUNT must lie within 4 standard
deviations of it, sqrt(COUNT (1 - p) / p) (a false failure about once in
15000 checks). Every stack and method an allocation names is declared
before it. --alloc (alloc on as well): every object of the site is one
object_allocated event, sampled or not: the events of SIZE bytes are at
least COUNT, and fewer than COUNT plus the samples (other code may make a
few objects of that size; a sampled object recorded twice would add as
many as there are samples). --ids FILE: the ids of
each site's allocations, "NAME ID" a line, for the caller's history
checks. Exits 1 when a check fails.
"""
import argparse
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from checks import Result  # noqa: E402

METHOD = re.compile(r'  - method: \{id: (0x[0-9a-f]+), name: ("(?:[^"\\]|\\.)*"|[^,}]+)'
                    r'(?:, file: ("(?:[^"\\]|\\.)*"|[^,}]+))?(?:, line: (\d+))?')
STACK = re.compile(r'  - stack: \{id: (\d+), frames: \[([^\]]*)\]')
ALLOC = re.compile(r'  - object_allocated: \{id: (0x[0-9a-f]+), class: [^,]+, '
                   r'size: (\d+)(?:, stack: (\d+))?')
SITES = re.compile(r'^  sites: "?([^"\n]+)"?$')


def unquote(s):
    return s[1:-1] if s and s.startswith('"') else s


def site_lines(source):
    lines = {}
    with open(source) as f:
        for n, line in enumerate(f, 1):
            m = re.search(r"// site: (\w+)\s*$", line)
            if m:
                lines[m.group(1)] = n
    return lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default="")
    ap.add_argument("--alloc", action="store_true")
    ap.add_argument("--ids")
    ap.add_argument("yaml")
    ap.add_argument("source")
    ap.add_argument("sites", nargs="+")
    a = ap.parse_args()
    res = Result(a.label)
    lines = site_lines(a.source)
    want = {}
    for s in a.sites:
        name, rest = s.split("=", 1)
        method, count, size = rest.split(":")
        want[name] = (method, lines.get(name), int(count), int(size))

    methods, stacks = {}, {}
    sites_meta = None
    undeclared = 0
    sampled = {n: [] for n in want}     # ids of the site's sampled objects
    other_sizes = {n: 0 for n in want}  # sampled at the site, another size
    events_of_size = {n: 0 for n in want}
    src = os.path.basename(a.source)
    with open(a.yaml) as f:
        for line in f:
            m = SITES.match(line)
            if m:
                sites_meta = m.group(1)
                continue
            m = METHOD.match(line)
            if m:
                methods[m.group(1)] = (unquote(m.group(2)),
                                       unquote(m.group(3)),
                                       int(m.group(4) or 0))
                continue
            m = STACK.match(line)
            if m:
                frames = [x.strip() for x in m.group(2).split(",") if x.strip()]
                if any(x not in methods for x in frames):
                    undeclared += 1
                stacks[m.group(1)] = frames
                continue
            m = ALLOC.match(line)
            if not m:
                continue
            oid, size, stack = m.group(1), int(m.group(2)), m.group(3)
            for n, (_, _, _, wsize) in want.items():
                if size == wsize:
                    events_of_size[n] += 1
            if not stack:
                continue
            if stack not in stacks:
                undeclared += 1
                continue
            name, file, lineno = methods[stacks[stack][0]]
            for n, (wmethod, wline, _, wsize) in want.items():
                if name == wmethod and lineno == wline and file and \
                        os.path.basename(file) == src:
                    if size == wsize:
                        sampled[n].append(oid)
                    else:
                        other_sizes[n] += 1

    res.check(sites_meta is not None, "the header says sites: %s" % sites_meta)
    res.check(undeclared == 0,
              "every stack and frame declared before use (%d not)" % undeclared)
    interval = None if sites_meta in (None, "all") else int(sites_meta)
    for n, (wmethod, wline, count, size) in want.items():
        got = len(sampled[n])
        where = "%s (%s:%s)" % (wmethod, src, wline)
        res.check(other_sizes[n] == 0,
                  "%s: no allocation of another size (%d)" % (where, other_sizes[n]))
        if a.alloc:
            res.check(count <= events_of_size[n] < count + max(got, 1),
                      "%s: one event per object, %d of %d bytes for %d "
                      "objects, %d sampled" % (where, events_of_size[n], size,
                                               count, got))
        if interval is None:
            res.check(got == count, "%s: %d allocations of %d bytes, exactly %d"
                      % (where, got, size, count))
            continue
        p = -math.expm1(-size / interval)
        estimate = got / p
        sigma = math.sqrt(count * (1 - p) / p)
        res.check(abs(estimate - count) <= 4 * sigma,
                  "%s: %d samples of %d bytes estimate %.0f objects (%.0f bytes) "
                  "for %d, within 4 sd (%.0f, %.1f%%)"
                  % (where, got, size, estimate, estimate * size, count,
                     4 * sigma, 400 * sigma / count))
    if a.ids:
        with open(a.ids, "w") as f:
            for n, ids in sampled.items():
                for oid in ids:
                    f.write("%s %s\n" % (n, oid))
    return 1 if res.failed else 0


if __name__ == "__main__":
    sys.exit(main())
