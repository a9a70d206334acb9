#!/usr/bin/env python3
"""check-same-run.py - checks what `heaptrace diff` says of two dumps of
one deterministic program (two recordings of KnownHeap, or two HPROF dumps
of one paused process), and that the path to KnownHeap's list tail is
named by fields (the recorders' runtime tests).

usage: check-same-run.py [options] HEAPTRACE A B
  --list CLASS       the list node's class (KnownHeap$Node, KnownHeap.Node)
  --n N              the list's length
  --root NAME        the name of the root the tail's path starts at: the
                     static field holding the head ("static KnownHeap.head");
                     left out where the runtime names no static field (the
                     CLR holds statics in arrays under GC handles)
  --step NAME        the name of every step from the head to the tail
                     ("KnownHeap$Node.next", or "KnownHeap.Link.next" for
                     a field the node inherits)
  --allow PATH       retainers whose path (as diff prints it, without the
                     thread a local is on: its name may be a system id;
                     nor a frame's file and line, "(KnownHeap.cs:281)")
                     begins with PATH may grow: a runtime's own difference
                     between runs, which the caller documents (repeatable)
  --label TEXT       said in front of every line

Checks, one line each (FAIL: or ok:), exiting 1 if any failed:
  - `heaptrace diff A B` (objects matched by their path from the roots)
    finds no new object and no retainer that grew, but those --allow names;
  - with --list: `heaptrace paths --to TAIL` in B, TAIL being the list node
    that retains the least, reaches the head through --root (the root,
    or the step into the head when the root is a class that holds it) and
    then goes through N - 1 steps each named --step.
"""
import json
import re
import subprocess
import sys

# the script's own folder is first on sys.path; no .pyc left in the tree
sys.dont_write_bytecode = True
from checks import Result  # noqa: E402


def parse_args(argv):
    opts = {"label": "", "allow": [], "list": None, "n": None,
            "root": None, "step": None}
    pos = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--allow":
            opts["allow"].append(argv[i + 1])
            i += 2
        elif a in ("--list", "--n", "--root", "--step", "--label"):
            opts[a[2:]] = argv[i + 1]
            i += 2
        else:
            pos.append(a)
            i += 1
    if len(pos) != 3 or (opts["list"] and not (opts["n"] and opts["step"])):
        sys.exit(__doc__)
    return opts, pos


def run_json(heaptrace, *args):
    out = subprocess.run([heaptrace] + list(args), check=True,
                         stdout=subprocess.PIPE).stdout
    return json.loads(out)


def check_no_growth(r, heaptrace, a, b, allow):
    d = run_json(heaptrace, "diff", "-n", "0", "--format", "json", a, b)
    r.check(d["matched_by"] == "path",
            "diff matches objects by path (%s)" % d["matched_by"])
    def allowed(x):
        path = re.sub(r' on thread (".*?"|0x[0-9a-f]+)', "", x["path"])
        path = re.sub(r'\([^()]*:[0-9]+\)', "", path)
        return any(path.startswith(a) for a in allow)

    grew = [x for x in d["retainers"] if not allowed(x)]
    allowed_new = sum(max(0, x["objects"]["after"] - x["objects"]["before"])
                      for x in d["retainers"] if allowed(x))
    r.check(not grew, "no retainer grew between two runs%s%s"
            % ("" if len(grew) == len(d["retainers"]) else
               " but %d under the runtime's own differences"
               % (len(d["retainers"]) - len(grew)),
               "" if not grew else ": " +
               "; ".join("%s (%d -> %d)" % (x["path"],
                                           x["objects"]["before"],
                                           x["objects"]["after"])
                         for x in grew[:5])))
    r.check(d["new_objects"] <= allowed_new,
            "new objects: %d (%d under the runtime's own differences)"
            % (d["new_objects"], allowed_new))


def check_named_path(r, heaptrace, trace, cls, n, root, step):
    top = run_json(heaptrace, "top", "-n", "0", "--format", "json", trace)
    # the tail retains the least of the list (itself, and on the CLR its
    # payload)
    nodes = [o for o in top["objects"] if o["class"] == cls]
    least = min((o["retained"] for o in nodes), default=None)
    tails = [o["id"] for o in nodes if o["retained"] == least]
    r.check(len(tails) == 1, "one list tail of class %s (%d)"
            % (cls, len(tails)))
    if len(tails) != 1:
        return
    p = run_json(heaptrace, "paths", "--to", tails[0], "-n", "1",
                 "--format", "json", trace)["paths"][0]
    # the root, or the step into the head where the root is a class (an
    # HPROF's system class > static ... > class KnownHeap), then the steps
    names = [p["root"]["name"]] + [o["step"] for o in p["objects"][1:]]
    want = ([root] if root else []) + [step] * (n - 1)
    r.check(names[-len(want):] == want,
            "the tail's path reaches the head through %r, then %d steps "
            "%r (it goes: %s)"
            % (root or "any root", n - 1, step,
               ", ".join(sorted(set(map(str, names[-n:]))))))


def main():
    opts, (heaptrace, a, b) = parse_args(sys.argv[1:])
    r = Result(opts["label"])
    check_no_growth(r, heaptrace, a, b, opts["allow"])
    if opts["list"]:
        check_named_path(r, heaptrace, b, opts["list"], int(opts["n"]),
                         opts["root"], opts["step"])
    sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
