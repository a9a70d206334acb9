#!/usr/bin/env python3
"""check-clr.py - checks a trace that `heaptrace record` made of KnownHeap
(KnownHeap.cs) on CoreCLR against what the program built, what it printed of
itself (its GC counts, the address and generation of its Tracked object
after each GC) and, when given, dotnet-gcdump's report of the same GC.

usage: check-clr.py [options] HEAPTRACE TRACE PROGRAM_OUTPUT N DEPTH LEAVES GARBAGE
  --gcdump REPORT   `dotnet-gcdump report` of the first full GC after the
                    program's "ready" line (the trace must dump that GC)
  --allocations     the trace has every allocation (record --allocations):
                    check the allocation counts, the history of Tracked from
                    its birth, and that the GC figures add up
  --label TEXT      said in front of every line

Checks, one line each (FAIL: or ok:), exits 1 if any failed:
  - `heaptrace check` exits 0, and reports 0 relocation inconsistencies if
    it counts them;
  - the trace has the GCs the runtime counted (GC.CollectionCount of each
    generation when the program printed "ready" and "done"), and the GC the
    program induced is a full, induced one (.NET 8 reports it as "other"),
    with a dump of its references;
  - that dump (and dotnet-gcdump's, and the last) holds exactly the
    program's objects, type by type; dotnet-gcdump's report agrees on the
    count and bytes of each of them; how far the whole histograms agree is
    printed;
  - retained sizes: the list's head retains its nodes and their payloads,
    the tree's root its nodes; the leaves, which the tree and their array
    share, neither; each sum computed here from the object sizes the dump
    reports and the program's structure, not from heaptrace's dominators;
  - roots: the tree is held by a stack root of KnownHeap.Program.Main (the
    root id is the frame's FunctionID, named by the trace), the pinned
    array by a pinning handle, WeakKept also by a weak handle; the POH
    array is in generation 4; the ConditionalWeakTable's live value is
    reachable; neither pinned array ever moves;
  - the non-GC heap (string literals, frozen RuntimeTypes): every dump
    reports each object once (no duplicates), and each of those outside the
    GC's generations is a root of kind other; strings are sized as the
    runtime sizes them, 22 + 2 bytes a unit: String.Empty 22 bytes, where
    GetObjectSize2 says 24, and as dotnet-gcdump's report says;
  - `heaptrace history` of Tracked: its moves are the address changes the
    program saw, in the same GCs, and its generations the ones
    GC.GetGeneration gave (from its birth, through promotions 0 -> 1 -> 2,
    with --allocations; else from the dump of the program's GC on);
  - with --allocations: every object the program made was recorded; per
    GC, moved + survived + died + kept + untouched + lost is the number of
    tracked objects alive before it, which the allocations between GCs
    (counted from the events) and the GC before give; and a full GC's dump
    holds exactly the objects it moved, left in place or kept.
"""
import json
import re
import subprocess
import sys

failures = 0
label = ""


def fail(what):
    global failures
    failures += 1
    print("FAIL: %s%s" % (label, what))


def ok(what):
    print("ok: %s%s" % (label, what))


def note(what):
    print("note: %s%s" % (label, what))


def check(cond, good, bad):
    if cond:
        ok(good)
    else:
        fail(bad)
    return cond


def run(heaptrace, *args):
    return subprocess.run([heaptrace] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)


def analysis(heaptrace, *args):
    r = run(heaptrace, *(list(args[:-1]) + ["--format", "json", args[-1]]))
    if r.returncode != 0:
        raise RuntimeError("heaptrace %s: exit %d: %s" %
                           (" ".join(args), r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)


# Each role of KnownHeap has a type of its own; after the full GC the
# program induced, exactly these many of each are alive.
def expected_counts(n, depth, leaves):
    return {
        "KnownHeap.ListNode": n,
        "KnownHeap.ListPayload": n,
        "KnownHeap.TreeNode": 2 ** depth - 1,
        "KnownHeap.Leaf": leaves,
        "KnownHeap.Leaf[]": 1,
        "KnownHeap.Tracked": 1,
        "KnownHeap.PinnedItem[]": 1,
        "KnownHeap.PohItem[]": 1,
        "KnownHeap.WeakKept": 1,
        "KnownHeap.WeakOnly": 0,
        "KnownHeap.CwtKey": 1,
        "KnownHeap.CwtValue": 1,
        "KnownHeap.CwtDeadKey": 0,
        "KnownHeap.CwtDeadValue": 0,
        "KnownHeap.Garbage": 0,
        "KnownHeap.Garbage[]": 0,
    }


def program_output(path):
    """The program's samples of Tracked, and its ready and done lines."""
    samples, ready, done, runtime = [], None, None, ""
    for line in open(path):
        f = line.split()
        if not f:
            continue
        if f[0] == "runtime" and len(f) == 3:
            runtime = f[1]
        elif f[0] == "tracked" and len(f) == 6:
            samples.append({"gcs": [int(x) for x in f[1:4]],
                            "address": int(f[4], 16),
                            "generation": int(f[5])})
        elif f[0] == "ready" and len(f) == 5:
            ready = [int(x) for x in f[2:5]]
        elif f[0] == "done" and len(f) == 5:
            done = [int(x) for x in f[1:4]]
    return samples, ready, done, runtime


def gcdump_report(path):
    """{type: (count, bytes)} from `dotnet-gcdump report`: its rows are
    AVERAGE_BYTES COUNT TYPE [MODULE], large objects bucketed by a
    "(Bytes > N)" after the type."""
    rows = {}
    for line in open(path):
        m = re.match(r"\s*([\d,]+)\s+([\d,]+)\s+(.*?)\s*(\[[^\]]*\])?\s*$",
                     line)
        if not m or not m.group(3):
            continue
        name = re.sub(r"\s*\(Bytes > [^)]*\)$", "", m.group(3))
        size = int(m.group(1).replace(",", ""))
        count = int(m.group(2).replace(",", ""))
        c, b = rows.get(name, (0, 0))
        rows[name] = (c + count, b + size * count)
    return rows


def gcdump_forms(name):
    """The ways dotnet-gcdump may write the type the trace calls NAME."""
    flat = name.replace(", ", ",")
    depth, cut = 0, -1
    for i, ch in enumerate(flat):
        depth += ch == "<"
        depth -= ch == ">"
        if ch == "+" and depth == 0:
            cut = i
    if cut < 0:
        return {flat}
    outer, inner = flat[:cut], flat[cut + 1:]
    args = outer[outer.index("<"):outer.rindex(">") + 1] if "<" in outer \
        else ""
    base = inner.split("[")[0]
    forms = {flat, base + args + inner[len(base):]}
    # a compiler-made nested type: <>c, <>c__DisplayClass3_0 as []c...
    return forms | {f.replace("+<>", "+[]") for f in forms} | \
        {f[f.rindex("+") + 1:].replace("<>", "[]") for f in forms
         if "+<>" in f}


def dump_classes(stats, index):
    d = [x for x in stats["dumps"] if x["index"] == index][0]
    return {c["name"]: (c["count"], c["bytes"]) for c in d["classes"]}


def check_counts(stats, index, expected, what):
    classes = dump_classes(stats, index)
    wrong = ["%s: %d, not %d" % (name, classes.get(name, (0, 0))[0], want)
             for name, want in expected.items()
             if classes.get(name, (0, 0))[0] != want]
    check(not wrong, "%s (dump %d): exact counts of the %d known types"
          % (what, index, len(expected)),
          "%s (dump %d): %s" % (what, index, "; ".join(wrong)))


def check_trace_clean(heaptrace, trace):
    r = run(heaptrace, "check", trace)
    check(r.returncode == 0, "heaptrace check: clean",
          "heaptrace check exits %d: %s" %
          (r.returncode, (r.stdout + r.stderr).strip()[-2000:]))
    for line in r.stdout.splitlines():
        if "relocation inconsistenc" in line:
            m = re.search(r"(\d+) relocation inconsistenc", line) or \
                re.search(r"relocation inconsistenc\w*\W+(\d+)", line)
            check(m and m.group(1) == "0",
                  "heaptrace check: 0 relocation inconsistencies",
                  "heaptrace check: %s" % line.strip())


def check_attached_trace(heaptrace, trace):
    """A trace of `record --pid`: clean, and its header says attached."""
    check_trace_clean(heaptrace, trace)
    head = run(heaptrace, "cat", trace).stdout.split("events:")[0]
    check('attached: "yes"' in head, "the header says attached: yes",
          "the header does not say attached: yes:\n" + head)


def check_gc_counts(stats, ready, done, runtime):
    """The trace's GCs against GC.CollectionCount: every GC collects gen0,
    so the induced one is GC number ready[0] (from 1), the last before
    "ready". .NET 8 gives the profiler the reason COR_PRF_GC_OTHER for it
    (GC.Collect with compacting: true; seen on 8.0.31, where 9 and 10 say
    COR_PRF_GC_INDUCED), which the trace keeps."""
    gcs = stats["gcs"]

    def counted(upto):
        first = gcs[:upto]
        return [upto,
                sum(1 for g in first if max(g["generations"] or [0]) >= 1),
                sum(1 for g in first if 2 in g["generations"])]
    if not check(len(gcs) >= done[0],
                 "the trace has %d GCs, the runtime counted %d"
                 % (len(gcs), done[0]),
                 "the trace has %d GCs, the runtime counted %d by \"done\""
                 % (len(gcs), done[0])):
        return None
    check(counted(ready[0]) == ready and counted(done[0]) == done,
          "GCs of generations 0, 1, 2 as GC.CollectionCount counts them: "
          "%s at ready, %s at done" % (ready, done),
          "GCs of generations 0, 1, 2: the trace has %s by ready, %s by done; "
          "GC.CollectionCount %s and %s"
          % (counted(ready[0]), counted(done[0]), ready, done))
    induced = gcs[ready[0] - 1]
    reasons = ["induced", "other"] if runtime.startswith("8.") else \
        ["induced"]
    check(2 in induced["generations"] and induced["reason"] in reasons and
          induced["finished"],
          "GC %d is the program's full GC (reason %s on .NET %s)"
          % (induced["index"], induced["reason"], runtime),
          "GC %d, the program's GC.Collect(), is %s" %
          (induced["index"], json.dumps(induced)[:300]))
    return induced["index"]


def dump_of_gc(stats, gc):
    for d in stats["dumps"]:
        if d["gc"] == gc:
            return d["index"]
    return None


def compare_gcdump(stats, dump, report, expected):
    """Checks the EXPECTED types' counts and bytes against the report, and
    says how far the whole histograms agree; returns (objects of the
    trace in types of the same count in both, the trace's objects,
    dotnet-gcdump's objects)."""
    ours = dump_classes(stats, dump)
    theirs = gcdump_report(report)
    wrong = []
    for name in expected:
        a, b = ours.get(name, (0, 0)), theirs.get(name, (0, 0))
        if a != b:
            wrong.append("%s: trace %s, dotnet-gcdump %s" % (name, a, b))
    if expected:
        check(not wrong, "dotnet-gcdump agrees on the count and bytes of "
              "the %d known types (dump %d)" % (len(expected), dump),
              "dotnet-gcdump disagrees (count, bytes) on dump %d: %s"
              % (dump, "; ".join(wrong)))
    # the whole histogram, for the report. dotnet-gcdump writes names its
    # own way: no space after the comma of generic arguments, a nested type
    # without its outer types but with their generic arguments
    # (Entry<System.String,System.Object>[] for the trace's
    # System.Collections.Generic.Dictionary<System.String, System.Object>+Entry[]).
    # A name of its that the trace lacks is matched to the trace's names
    # written so; where there are several (every <>c closure class is
    # dotnet-gcdump's []c), their counts are summed.
    ours = dict(ours)
    unmatched = [x for x in ours if x not in theirs]
    for name in [x for x in theirs if x not in ours]:
        like = [x for x in unmatched if name in gcdump_forms(x)]
        if like:
            ours[name] = (sum(ours[x][0] for x in like),
                          sum(ours[x][1] for x in like))
            for x in like:
                del ours[x]
                unmatched.remove(x)
    names = set(ours) | set(theirs)
    same = [x for x in names if ours.get(x, (0,))[0] == theirs.get(x, (0,))[0]]
    objects_ours = sum(c for c, _ in ours.values())
    objects_theirs = sum(c for c, _ in theirs.values())
    agreeing = sum(ours[x][0] for x in same if x in ours)
    print("note: %swhole histogram: the trace has %d objects in %d types, "
          "dotnet-gcdump %d in %d; %d types by name in both (as dotnet-gcdump "
          "writes them), %d with the same count, holding %d of the trace's "
          "objects (%.1f%%)"
          % (label, objects_ours, len(ours), objects_theirs, len(theirs),
             len(set(ours) & set(theirs)), len(same), agreeing,
             100.0 * agreeing / max(objects_ours, 1)))
    diff = sorted((abs(ours.get(x, (0,))[0] - theirs.get(x, (0,))[0]), x)
                  for x in names if x not in same)
    for delta, name in list(reversed(diff))[:6]:
        print("note: %s  %s: trace %d, dotnet-gcdump %d"
              % (label, name, ours.get(name, (0,))[0],
                 theirs.get(name, (0,))[0]))
    return agreeing, objects_ours, objects_theirs


def check_non_gc_heap(heaptrace, trace, stats, report):
    """Each object once per dump, the non-GC heap's rooted; strings'
    sizes those of Object::GetSize, which dotnet-gcdump reports."""
    wrong = []
    for d in stats["dumps"]:
        # roots of kind other: the non-GC heap's, and the statics named
        # by their field (static roots are of kind other too); stack
        # roots of a forced dump are in their threads' containers
        others = sum(g["count"] for g in d["root_groups"]
                     if g.get("kind") == "other")
        outside = sum(g["count"] for g in d["generations"]
                      if g["generation"] is None)
        if d["duplicates"] or not outside or others < outside:
            wrong.append("dump %d: %d duplicates, %d objects in no "
                         "generation, %d roots of kind other"
                         % (d["index"], d["duplicates"], outside, others))
    check(not wrong, "each object once in each of the %d dumps; the non-GC "
          "heap's objects are roots of kind other"
          % len(stats["dumps"]), "; ".join(wrong))
    last = stats["dumps"][-1]["index"]
    top = analysis(heaptrace, "top", "-n", "0", "--dump", str(last),
                   trace)["objects"]
    sizes = sorted(o["size"] for o in top if o["class"] == "System.String")
    odd = [x for x in sizes if x < 22 or x % 2]
    check(sizes and sizes[0] == 22 and not odd,
          "dump %d: %d strings of 22 + 2n bytes, String.Empty 22"
          % (last, len(sizes)),
          "dump %d: strings' sizes: smallest %s, not 22 + 2n: %s"
          % (last, sizes[:1], odd[:10]))
    if report:
        # the report's row for the strings that are not large: the size
        # of its smallest, which is String.Empty
        rows = [re.match(r"\s*([\d,]+)\s+[\d,]+\s+System\.String\s+\[",
                         line) for line in open(report)]
        rows = [int(m.group(1).replace(",", "")) for m in rows if m]
        check(rows == [22], "dotnet-gcdump's System.String row says 22 "
              "bytes too", "dotnet-gcdump's System.String rows: %s" % rows)


def roots_text(roots):
    return json.dumps(roots)[:600]


def has_flag(root, flag, bit):
    flags = root.get("root_flags")
    if isinstance(flags, list):
        return flag in flags
    if isinstance(flags, str):
        return flag in flags or (flags.startswith("0x") and
                                 int(flags, 16) & bit != 0)
    if isinstance(flags, int):
        return flags & bit != 0
    return False


def trace_names(heaptrace, trace):
    """The method names the trace gives ({id: name}), from `heaptrace cat`."""
    methods = {}
    out = run(heaptrace, "cat", trace).stdout
    for m in re.finditer(r"- method: \{id: (\w+), name: (.*)\}\n", out):
        methods[m.group(1)] = m.group(2).strip('"')
    return methods


def check_structure(heaptrace, trace, dump, n, depth, leaves, methods):
    """Retained sizes from the sizes the dump reports and the program's
    structure, and the roots that hold each role."""
    top = analysis(heaptrace, "top", "-n", "0", "--dump", str(dump),
                   trace)["objects"]
    by_class = {}
    for o in top:
        by_class.setdefault(o["class"], []).append(o)

    def size_of(cls):
        return sum(o["size"] for o in by_class.get(cls, []))

    def obj(o):
        return analysis(heaptrace, "object", "-m", "0", "--dump", str(dump),
                        trace, o["id"])

    def first_of(cls, count):
        objs = by_class.get(cls, [])
        if len(objs) != count:
            fail("dump %d: %d %s, not %d: structure not checked"
                 % (dump, len(objs), cls, count))
            return None
        return max(objs, key=lambda o: o["retained"])

    head = first_of("KnownHeap.ListNode", n)
    if head:
        h = obj(head)
        want = size_of("KnownHeap.ListNode") + size_of("KnownHeap.ListPayload")
        check(h["retained"] == want and
              not any(r["class"] == "KnownHeap.ListNode"
                      for r in h["referrers"]),
              "the list's head %s retains its %d nodes and payloads: %d bytes"
              % (head["id"], n, want),
              "the list's head %s (referrers %s) retains %d bytes, not the "
              "%d of its nodes and payloads"
              % (head["id"], [r["class"] for r in h["referrers"]],
                 h["retained"], want))
    tree = first_of("KnownHeap.TreeNode", 2 ** depth - 1)
    if tree:
        t = obj(tree)
        want = size_of("KnownHeap.TreeNode")
        check(t["retained"] == want and not t["referrers"],
              "the tree's root %s retains its %d nodes, not the shared "
              "leaves: %d bytes" % (tree["id"], 2 ** depth - 1, want),
              "the tree's root %s (referrers %s) retains %d bytes, not the "
              "%d of its nodes" % (tree["id"], t["referrers"],
                                   t["retained"], want))
        # a CLR stack root's id is the FunctionID of its frame's method,
        # which the trace names in a method event
        mains = [r for r in t["roots"] if r.get("kind") == "stack" and
                 (r.get("method_name") or
                  methods.get(r.get("root_id"), "")) ==
                 "KnownHeap.Program.Main"]
        check(mains, "the tree's root is held by a stack root of "
              "KnownHeap.Program.Main (root id %s)"
              % (mains[0]["root_id"] if mains else None),
              "the tree's root is not held by a stack root of "
              "KnownHeap.Program.Main: %s (methods named: %s)"
              % (roots_text(t["roots"]),
                 {r.get("root_id"): methods.get(r.get("root_id"))
                  for r in t["roots"]}))
    # the leaves are shared: neither their array nor the tree retains them
    array = first_of("KnownHeap.Leaf[]", 1)
    if array:
        a = obj(array)
        leaf_objs = by_class.get("KnownHeap.Leaf", [])
        check(a["retained"] == array["size"] and
              all(x["retained"] == x["size"] for x in leaf_objs),
              "the leaves, shared by the tree and their array, are retained "
              "by neither: the array retains its own %d bytes"
              % array["size"],
              "the leaves' array retains %d bytes, not its own %d; leaves "
              "retaining more than themselves: %d"
              % (a["retained"], array["size"],
                 sum(1 for x in leaf_objs if x["retained"] != x["size"])))
    pinned = first_of("KnownHeap.PinnedItem[]", 1)
    if pinned:
        p = obj(pinned)
        check(any(r.get("kind") == "handle" and has_flag(r, "pinning", 1)
                  for r in p["roots"]),
              "the pinned array is held by a pinning handle",
              "the pinned array has no pinning handle root: %s"
              % roots_text(p["roots"]))
    poh = first_of("KnownHeap.PohItem[]", 1)
    if poh:
        p = obj(poh)
        check(p["generation"] == 4, "the POH array is in generation 4",
              "the POH array is in generation %s, not 4 (the pinned "
              "object heap)" % p["generation"])
    kept = first_of("KnownHeap.WeakKept", 1)
    if kept:
        k = obj(kept)
        check(any(has_flag(r, "weak", 2) for r in k["roots"]),
              "WeakKept is held by a weak handle too",
              "WeakKept has no weak root: %s" % roots_text(k["roots"]))
    value = first_of("KnownHeap.CwtValue", 1)
    if value:
        v = obj(value)
        check(not v["unreachable"],
              "the ConditionalWeakTable's live value is reachable",
              "the ConditionalWeakTable's value %s, alive while its key is, "
              "is unreachable in the dump (roots %s, referrers %s)"
              % (value["id"], roots_text(v["roots"]), v["referrers"]))
    # pinned objects stay where they were born, through every GC
    for what, o in (("the pinned array", pinned), ("the POH array", poh)):
        if not o:
            continue
        h = analysis(heaptrace, "history", "--dump", str(dump), trace,
                     o["id"])
        steps = h["timeline"]
        moved = [x for x in steps if x["event"] == "moved" and
                 x["from"] != x["to"]]
        gcs = {x["gc"] for x in steps if x["gc"] is not None}
        check(len(h["objects"]) == 1 and not moved and
              h["objects"][0]["id"] == o["id"],
              "%s stays at %s through %d GCs" % (what, o["id"], len(gcs)),
              "%s moved: %s" % (what, json.dumps(h)[:600]))
    tracked = first_of("KnownHeap.Tracked", 1)
    return tracked["id"] if tracked else None


def check_history(heaptrace, trace, dump, tracked_id, samples, ready,
                  allocations):
    """Tracked's moves and generations in the trace against the addresses
    and generations the program saw after each GC. Without allocations the
    trace first shows Tracked in the dump of the program's GC, so only the
    samples from "ready" on are compared."""
    if tracked_id is None:
        return
    at_ready = [s for s in samples if s["gcs"] == ready][0]
    check(int(tracked_id, 16) == at_ready["address"],
          "Tracked is at 0x%x in the dump, where the program saw it"
          % at_ready["address"],
          "Tracked is at %s in the dump, the program saw it at 0x%x"
          % (tracked_id, at_ready["address"]))
    h = analysis(heaptrace, "history", "--dump", str(dump), trace, tracked_id)
    mine = [o["object"] for o in h["objects"]
            if o["class"] == "KnownHeap.Tracked"]
    if not check(len(mine) == 1, "history follows one Tracked",
                 "history of %s: %d Tracked objects" % (tracked_id, len(mine))):
        return
    steps = [s for s in h["timeline"] if s["object"] == mine[0]]
    if allocations:
        window = samples
    else:
        window = samples[samples.index(at_ready):]
        check(steps and steps[0]["event"] == "seen_in_dump" and
              steps[0]["dump"] == dump,
              "history of Tracked: first seen in dump %d" % dump,
              "history of Tracked starts with %s, not seen in dump %d"
              % (steps[:1], dump))
    # the program's view: between two samples, the GCs numbered (from 0)
    # a[0] .. b[0] - 1 ran; an address change happened in one of them.
    # It did not look after its last sample.
    first_gc, last_gc = window[0]["gcs"][0], window[-1]["gcs"][0] - 1
    moves = [(s["gc"], s["from"], s["to"]) for s in steps
             if s["event"] == "moved" and s["from"] != s["to"] and
             first_gc <= s["gc"] <= last_gc]
    seen = []
    for a, b in zip(window, window[1:]):
        if a["address"] != b["address"]:
            seen.append((a["gcs"][0], b["gcs"][0] - 1,
                         a["address"], b["address"]))
    explained = len(moves) == len(seen) and all(
        lo <= gc <= hi and int(f, 16) == fa and int(t, 16) == ta
        for (gc, f, t), (lo, hi, fa, ta) in zip(moves, seen))
    # How many times Tracked moves is the GC's choice (a server GC may
    # promote it in place, and a GC may run before the program's first
    # sample), so the count is said, not required: each move the trace
    # gives must be one the program saw, and each one it saw in the trace.
    if allocations and len(moves) < 2:
        note("history of Tracked over GCs %d to %d: %d moves (the runtime "
             "compacted it fewer times than usual)"
             % (first_gc, last_gc, len(moves)))
    check(explained,
          "history of Tracked over GCs %d to %d: %d moves, each the address "
          "change the program saw in that GC%s" % (
              first_gc, last_gc, len(moves),
              "".join(": GC %d %s -> %s" % m for m in moves[:1]) +
              "".join(", GC %d %s -> %s" % m for m in moves[1:])),
          "history of Tracked over GCs %d to %d: moves %s; the program saw %s"
          % (first_gc, last_gc, moves,
             ["GC %d..%d 0x%x -> 0x%x" % x for x in seen]))
    # the generation the trace gives after each sampled GC
    wrong = []
    for s in window:
        k = s["gcs"][0] - 1
        gen = None
        for step in steps:
            # allocated after GC k: in generation 0 until the next
            if step["event"] == "allocated" and gen is None:
                gen = 0
            if step["gc"] is not None and step["gc"] <= k and \
               step["generation"] is not None:
                gen = step["generation"]
            if step["dump"] is not None and step["gc"] is None and \
               step["generation"] is not None and gen is None:
                gen = step["generation"]
        if k >= 0 and gen != s["generation"]:
            wrong.append("after GC %d: %s, GC.GetGeneration %d"
                         % (k, gen, s["generation"]))
    check(not wrong, "history of Tracked: its generation after each of "
          "those GCs is GC.GetGeneration's",
          "history of Tracked: " + "; ".join(wrong))
    if not allocations:
        return
    promotions = [(s["gc"], s.get("from_generation"), s["generation"])
                  for s in steps if s["event"] == "promoted"]
    check([p[1:] for p in promotions] == [(0, 1), (1, 2)],
          "history of Tracked: promoted 0 -> 1 in GC %s, 1 -> 2 in GC %s"
          % tuple(p[0] for p in (promotions + [(None,), (None,)])[:2]),
          "history of Tracked: promotions %s, not 0 -> 1 -> 2" % promotions)
    if samples[0]["gcs"][0] == 0:
        born = [s for s in steps if s["event"] == "allocated"]
        check(len(born) == 1 and born[0]["to"] is not None and
              int(born[0]["to"], 16) == samples[0]["address"],
              "history of Tracked starts at its allocation at 0x%x"
              % samples[0]["address"],
              "history of Tracked: allocation steps %s, the program saw it "
              "born at 0x%x" % (born, samples[0]["address"]))


def allocations_between_gcs(heaptrace, trace):
    """From the trace's events (`heaptrace cat`): the allocations before
    each gc_started and after the last, and the allocations per class name."""
    names, per_id, between = {}, {}, [0]
    p = subprocess.Popen([heaptrace, "cat", trace], stdout=subprocess.PIPE,
                         universal_newlines=True)
    cls = re.compile(r"\s*- class: \{id: (\w+), name: (.*)\}$")
    alloc = re.compile(r"\s*- object_allocated: \{.*class: (\w+)")
    for line in p.stdout:
        if "object_allocated" in line:
            m = alloc.match(line)
            if m:
                between[-1] += 1
                per_id[m.group(1)] = per_id.get(m.group(1), 0) + 1
        elif "gc_started" in line:
            between.append(0)
        elif "- class:" in line:
            m = cls.match(line)
            if m:
                names[m.group(1)] = m.group(2).strip('"')
    p.wait()
    # a class may be named after its first allocations
    per_class = {}
    for cid, count in per_id.items():
        name = names.get(cid, cid)
        per_class[name] = per_class.get(name, 0) + count
    return between, per_class


def check_gc_figures(heaptrace, trace, stats, n, depth, leaves, garbage):
    between, per_class = allocations_between_gcs(heaptrace, trace)
    made = {"KnownHeap.ListNode": n, "KnownHeap.ListPayload": n,
            "KnownHeap.TreeNode": 2 ** depth - 1, "KnownHeap.Leaf": leaves,
            "KnownHeap.Garbage": garbage, "KnownHeap.Tracked": 1,
            "KnownHeap.WeakOnly": 1, "KnownHeap.CwtDeadValue": 1}
    wrong = ["%s: %d, made %d" % (c, per_class.get(c, 0), k)
             for c, k in made.items() if per_class.get(c, 0) != k]
    check(not wrong, "the allocations the program made are all recorded: "
          "%d Garbage, %d ListNode, ..." % (garbage, n),
          "allocations recorded: " + "; ".join(wrong))
    gcs = stats["gcs"]
    gc_dumps = {}
    for d in stats["dumps"]:
        if d["gc"] is not None:
            gc_dumps.setdefault(d["gc"], []).append(d)
        else:
            fail("dump %d is no GC's: the GC figures are not chained across it"
                 % d["index"])
            return
    alive = between[0]
    wrong = []
    for g in gcs:
        before = alive
        parts = sum(g[k] for k in ("moved_objects", "survived_objects",
                                   "died_objects", "kept_objects",
                                   "untouched_objects", "lost_objects"))
        if parts != before:
            wrong.append("GC %d: moved %d + survived %d + died %d + kept %d "
                         "+ untouched %d + lost %d = %d, but %d were alive"
                         % (g["index"], g["moved_objects"],
                            g["survived_objects"], g["died_objects"],
                            g["kept_objects"], g["untouched_objects"],
                            g["lost_objects"], parts, before))
        if g["promoted_objects"] > g["moved_objects"] + g["survived_objects"] + \
                g["kept_objects"]:
            wrong.append("GC %d: %d promoted of %d that survived"
                         % (g["index"], g["promoted_objects"],
                            g["moved_objects"] + g["survived_objects"]))
        alive = before - g["died_objects"] - g["lost_objects"]
        for d in gc_dumps.get(g["index"], []):
            alive += d["new_objects"] - d["died_objects"] - d["lost_objects"]
        if g["index"] + 1 < len(between):
            alive += between[g["index"] + 1]
    check(not wrong, "the figures of all %d GCs add up: moved + survived + "
          "died + kept + untouched + lost = tracked objects alive before "
          "each (from the allocations between GCs)" % len(gcs),
          "GC figures: " + "; ".join(wrong[:5]) +
          (" (and %d more)" % (len(wrong) - 5) if len(wrong) > 5 else ""))
    t = stats["tracking"]
    check(t["alive_objects"] == alive and
          t["objects"] == t["alive_objects"] + t["died_objects"] +
          t["lost_objects"],
          "tracking: %d objects, %d alive at the end, %d died, %d lost"
          % (t["objects"], t["alive_objects"], t["died_objects"],
             t["lost_objects"]),
          "tracking %s, but the GCs leave %d alive" % (t, alive))
    # a full GC's own references are the live heap: all tracked survivors
    for g in gcs:
        if 2 in g["generations"] and g["index"] in gc_dumps:
            d = gc_dumps[g["index"]][0]
            after = g["moved_objects"] + g["survived_objects"] + \
                g["kept_objects"] + g["untouched_objects"]
            check(d["objects"] == after,
                  "full GC %d: its dump's %d objects are the %d it moved, "
                  "left in place or kept" % (g["index"], d["objects"], after),
                  "full GC %d: its dump has %d objects; moved %d + survived "
                  "%d + kept %d + untouched %d = %d"
                  % (g["index"], d["objects"], g["moved_objects"],
                     g["survived_objects"], g["kept_objects"],
                     g["untouched_objects"], after))
            break
    totals = {k: sum(g[k] for g in gcs) for k in
              ("moved_objects", "survived_objects", "died_objects",
               "promoted_objects", "moved_object_bytes", "moved_bytes",
               "survived_object_bytes", "surviving_bytes")}
    print("note: %sover %d GCs: moved %d, survived %d, died %d, promoted %d "
          "objects; moved objects' bytes %d of moved blocks' %d, survivors' "
          "bytes %d of surviving blocks' %d"
          % (label, len(gcs), totals["moved_objects"],
             totals["survived_objects"], totals["died_objects"],
             totals["promoted_objects"], totals["moved_object_bytes"],
             totals["moved_bytes"], totals["survived_object_bytes"],
             totals["surviving_bytes"]))


def main():
    global label
    args = sys.argv[1:]
    report, allocations = None, False
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--gcdump":
            report = args.pop(0)
        elif opt == "--allocations":
            allocations = True
        elif opt == "--label":
            label = args.pop(0) + ": "
        else:
            sys.exit("check-clr.py: unknown option " + opt)
    if len(args) != 7:
        sys.exit(__doc__)
    heaptrace, trace, output = args[:3]
    n, depth, leaves, garbage = (int(x) for x in args[3:])
    expected = expected_counts(n, depth, leaves)

    samples, ready, done, runtime = program_output(output)
    if not ready or not done or not samples:
        fail("the program did not print its samples, ready and done lines")
        return
    check_trace_clean(heaptrace, trace)
    stats = analysis(heaptrace, "stats", trace)
    induced = check_gc_counts(stats, ready, done, runtime)
    if induced is None:
        return
    dump = dump_of_gc(stats, induced)
    if not check(dump is not None, "GC %d has a dump: %d" % (induced, dump)
                 if dump is not None else "",
                 "GC %d, the program's GC.Collect(), has no dump (dumps "
                 "of GCs %s)" % (induced, [d["gc"] for d in stats["dumps"]])):
        return
    check_counts(stats, dump, expected, "at GC.Collect()")
    check_non_gc_heap(heaptrace, trace, stats, report)
    if report:
        later = [g["index"] for g in stats["gcs"][ready[0]:]
                 if 2 in g["generations"]]
        gd = dump_of_gc(stats, later[0]) if later else None
        if check(gd is not None, "dotnet-gcdump's GC %s has a dump: %s"
                 % (later[0] if later else None, gd),
                 "no dump of dotnet-gcdump's full GC (full GCs after ready: "
                 "%s)" % later):
            check_counts(stats, gd, expected, "at dotnet-gcdump's GC")
            compare_gcdump(stats, gd, report, expected)
    last = stats["dumps"][-1]["index"]
    if last != dump:
        check_counts(stats, last, expected, "the last dump")
    tracked = check_structure(heaptrace, trace, dump, n, depth, leaves,
                              trace_names(heaptrace, trace))
    check_history(heaptrace, trace, dump, tracked, samples, ready,
                  allocations)
    if allocations:
        check_gc_figures(heaptrace, trace, stats, n, depth, leaves, garbage)


if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, ValueError, KeyError, IndexError) as e:
        fail("cannot check: %s: %s" % (type(e).__name__, e))
    sys.exit(1 if failures else 0)
