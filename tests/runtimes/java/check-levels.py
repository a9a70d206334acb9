#!/usr/bin/env python3
"""check-levels.py - heaptrace's reachability levels on a heap of RefLevels
(RefLevels.java), checked against what the program built.

usage: check-levels.py HEAPTRACE TRACE

TRACE is a dump taken with nothing collected since the program built its
heap (jcmd GC.heap_dump -all, or the JVM recorder at exit): every
referent is still there. By construction, 40 Cached (each with a byte[]
of 100 000) are softly reachable, 30 Key (50 000) weakly, one Doomed
(20 000) finalizer-reachable and one Haunt (30 000) phantom reachable;
the checks hold heaptrace's stats, retained sizes and paths at each level
to that. Prints the figures as JSON on its last line for the caller.
"""
import json
import subprocess
import sys

SOFT, WEAK = 40, 30
# the holder of each part, how many, and its payload's length
PARTS = {
    "soft": ("RefLevels$Cached", SOFT, 100_000),
    "weak": ("RefLevels$Key", WEAK, 50_000),
    "finalizer": ("RefLevels$Doomed", 1, 20_000),
    "phantom": ("RefLevels$Haunt", 1, 30_000),
}
LEVELS = ["strong", "soft", "weak", "finalizer", "phantom"]
failed = False


def fail(msg):
    global failed
    print("FAIL: " + msg, file=sys.stderr)
    failed = True


def run(heaptrace, *args):
    out = subprocess.run([heaptrace, *args], capture_output=True, text=True)
    if out.returncode not in (0, 1):
        sys.exit("heaptrace %s: exit %d: %s" % (" ".join(args),
                                               out.returncode, out.stderr))
    return out.stdout


def objects_at(heaptrace, trace, level):
    top = json.loads(run(heaptrace, "top", "-n", "0", "--retained", level,
                         "--format", "json", trace))
    return {int(o["id"], 16): o for o in top["objects"]}


def payload_size(objs, length):
    """The size of a byte[] of that many elements: its length plus the
    array's header, padded."""
    sizes = {o["size"] for o in objs.values()
             if o["class"] == "byte[]" and length <= o["size"] < length + 32}
    if len(sizes) != 1:
        sys.exit("no single size for byte[%d]: %s" % (length, sorted(sizes)))
    return sizes.pop()


def main():
    heaptrace, trace = sys.argv[1:3]
    stats = json.loads(run(heaptrace, "stats", "--format", "json", trace))
    reach = stats["dumps"][-1]["reachability"]
    at = {level: objects_at(heaptrace, trace, level) for level in LEVELS}
    objs = at["strong"]

    # each part at its level, objects and bytes, and nothing else there
    for level, (cls, count, length) in PARTS.items():
        holders = [o for o in objs.values() if o["class"] == cls]
        if len(holders) != count:
            fail("%d %s, not %d" % (len(holders), cls, count))
            continue
        want = count * (holders[0]["size"] + payload_size(objs, length))
        got = reach[level]
        if got["objects"] != 2 * count or got["bytes"] != want:
            fail("%s reachable: %d objects, %d B; the program made %d, %d B"
                 % (level, got["objects"], got["bytes"], 2 * count, want))

    # at each level, the objects the dominators reach are those of that
    # level and the stronger ones (sizes are never 0: reached ones retain)
    for i, level in enumerate(LEVELS):
        reached = sum(1 for o in at[level].values() if o["retained"] > 0)
        want = sum(reach[l]["objects"] for l in LEVELS[:i + 1])
        if reached != want:
            fail("at %s %d objects retained, stats says %d reachable"
                 % (level, reached, want))

    # the structures that hold the parts retain them only from their level
    # on: the cache's list, the WeakHashMap, each Reference
    def biggest(level, cls):
        return max((o for o in at[level].values() if o["class"] == cls),
                   key=lambda o: o["retained"])

    soft_bytes = reach["soft"]["bytes"]
    cache = biggest("soft", "java.util.ArrayList")
    if cache["retained"] < soft_bytes:
        fail("at soft no ArrayList retains the %d B of the cache" % soft_bytes)
    if at["strong"][int(cache["id"], 16)]["retained"] >= soft_bytes:
        fail("at strong the cache's ArrayList retains its soft referents")
    weak_map = biggest("weak", "java.util.WeakHashMap")
    if weak_map["retained"] < reach["weak"]["bytes"]:
        fail("at weak the WeakHashMap does not retain its keys")
    for level in ("strong", "soft"):
        if at[level][int(weak_map["id"], 16)]["retained"] >= \
                reach["weak"]["bytes"]:
            fail("at %s the WeakHashMap retains its weak keys" % level)
    for o in objs.values():
        if o["class"] == "java.lang.ref.SoftReference" and \
                o["retained"] != o["size"] and o["retained"] >= 100_000:
            fail("at strong SoftReference %s retains %d" % (o["id"],
                                                            o["retained"]))

    # a Cached object: no path at strong, and one through the referent at soft
    cached = next(o for o in objs.values() if o["class"] == "RefLevels$Cached")
    strong = run(heaptrace, "paths", "--to", cached["id"], trace)
    if "--retained soft" not in strong:
        fail("paths at strong to a Cached: %s" % strong.strip())
    soft = run(heaptrace, "paths", "--to", cached["id"], "--retained", "soft",
               trace)
    if "java.lang.ref.SoftReference.referent" not in soft:
        fail("paths at soft to a Cached go otherwise:\n" + soft)

    print(json.dumps({l: reach[l] for l in LEVELS + ["unreachable"]}))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
