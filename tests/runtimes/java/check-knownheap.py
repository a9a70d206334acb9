#!/usr/bin/env python3
"""check-knownheap.py - checks a dump of KnownHeap (KnownHeap.java) taken by
the JVMTI agent against what the program built and against the class
histogram jcmd printed at the same paused point.

usage: check-knownheap.py HEAPTRACE TRACE DUMP HISTOGRAM N DEPTH LEAVES

Runs the heaptrace analyses on dump DUMP of TRACE and checks:
  - the counts of KnownHeap's own classes: N nodes, 2^DEPTH - 1 tree nodes,
    LEAVES leaves, no garbage; and that jcmd GC.class_histogram gives the
    same counts and bytes;
  - the list: one head retaining N x the node size (24 bytes with
    compressed oops, as the JVM reports it), dominated by KnownHeap's class
    object, whose static field holds it, and the shortest path to its tail
    goes through that field, then through every node;
  - the tree: its root retains exactly the tree nodes (the leaves are the
    static array's) and is held by the frame of KnownHeap.main in thread main
    at the line where it waits (KnownHeap.main(KnownHeap.java:LINE)).
Prints one line per failed check; exits 1 if any failed.
"""
import json
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


def analysis(heaptrace, trace, dump, *args, last=None):
    """The JSON of `heaptrace ARGS... TRACE [LAST]` on dump DUMP."""
    out = subprocess.run([heaptrace] + list(args) +
                         ["--dump", str(dump), "--format", "json", trace] +
                         ([last] if last else []),
                         check=True, stdout=subprocess.PIPE).stdout
    return json.loads(out)


def main():
    heaptrace, trace, dump, histo = sys.argv[1:5]
    n, depth, leaves = (int(x) for x in sys.argv[5:8])
    tree_nodes = 2 ** depth - 1

    stats = analysis(heaptrace, trace, dump, "stats")
    d = [x for x in stats["dumps"] if x["index"] == int(dump)][0]
    classes = {c["name"]: (c["count"], c["bytes"]) for c in d["classes"]}
    expected = {
        "KnownHeap$Node": n,
        "KnownHeap$TreeNode": tree_nodes,
        "KnownHeap$Leaf": leaves,
        "KnownHeap$Garbage": 0,
    }
    jvm = histogram(histo)
    for name, count in expected.items():
        got = classes.get(name, (0, 0))
        check(got[0] == count,
              "%s: %d objects in the dump, the program made %d"
              % (name, got[0], count))
        check(jvm.get(name, (0, 0)) == got,
              "%s: the dump has %s (count, bytes), jcmd GC.class_histogram %s"
              % (name, got, jvm.get(name, (0, 0))))
    check(d["dangling_references"] == 0,
          "%d dangling references" % d["dangling_references"])
    check(not d["aborted"], "the dump is aborted")

    top = analysis(heaptrace, trace, dump, "top", "-n", "0")["objects"]
    nodes = [o for o in top if o["class"] == "KnownHeap$Node"]
    if len(nodes) != n:
        return
    node_size = nodes[0]["size"]
    check(all(o["size"] == node_size for o in nodes),
          "the nodes do not all have one size")
    check(node_size == classes["KnownHeap$Node"][1] // n,
          "node size %d disagrees with the class's bytes" % node_size)
    head = max(nodes, key=lambda o: o["retained"])
    tail = min(nodes, key=lambda o: o["retained"])
    check(head["retained"] == n * node_size,
          "the head retains %d bytes, not %d x %d"
          % (head["retained"], n, node_size))
    head_obj = analysis(heaptrace, trace, dump, "object", last=head["id"])
    check(head_obj["retained"] == n * node_size and
          (head_obj["dominator"] or {}).get("class") == "class KnownHeap",
          "heaptrace object on the head: retained %s, dominator %s"
          % (head_obj["retained"], head_obj["dominator"]))

    paths = analysis(heaptrace, trace, dump, "paths", "--to", tail["id"])
    check(len(paths["paths"]) >= 1, "no path to the list's tail")
    if paths["paths"]:
        # the static field is a reference of the class object, as in an
        # HPROF dump: the path reaches KnownHeap's class object first
        p = paths["paths"][0]
        nodes = p["objects"][-n:]
        check(len(p["objects"]) > n and nodes[0]["id"] == head["id"] and
              nodes[0]["step"] == "static KnownHeap.head" and
              p["objects"][-n - 1]["class"] == "class KnownHeap" and
              nodes[-1]["id"] == tail["id"],
              "the path to the tail is not class KnownHeap, then the %d "
              "nodes from the head %s through static KnownHeap.head: %s"
              % (n, head["id"], json.dumps(p["objects"][:3])))

    trees = [o for o in top if o["class"] == "KnownHeap$TreeNode"]
    if trees:
        tree = max(trees, key=lambda o: o["retained"])
        check(tree["retained"] == tree_nodes * tree["size"],
              "the tree's root retains %d bytes, not its %d nodes' %d"
              % (tree["retained"], tree_nodes, tree_nodes * tree["size"]))
        paths = analysis(heaptrace, trace, dump, "paths", "--to", tree["id"])
        roots = [x["root"] for x in paths["paths"]]
        check(any(r.get("method_name") == waiting_frame() and
                  r.get("thread_name") == "main" for r in roots),
              "the tree is not held by a frame of %s in thread main: %s"
              % (waiting_frame(), json.dumps(roots)))


if __name__ == "__main__":
    main()
    sys.exit(1 if failures else 0)
