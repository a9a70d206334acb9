#!/usr/bin/env python3
"""check-hprof.py - checks what heaptrace reads from a heap dump of
KnownHeap (KnownHeap.java) that jcmd GC.heap_dump wrote, against what the
program built and the class histogram jcmd printed at the same paused
point.

usage: check-hprof.py HEAPTRACE INPUT HISTOGRAM N DEPTH LEAVES

INPUT is the .hprof, or a .ht converted from it. Checks:
  - the objects of KnownHeap's own classes: N nodes, 2^DEPTH - 1 tree
    nodes, LEAVES leaves and their array, no garbage; and that their counts
    and bytes are exactly jcmd GC.class_histogram's, so that the object
    layout is HotSpot's;
  - the list: its head retains N x the node size, and the shortest path to
    its tail goes from the class object of KnownHeap (the static field),
    its steps named `static KnownHeap.head` then `KnownHeap$Node.next`,
    through every node;
  - the tree: its root is the one tree node no tree node refers to, is
    held only by a frame of KnownHeap.main in thread main, named with its
    source file and the line where main waits (the readLine of
    KnownHeap.java, next to this script), and retains exactly the tree
    nodes (the leaves belong to the static array).
Prints as figures how many other classes match the histogram (the attach
mechanism allocates between the histogram and the dump, and class data
sharing keeps mirrors that the dump leaves out) and the references to
objects the dump lacks; one line per failed check; exits 1 if any failed.
"""
import json
import os
import subprocess
import sys

# the script's own folder is first on sys.path; no .pyc left in the tree
sys.dont_write_bytecode = True
from jvm_histogram import histogram  # noqa: E402
from knownheap_source import waiting_frame  # noqa: E402

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL: " + what)


def analysis(heaptrace, path, command, *args, last=None):
    """The JSON of `heaptrace COMMAND ARGS... --format json PATH [LAST]`."""
    out = subprocess.run([heaptrace, command] + list(args) +
                         ["--format", "json", path] + ([last] if last else []),
                         check=True, stdout=subprocess.PIPE).stdout
    return json.loads(out)


def check_classes(stats, jvm, n, tree_nodes, leaves):
    d = stats["dumps"][-1]
    classes = {c["name"]: (c["count"], c["bytes"]) for c in d["classes"]}
    expected = {
        "KnownHeap$Node": n,
        "KnownHeap$TreeNode": tree_nodes,
        "KnownHeap$Leaf": leaves,
        "KnownHeap$Leaf[]": 1,
        "KnownHeap$Garbage": 0,
    }
    for name, count in expected.items():
        got = classes.get(name, (0, 0))
        check(got[0] == count, "%s: %d objects in the dump, the program "
              "made %d" % (name, got[0], count))
        check(jvm.get(name, (0, 0)) == got,
              "%s: heaptrace has %s (count, bytes), jcmd GC.class_histogram"
              " %s" % (name, got, jvm.get(name, (0, 0))))
    same = sum(1 for k, v in jvm.items() if classes.get(k) == v)
    print("classes: %d of the histogram's %d have its counts and bytes"
          % (same, len(jvm)))
    # with class data sharing, archived arrays refer to objects HotSpot
    # does not dump: the count is the dump's, not a finding
    print("references to objects not in the dump: %d"
          % d["dangling_references"])
    return classes


def check_list(heaptrace, path, top, n, node_size):
    nodes = [o for o in top if o["class"] == "KnownHeap$Node"]
    check(len(nodes) == n, "top lists %d nodes, not %d" % (len(nodes), n))
    if not nodes:
        return
    head = max(nodes, key=lambda o: o["retained"])
    tail = min(nodes, key=lambda o: o["retained"])
    check(head["retained"] == n * node_size,
          "the head retains %d bytes, not %d x %d"
          % (head["retained"], n, node_size))
    paths = analysis(heaptrace, path, "paths", "-n", "1", "--to", tail["id"])
    check(len(paths["paths"]) == 1, "no path to the list's tail")
    if not paths["paths"]:
        return
    objs = paths["paths"][0]["objects"]
    ids = [o["id"] for o in objs]
    check(head["id"] in ids and len(ids) - ids.index(head["id"]) == n,
          "the path to the tail does not go through the %d nodes" % n)
    if head["id"] in ids and ids.index(head["id"]) > 0:
        # a class object is named for the class it is the object of, and
        # the step into the head names the static field it was read from
        holder = objs[ids.index(head["id"]) - 1]
        check(holder["class"] == "class KnownHeap",
              "the head is held by a %s, not by KnownHeap's class object"
              % holder["class"])
        step = objs[ids.index(head["id"])].get("step")
        check(step == "static KnownHeap.head",
              "the step into the head is %r, not the static field "
              "KnownHeap.head" % step)
        if ids.index(head["id"]) + 1 < len(objs):
            step = objs[ids.index(head["id"]) + 1].get("step")
            check(step == "KnownHeap$Node.next",
                  "the step after the head is %r, not KnownHeap$Node.next"
                  % step)


def check_tree(heaptrace, path, top, tree_nodes, tree_size):
    trees = [o for o in top if o["class"] == "KnownHeap$TreeNode"]
    if not trees:
        return
    root = max(trees, key=lambda o: o["retained"])
    check(root["retained"] == tree_nodes * tree_size,
          "the tree's root retains %d bytes, not its %d nodes' %d"
          % (root["retained"], tree_nodes, tree_nodes * tree_size))
    obj = analysis(heaptrace, path, "object", last=root["id"])
    check(not any(r["class"] == "KnownHeap$TreeNode"
                  for r in obj["referrers"]),
          "the tree's root has a tree node referring to it")
    check(obj["dominator"] is None, "the tree's root has a dominator")
    roots = obj["roots"]
    frame = waiting_frame()
    check(len(roots) >= 1 and all(
        r.get("method_name") == frame and
        r.get("thread_name") == "main" for r in roots),
        "the tree is not held by a frame of %s in thread main: %s"
        % (frame, json.dumps(roots)))


def main():
    heaptrace, path, histo = sys.argv[1:4]
    n, depth, leaves = (int(x) for x in sys.argv[4:7])
    tree_nodes = 2 ** depth - 1
    jvm = histogram(histo)

    stats = analysis(heaptrace, path, "stats")
    classes = check_classes(stats, jvm, n, tree_nodes, leaves)
    top = analysis(heaptrace, path, "top", "-n", "0")["objects"]
    node = classes.get("KnownHeap$Node", (1, 0))
    tree = classes.get("KnownHeap$TreeNode", (1, 0))
    check_list(heaptrace, path, top, n, node[1] // max(node[0], 1))
    check_tree(heaptrace, path, top, tree_nodes, tree[1] // max(tree[0], 1))


if __name__ == "__main__":
    main()
    sys.exit(1 if failures else 0)
