#!/usr/bin/env python3
"""check-layouts.py - checks a trace that `heaptrace record --dump-on exit`
made of Layouts (Layouts.cs) on CoreCLR against what the program printed.

usage: check-layouts.py [--values] [--label TEXT] HEAPTRACE TRACE PROGRAM_OUTPUT

Checks, one line each (FAIL: or ok:), exits 1 if any failed:
  - `heaptrace check` exits 0;
  - for each "expect CLASS STEP" line: the one object of CLASS in the last
    dump is reached by a path whose last step ends with STEP: an array's
    element by its index among nulls (Object[][777]), a struct's field
    inside an array's element (Pair[][3].Value, a Dictionary's
    Entry[][12].value), a struct's field inside a struct embedded in an
    object by the chain of fields (Holder.Inner.Value,
    NestHolder.Wrap.Deep.Value; a generic struct of another module by the
    object's field alone, OtherHolder.Entry);
  - for each "refs CLASS FIELD..." line: `object` on the one object of
    CLASS lists its references by exactly those fields (CLASS.FIELD);
  - with --values, for each "collection NAME SIZE CAPACITY" line: `top`
    labels a System.Collections.Generic.NAME<...> "size SIZE of CAPACITY"
    (the runtime may hold others of its class); without, every one "size
    unknown".
"""
import json
import subprocess
import sys

failures = 0
label = ""


def check(cond, good, bad):
    global failures
    if cond:
        print("ok: %s%s" % (label, good))
    else:
        failures += 1
        print("FAIL: %s%s" % (label, bad))
    return cond


def run(*args):
    return subprocess.run(args, capture_output=True, text=True)


def analysis(heaptrace, *args):
    r = run(heaptrace, *(list(args[:-1]) + ["--format", "json", args[-1]]))
    if r.returncode != 0:
        raise RuntimeError("heaptrace %s: exit %d: %s" %
                           (" ".join(args), r.returncode, r.stderr.strip()))
    return json.loads(r.stdout)


def main():
    global label
    args = sys.argv[1:]
    values = False
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--values":
            values = True
        elif opt == "--label":
            label = args.pop(0) + ": "
        else:
            sys.exit("check-layouts.py: unknown option " + opt)
    if len(args) != 3:
        sys.exit(__doc__)
    heaptrace, trace, output = args
    expects, collections, refs = [], [], []
    for line in open(output):
        f = line.split()
        if f and f[0] == "expect" and len(f) == 3:
            expects.append((f[1], f[2]))
        elif f and f[0] == "refs" and len(f) >= 3:
            refs.append((f[1], f[2:]))
        elif f and f[0] == "collection" and len(f) == 4:
            collections.append((f[1], int(f[2]), int(f[3])))
    if not check(expects and collections, "the program printed %d objects "
                 "and %d collections" % (len(expects), len(collections)),
                 "the program printed no expect or collection lines"):
        return
    r = run(heaptrace, "check", trace)
    check(r.returncode == 0, "heaptrace check: clean",
          "heaptrace check exits %d: %s" % (r.returncode,
                                           (r.stdout + r.stderr)[-1000:]))
    top = analysis(heaptrace, "top", "-n", "0", trace)["objects"]
    for cls, step in expects:
        objs = [o for o in top if o["class"] == cls]
        if not check(len(objs) == 1, "one %s" % cls,
                     "%d objects of %s, not 1" % (len(objs), cls)):
            continue
        paths = analysis(heaptrace, "paths", "--to", objs[0]["id"], "-n",
                         "5", trace)
        steps = [p["objects"][-1].get("step") or ""
                 for p in paths["paths"] if p["objects"]]
        check(any(s.endswith(step) for s in steps),
              "%s is reached through %s" % (cls, step),
              "%s is reached through %s, not ...%s" % (cls, steps, step))
    for cls, fields in refs:
        objs = [o for o in top if o["class"] == cls]
        if not check(len(objs) == 1, "one %s" % cls,
                     "%d objects of %s, not 1" % (len(objs), cls)):
            continue
        obj = analysis(heaptrace, "object", "--max-refs", "0", trace,
                       objs[0]["id"])
        got = sorted(r["step"] for r in obj["references"])
        want = sorted("%s.%s" % (cls, f) for f in fields)
        check(got == want, "object %s names its references %s" % (cls, want),
              "object %s names its references %s, not %s" % (cls, got, want))
    for name, size, capacity in collections:
        # the runtime may have collections of the same class: the
        # program's is one of them
        prefix = "System.Collections.Generic.%s<" % name
        labels = [o.get("label") for o in top
                  if o["class"].startswith(prefix) and "+" not in o["class"]
                  and not o["class"].endswith("]")]
        if values:
            want = "size %d of %d" % (size, capacity)
            check(want in labels, "a %s is labelled \"%s\"" % (name, want),
                  "no %s is labelled \"%s\": %s" % (name, want, labels))
        else:
            check(labels and all(x == "size unknown" for x in labels),
                  "%d %s labelled \"size unknown\" without values"
                  % (len(labels), name),
                  "%s's labels without values: %s" % (name, labels))

if __name__ == "__main__":
    try:
        main()
    except (RuntimeError, ValueError, KeyError, IndexError) as e:
        check(False, "", "cannot check: %s: %s" % (type(e).__name__, e))
    sys.exit(1 if failures else 0)
