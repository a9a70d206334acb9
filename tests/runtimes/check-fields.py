#!/usr/bin/env python3
"""check-fields.py - checks the field identity a recorder gave KnownHeap's
references (the Mono and CoreCLR recorders' tests): that each reference of
the last dump is tagged with the field it was read from, the same field in
every object, without shifts when other fields of the object are null.

usage: check-fields.py [options] HEAPTRACE TRACE N DEPTH
       check-fields.py --fields CLASS=NAME,... [--fields ...] HEAPTRACE TRACE
  --list CLASS        the list node's class (its `next` field links the N
                      nodes; the tail's is null)
  --link CLASS        the class that declares `next`, which the list node
                      inherits (default: the list node's class)
  --payload CLASS     the class each list node also holds in its `payload`
                      field (the CLR's KnownHeap), if any
  --tree CLASS        the tree node's class (`left`, `right`, and `leaf` in
                      the 2^(DEPTH-1) bottom nodes, whose children are null)
  --leaf CLASS        the leaf's class
  --static-root CLASS.FIELD
                      the list's head is a root that is this static field
  --fields CLASS=NAME,NAME,...
                      every object of CLASS in the last dump has non-null
                      references tagged with these fields, in any order
                      (`-` for a reference with no field); with --fields
                      alone, N and DEPTH are left out and the list and tree
                      not checked
  --label TEXT        said in front of every line

It reads the trace through `heaptrace cat` (the YAML form), and checks, one
line each (FAIL: or ok:), exiting 1 if any failed:
  - the classes' reference fields are declared once each, by the class
    that declares them (an inherited one by the parent), as instance
    fields;
  - every list node's reference to the next node is tagged `next` (N - 1 of
    them), its payload `payload`; a tree node's children `left` and `right`
    (one each), a bottom node's only reference `leaf`;
  - every field a reference names is declared;
  - with --static-root, the root that holds the list's head is that static
    field.
"""
import json
import re
import subprocess
import sys

# the script's own folder is first on sys.path; no .pyc left in the tree
sys.dont_write_bytecode = True
from checks import Result  # noqa: E402


def parse_args(argv):
    opts = {"label": "", "payload": None, "static_root": None, "link": None,
            "fields": []}
    pos = []
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--fields":
            cls, _, names = argv[i + 1].rpartition("=")
            opts["fields"].append((cls, sorted(names.split(","))))
            i += 2
        elif a in ("--list", "--link", "--payload", "--tree", "--leaf",
                 "--static-root", "--label"):
            opts[a[2:].replace("-", "_")] = argv[i + 1]
            i += 2
        else:
            pos.append(a)
            i += 1
    if opts["fields"] and len(pos) == 2 and "list" not in opts:
        return opts, pos + [0, 0]
    if len(pos) != 4 or not all(k in opts for k in ("list", "tree", "leaf")):
        sys.exit(__doc__)
    return opts, pos


def flow_value(text, i):
    """The YAML flow value at text[i:] (a mapping, a list, a quoted string,
    or a plain scalar: an integer when it reads as one) and where it ends."""
    c = text[i]
    if c == "{":
        out, i = {}, i + 1
        while text[i] != "}":
            colon = text.index(": ", i)
            key = text[i:colon].strip()
            out[key], i = flow_value(text, colon + 2)
            if text[i] == ",":
                i += 2
        return out, i + 1
    if c == "[":
        out, i = [], i + 1
        while text[i] != "]":
            v, i = flow_value(text, i)
            out.append(v)
            if text[i] == ",":
                i += 2
        return out, i + 1
    if c == '"':
        end = i + 1
        while text[end] != '"':
            end += 2 if text[end] == "\\" else 1
        return json.loads(text[i:end + 1]), end + 1
    m = re.compile(r"[^,\]}]*").match(text, i)
    word = m.group(0).strip()
    try:
        return int(word, 0), m.end()
    except ValueError:
        return word, m.end()


def read_trace(heaptrace, trace):
    """The events of `heaptrace cat`, as (kind, body) pairs: the block
    items of a fields event make its body a list."""
    out = subprocess.run([heaptrace, "cat", trace], check=True,
                         stdout=subprocess.PIPE, text=True).stdout
    events, in_events = [], False
    for line in out.splitlines():
        if line == "events:":
            in_events = True
        elif in_events and line.startswith("  - "):
            kind, _, rest = line[4:].partition(":")
            rest = rest.strip()
            body = flow_value(rest, 0)[0] if rest.startswith("{") else []
            events.append((kind, body))
        elif in_events and line.startswith("      - ") and events:
            events[-1][1].append(flow_value(line[8:], 0)[0])
    return events


def last_dump(events):
    """The object_references and root_references of the last GC that has
    object_references, and every class and field declared."""
    classes, fields = {}, {}
    current, last = None, None
    for kind, body in events:
        if kind == "class":
            classes[body["id"]] = body["name"]
        elif kind == "fields":
            for f in body or []:
                fields.setdefault(f["id"], []).append(f)
        elif kind == "gc_started":
            current = {"objects": [], "roots": []}
        elif kind == "object_references" and current is not None:
            current["objects"].append(body)
        elif kind == "root_references" and current is not None:
            current["roots"].append(body)
        elif kind == "gc_finished" and current is not None:
            if current["objects"]:
                last = current
            current = None
    return classes, fields, last


def main():
    opts, (heaptrace, trace, n, depth) = parse_args(sys.argv[1:])
    n, depth = int(n), int(depth)
    r = Result(opts["label"])
    events = read_trace(heaptrace, trace)
    classes, fields, dump = last_dump(events)
    if dump is None:
        r.check(False, "the trace has a dump")
        return 1
    by_name = {}
    for cid, name in classes.items():
        by_name.setdefault(name, set()).add(cid)

    def class_ids(name):
        return by_name.get(name, set())

    # one declaration (or identical repeats) per field id
    for fid, decls in fields.items():
        if any(d != decls[0] for d in decls):
            r.check(False, "field %d is declared differently: %s" % (fid, decls))
    field = {fid: decls[0] for fid, decls in fields.items()}

    def declared(cls, name):
        ids = [fid for fid, f in field.items()
               if f["name"] == name and f["class"] in class_ids(cls)]
        r.check(len(ids) == 1 and field[ids[0]]["kind"] == "instance",
                "%s.%s declared once, an instance field (ids %s)" %
                (cls, name, ids))
        return ids[0] if len(ids) == 1 else None

    want = {}
    if "list" in opts:
        link = opts["link"] or opts["list"]
        want[(link, "next")] = None
        if opts["payload"]:
            want[(opts["list"], "payload")] = None
        for name in ("left", "right", "leaf"):
            want[(opts["tree"], name)] = None
    for key in want:
        want[key] = declared(*key)

    # merge the continuations of an object (MORE_REFERENCES)
    objects = {}
    for o in dump["objects"]:
        have = objects.setdefault(o["id"], {"class": o["class"], "refs": [],
                                            "fields": []})
        have["refs"] += o["refs"]
        rf = o.get("ref_fields")
        have["fields"] += rf if rf is not None else [0] * len(o["refs"])
    cls_of = {oid: o["class"] for oid, o in objects.items()}

    undeclared = sorted({f for o in objects.values() for f in o["fields"]
                         if f and f not in field})
    r.check(not undeclared, "every field a reference names is declared%s" %
            ("" if not undeclared else " (not: %s)" % undeclared[:10]))

    for cls, names in opts["fields"]:
        seen = [sorted(field[f]["name"] if f in field else "-"
                       for ref, f in zip(o["refs"], o["fields"]) if ref)
                for o in objects.values() if o["class"] in class_ids(cls)]
        bad = [s for s in seen if s != names]
        r.check(seen and not bad,
                "%d %s, each with references tagged %s%s" %
                (len(seen), cls, ", ".join(names),
                 "" if not bad else " (not: %s)" % bad[:3]))
    if "list" not in opts:
        return 1 if r.failed else 0

    def tags(cls, target):
        """(object, field id) of every non-null reference from objects of
        cls to objects of class target."""
        out = []
        for oid, o in objects.items():
            if o["class"] not in class_ids(cls):
                continue
            for ref, fid in zip(o["refs"], o["fields"]):
                if ref and cls_of.get(ref) in class_ids(target):
                    out.append((oid, fid))
        return out

    def all_tagged(cls, target, decl, name, count):
        got = tags(cls, target)
        wrong = [t for t in got if t[1] != want[(decl, name)]]
        r.check(len(got) == count and not wrong,
                "%d references %s -> %s, all tagged %s.%s (%d, %d otherwise)"
                % (count, cls, target, decl, name, len(got), len(wrong)))

    all_tagged(opts["list"], opts["list"], link, "next", n - 1)
    if opts["payload"]:
        all_tagged(opts["list"], opts["payload"], opts["list"], "payload", n)
    bottom = 1 << (depth - 1)
    all_tagged(opts["tree"], opts["leaf"], opts["tree"], "leaf", bottom)
    # a tree node's two children: one left, one right
    children = {}
    for oid, fid in tags(opts["tree"], opts["tree"]):
        children.setdefault(oid, []).append(fid)
    lr = sorted([want[(opts["tree"], "left")] or 0,
                 want[(opts["tree"], "right")] or 0])
    bad = [oid for oid, f in children.items() if sorted(f) != lr or not lr[0]]
    r.check(len(children) == bottom - 1 and not bad,
            "%d inner tree nodes, each with one left and one right child "
            "(%d, %d otherwise)" % (bottom - 1, len(children), len(bad)))

    if opts["static_root"]:
        cls, name = opts["static_root"].rsplit(".", 1)
        statics = [fid for fid, f in field.items()
                   if f["name"] == name and f["class"] in class_ids(cls)
                   and f["kind"] == "static"]
        # the head: the list node no other list node references
        targets = {ref for oid, o in objects.items()
                   if o["class"] in class_ids(opts["list"])
                   for ref in o["refs"]}
        heads = [oid for oid, o in objects.items()
                 if o["class"] in class_ids(opts["list"])
                 and oid not in targets]
        rooted = []
        for root in dump["roots"]:
            rf = root.get("root_fields") or [0] * len(root["refs"])
            rooted += [fid for ref, fid in zip(root["refs"], rf)
                       if ref in heads]
        r.check(len(statics) == 1 and len(heads) == 1 and
                statics[0] in rooted,
                "the list's head is held by the static field %s (roots "
                "of it tagged %s, static field ids %s)" %
                (opts["static_root"], rooted, statics))
    return 1 if r.failed else 0


if __name__ == "__main__":
    sys.exit(main())
