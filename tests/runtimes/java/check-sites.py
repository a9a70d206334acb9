#!/usr/bin/env python3
"""check-sites.py - checks the allocation sites the JVMTI agent recorded
(heaptrace record --sites) of KnownSites (KnownSites.java), from the
events `heaptrace cat` prints, against what the program made.

usage: check-sites.py HEAPTRACE TRACE SOURCE PROGRAM_OUTPUT all|sampled|gcs

SOURCE is KnownSites.java: each site's line is the one whose comment says
"SITE name". PROGRAM_OUTPUT has a line "site NAME COUNT SIZE" per site.
An allocation is a site's when the innermost frame of its stack is the
site's method at the site's line in KnownSites.java, the next one
KnownSites.main. Checks, in both modes:
  - the header says sites: all (mode all) or sites: 524288 (JVMTI's
    default interval, mode sampled);
  - every stack is declared once, before any allocation names it, its
    frames declared methods, at most 64 of them; every object id is
    allocated once;
  - each site's allocations are byte arrays of the size the program says;
  - the kept arrays sampled are all in the exit dump, under the ids their
    allocations had; the old ones, dropped, none; of the churned ones at
    most the last.
With all, each site's allocations are exactly the arrays the program made
(JVMTI samples every allocation at interval 0). With gcs (all, with a dump
after every GC), the old arrays are in at least one dump before the last,
each dump holding all of them under their allocations' ids or none (a
dump's walk may meet an allocation before its sample is recorded, which
then leaves it out: the counts are not checked). Sampled, each site's
count upscaled (each sample counts 1/p, p = 1 - exp(-size/interval), the
chance HotSpot's sampler picks an object of its size) is within 4 sigma of
the truth, sigma = sqrt(N (1 - p) / p) for N arrays (the binomial's): a
false failure about once in 10,000 runs for each site.
Prints one line per failed check, and the figures; exits 1 if any failed.
"""
import math
import re
import subprocess
import sys

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL: " + what)
    return ok


SITE_METHODS = {"keep": "KnownSites.keep", "churn": "KnownSites.churn",
                "old": "KnownSites.makeOld"}
DEFAULT_INTERVAL = 512 * 1024
MAX_FRAMES = 64

METHOD = re.compile(r"^  - method: \{id: (0x[0-9a-f]+|\d+), name: (.*?)"
                    r"(?:, file: (.*?))?(?:, line: (\d+))?\}$")
STACK = re.compile(r"^  - stack: \{id: (\d+), frames: \[(.*)\]\}$")
ALLOC = re.compile(r"^  - object_allocated: \{id: (0x[0-9a-f]+), "
                   r"class: (0x[0-9a-f]+), size: (\d+)(?:, stack: (\d+))?\}$")
CLASS = re.compile(r"^  - class: \{id: (0x[0-9a-f]+), name: (.*?)[,}]")
OBJECT = re.compile(r"^  - object_references: \{id: (0x[0-9a-f]+),")


def unquote(s):
    return s[1:-1] if s and s[0] == '"' else s


def main():
    heaptrace, trace, source, output, mode = sys.argv[1:6]
    lines = {}
    with open(source) as f:
        for n, text in enumerate(f, 1):
            m = re.search(r"// SITE (\w+)", text)
            if m:
                lines[m.group(1)] = n
    truth = {}
    with open(output) as f:
        for text in f:
            w = text.split()
            if len(w) == 4 and w[0] == "site":
                truth[w[1]] = (int(w[2]), int(w[3]))
    check(set(lines) == set(SITE_METHODS) == set(truth),
          "the sites of the source %s and of the output %s" %
          (sorted(lines), sorted(truth)))

    cat = subprocess.run([heaptrace, "cat", trace], check=True,
                         stdout=subprocess.PIPE).stdout.decode("utf-8")
    methods, stacks, classes = {}, {}, {}
    allocs = {}            # site -> [(id, size)]
    allocated = set()
    dumps, dump = [], None
    for text in cat.splitlines():
        if text.startswith("  sites: "):
            want = str(DEFAULT_INTERVAL) if mode == "sampled" else "all"
            check(unquote(text.split(": ", 1)[1]) == want,
                  "the header says %s, not sites: %s" % (text.strip(), want))
        m = METHOD.match(text)
        if m:
            methods[int(m.group(1), 0)] = (unquote(m.group(2)),
                                           unquote(m.group(3) or ""),
                                           int(m.group(4) or 0))
            continue
        m = STACK.match(text)
        if m:
            sid = int(m.group(1))
            frames = [int(x, 0) for x in m.group(2).split(", ") if x]
            check(sid not in stacks, "stack %d declared twice" % sid)
            check(len(frames) <= MAX_FRAMES,
                  "stack %d has %d frames" % (sid, len(frames)))
            check(all(f in methods for f in frames),
                  "stack %d names a method not declared before it" % sid)
            stacks[sid] = [methods.get(f) for f in frames]
            continue
        m = CLASS.match(text)
        if m:
            classes[int(m.group(1), 0)] = unquote(m.group(2))
            continue
        m = ALLOC.match(text)
        if m:
            oid, cls, size = int(m.group(1), 0), int(m.group(2), 0), \
                int(m.group(3))
            sid = int(m.group(4) or 0)
            check(oid not in allocated, "object 0x%x allocated twice" % oid)
            allocated.add(oid)
            check(sid in stacks, "allocation 0x%x names stack %d, not "
                  "declared before it" % (oid, sid))
            frames = stacks.get(sid) or []
            for site, method in SITE_METHODS.items():
                if (len(frames) >= 2 and
                        frames[0] == (method, "KnownSites.java",
                                      lines.get(site)) and
                        frames[1][0] == "KnownSites.main"):
                    allocs.setdefault(site, []).append((oid, size, cls))
            continue
        if "type: C_BEGIN" in text:
            dump = set()
        elif "type: C_END" in text:
            dumps.append(dump)
            dump = None
        elif dump is not None:
            m = OBJECT.match(text)
            if m:
                dump.add(int(m.group(1), 0))
    check(len(dumps) >= 1, "no dump in the trace")
    last = dumps[-1] if dumps else set()

    for site in sorted(SITE_METHODS):
        n, size = truth.get(site, (0, 0))
        got = allocs.get(site, [])
        check(all(s == size for _, s, _ in got),
              "%s: sizes %s, not %d" % (site, sorted({s for _, s, _ in got}),
                                        size))
        check(all(classes.get(c) == "byte[]" for _, _, c in got),
              "%s: classes %s, not byte[]" %
              (site, sorted({classes.get(c, hex(c)) for _, _, c in got})))
        alive = sum(1 for oid, _, _ in got if oid in last)
        if site == "keep":
            check(alive == len(got), "keep: %d of %d sampled arrays in the "
                  "exit dump" % (alive, len(got)))
        elif site == "old":
            check(alive == 0, "old: %d dropped arrays in the exit dump" %
                  alive)
        else:
            check(alive <= 1, "churn: %d dropped arrays in the exit dump" %
                  alive)
        if mode == "gcs":
            if site == "old":
                ids = {oid for oid, _, _ in got}
                held = [len(ids & d) for d in dumps]
                check(set(held) <= {0, len(ids)} and len(ids) in held[:-1],
                      "old: the %d arrays' ids in the dumps: %s" %
                      (len(ids), held))
                print("old: %d arrays, in %d of %d dumps under their ids" %
                      (len(ids), held.count(len(ids)), len(dumps)))
            continue
        if mode == "all":
            check(len(got) == n, "%s: %d allocations recorded, the program "
                  "made %d" % (site, len(got), n))
            print("%s: %d allocations of %d bytes, %d in the exit dump" %
                  (site, len(got), size, alive))
            continue
        p = -math.expm1(-size / DEFAULT_INTERVAL)
        estimate = len(got) / p
        sigma = math.sqrt(n * (1 - p) / p)
        check(abs(estimate - n) <= 4 * sigma,
              "%s: %d samples make %.0f arrays, the program made %d "
              "(4 sigma: %.0f)" % (site, len(got), estimate, n, 4 * sigma))
        print("%s: %d samples of %d bytes (p %.5f): %.0f arrays estimated, "
              "%d made, error %+.1f%% (sigma %.1f%%)" %
              (site, len(got), size, p, estimate, n,
               100.0 * (estimate - n) / n, 100.0 * sigma / n))
    if failures:
        print("%d check(s) failed" % len(failures))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
