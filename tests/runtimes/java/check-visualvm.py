#!/usr/bin/env python3
"""check-visualvm.py - heaptrace's retained sizes at the strong level
against those of VisualVM's heap library (VisualVMAllRetained.java) on the
same HPROF dump of RefLevels, object by object.

usage: check-visualvm.py HEAPTRACE DUMP VISUALVM_OUT

VisualVM leaves the referents of java.lang.ref's References out of its
dominators, as the strong level does. Two things differ on purpose and
are told apart here rather than hidden:
  - shallow sizes: VisualVM sizes an instance by the fields the dump
    lists, heaptrace as HotSpot lays it out (JVM-injected fields of
    Class, Thread, Module, ClassLoader), which GC.class_histogram agrees
    with; a difference there shows in every object above it;
  - class objects: VisualVM has an edge from each instance to its class,
    heaptrace (as HPROF) none yet, so a class loader's list of classes
    dominates them in heaptrace only;
  - referrers no root reaches: VisualVM's dominators count them (the
    garbage of a dump taken with -all, such as the arrays an ArrayList
    outgrew; an object held only through a referent), so what such an
    object refers to looks shared there. The dump compared is live, and
    RefLevels' referents hold nothing else.
Every object of java.lang.ref, java.util.WeakHashMap and RefLevels whose
own size VisualVM agrees with must have VisualVM's retained size, and at
least 95% of all objects must. The cache's list, which holds 40
SoftReferences, must differ from VisualVM at the phantom level (every
reference followed): the comparison can tell a referent followed.
"""
import json
import subprocess
import sys

failed = False


def fail(msg):
    global failed
    print("FAIL: " + msg, file=sys.stderr)
    failed = True


def heaptrace_objects(heaptrace, dump, level):
    out = subprocess.run([heaptrace, "top", "-n", "0", "--retained", level,
                          "--format", "json", dump],
                         capture_output=True, text=True, check=True)
    return {int(o["id"], 16): o for o in json.loads(out.stdout)["objects"]}


def about_references(cls):
    return (cls.startswith("java.lang.ref.") or
            cls.startswith("java.util.WeakHashMap") or
            cls.startswith("RefLevels"))


def main():
    heaptrace, dump, vv_out = sys.argv[1:4]
    ht = heaptrace_objects(heaptrace, dump, "strong")
    vv = {}
    for line in open(vv_out):
        i, size, retained = line.split()
        vv[int(i, 16)] = (int(size), int(retained))
    both = [i for i in vv if i in ht]
    same = [i for i in both if ht[i]["retained"] == vv[i][1]]
    other_size = [i for i in both if ht[i]["size"] != vv[i][0]]
    checked = 0
    for i in both:
        o = ht[i]
        if not about_references(o["class"]) or o["size"] != vv[i][0]:
            continue
        checked += 1
        if o["retained"] != vv[i][1]:
            fail("%s %s retains %d, VisualVM says %d" %
                 (o["id"], o["class"], o["retained"], vv[i][1]))
    if len(same) < 0.95 * len(both):
        fail("only %d of %d objects retain what VisualVM says" %
             (len(same), len(both)))

    # the same comparison can fail: at phantom the cache's list retains
    # the soft referents, which VisualVM leaves out
    everything = heaptrace_objects(heaptrace, dump, "phantom")
    lists = [i for i in both if ht[i]["class"] == "java.util.ArrayList"]
    cache = max(lists, key=lambda i: everything[i]["retained"])
    if everything[cache]["retained"] == vv[cache][1]:
        fail("at phantom the cache's list retains what VisualVM says")

    print("VisualVM: %d of %d objects retain the same at strong; "
          "%d of them about references, all the same; %d with a shallow "
          "size VisualVM computes otherwise; the cache's list retains %d B "
          "(VisualVM %d B), %d B at phantom"
          % (len(same), len(both), checked, len(other_size),
             ht[cache]["retained"], vv[cache][1],
             everything[cache]["retained"]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
