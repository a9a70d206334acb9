#!/usr/bin/env python3
"""check-values.py - checks the values the JVMTI agent recorded (heaptrace
record --values) in a dump of KnownValues (KnownValues.java), against what
the program says it holds and against a heap dump (HPROF) that jcmd
GC.heap_dump took of the same process at the same paused point.

usage: check-values.py HEAPTRACE TRACE HPROF PROGRAM_OUTPUT

Dump 0 of TRACE and the HPROF dump are read the way a user reads them,
with `heaptrace object --format json`: KnownValues' class object (its
statics), the instance its static `held` holds, each String and primitive
array its fields reference. Checks:
  - each input holds what the program printed (PROGRAM_OUTPUT: its
    "value", "string" and "array" lines): every primitive field's value,
    instance and static, by name, with its type; each String's text and
    length; each array's type, length, elements (whole up to 256 bytes,
    else the first 64 bytes' worth) and, when cut, the FNV-1a hash of all
    its elements that the program worked out;
  - the two inputs agree on all of it, the Strings' own fields (coder,
    hash) included, and `heaptrace object`'s text shows the instance's
    and each array's values, elements and text alike, word for word;
  - over the whole heap (the JDK's objects too, from `heaptrace cat`):
    every class's static primitive values, matched by class and field
    name, agree between the two dumps but for a few that the JVM changes
    between them (jcmd runs in the process); each class's instances'
    values, as multisets of (field, value) tuples, and the primitive
    arrays, as multisets of (class, length, elements kept, hash), agree
    for at least 90% of the objects (jcmd makes and drops objects between
    the two dumps, and the agent cannot name the fields of classes JVMTI
    has not prepared, such as FDBigInteger's, mapped from the class data
    sharing archive: some 350 objects of 12,000): a field index mapped to
    the wrong field would put values under another name, breaking both.
Prints one line per failed check and a summary; exits 1 if any failed.
"""
import collections
import json
import re
import struct
import subprocess
import sys

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL: " + what)
    return ok


WIDTH = {"boolean": 1, "byte": 1, "char": 2, "short": 2, "int": 4,
         "float": 4, "long": 8, "double": 8}
WHOLE_MAX, PREFIX = 256, 64


def run(heaptrace, *args):
    return subprocess.run([heaptrace] + list(args), check=True,
                          stdout=subprocess.PIPE).stdout.decode("utf-8")


# ---- what the program says --------------------------------------------------

def program(path):
    """{"values": {(static, field): (type, bits)}, "strings": {(static,
    field): text}, "arrays": {field: (type, [bits], hash)}}"""
    out = {"values": {}, "strings": {}, "arrays": {}}
    with open(path, encoding="utf-8") as f:
        for line in f:
            w = line.split()
            if not w:
                continue
            if w[0] == "value":
                out["values"][(w[1] == "static", w[2])] = (w[3], int(w[4]))
            elif w[0] == "string":
                units = [] if w[3] == "-" else [int(u, 16) for u in w[3:]]
                raw = b"".join(struct.pack("<H", u) for u in units)
                out["strings"][(w[1] == "static", w[2])] = \
                    raw.decode("utf-16-le")
            elif w[0] == "array":
                out["arrays"][w[1]] = (w[2], [int(x) for x in w[5:]],
                                       int(w[4], 16))
    return out


# ---- what heaptrace says ------------------------------------------------------

def bits(type_, value):
    """A value as `object --format json` gives it, as the trace's bits."""
    if type_ == "boolean":
        return 1 if value else 0
    if type_ == "char":
        if value.startswith("\\u") and len(value) == 6:
            return int(value[2:], 16)
        return ord(value)
    if type_ == "float":
        return struct.unpack("<I", struct.pack("<f", float(value)))[0]
    if type_ == "double":
        return struct.unpack("<Q", struct.pack("<d", float(value)))[0]
    return value & 0xffffffffffffffff if type_ == "long" else value


def signed(type_, b):
    """64 bits as the program prints them: a Java long, signed."""
    wide = type_ in ("long", "double")
    return b - (1 << 64) if wide and b >= 1 << 63 else b


class Input:
    """KnownValues' objects in one input, through heaptrace object."""

    def __init__(self, heaptrace, path, class_id):
        self.heaptrace, self.path = heaptrace, path
        self.cls = self.object(class_id)
        self.refs = {}
        self.steps = {}
        for r in self.cls["references"]:
            # (HPROF's own statics, such as <resolved_references>, are
            # no Java field)
            if (r.get("step") or "").startswith("static KnownValues.") \
                    and "<" not in r["step"]:
                self.refs[(True, r["step"].split(".", 1)[1])] = r["id"]
        self.instance_id = self.refs.get((True, "held"))
        self.instance = self.object(self.instance_id)
        for r in self.instance["references"]:
            if (r.get("step") or "").startswith("KnownValues."):
                self.refs[(False, r["step"].split(".", 1)[1])] = r["id"]

    def object(self, oid, fmt="json"):
        text = run(self.heaptrace, "object", "--dump", "0", "--max-refs",
                   "0", "--format", fmt, self.path, oid)
        return json.loads(text) if fmt == "json" else text

    def values(self, obj):
        return {(v["static"], v["field"]): (v["type"],
                                            bits(v["type"], v["value"]))
                for v in obj.get("values") or []}

    def summary(self):
        """What is compared between the two inputs."""
        out = {"statics": self.values(self.cls),
               "instance": self.values(self.instance)}
        for key, oid in sorted(self.refs.items()):
            if key == (True, "held"):
                continue
            o = self.object(oid)
            out[key] = {"class": o["class"], "text": o.get("text"),
                        "text_length": o.get("text_length"),
                        "values": self.values(o), "array": o.get("array")}
        return out

    def text_sections(self):
        """The values, elements and text of `object`'s text output for the
        instance and the arrays it references: no ids in them."""
        out = []
        for oid in [self.instance_id] + [self.refs[k] for k in
                                         sorted(self.refs)
                                         if not k[0]]:
            keep = False
            for line in self.object(oid, "text").split("\n"):
                if line.startswith(("values (", "elements (")):
                    keep = True
                elif not line.startswith(" "):
                    keep = False
                if keep or line.startswith("  text "):
                    out.append(line)
        return out


def class_id_of(heaptrace, path, name):
    """The id of class NAME, from the first class events of `cat`."""
    p = subprocess.Popen([heaptrace, "cat", path], stdout=subprocess.PIPE)
    pattern = re.compile(r"- class: \{id: (0x[0-9a-f]+|\d+), name: %s[,}]"
                         % re.escape(name))
    found = None
    for line in p.stdout:
        m = pattern.search(line.decode("utf-8", "replace"))
        if m:
            found = m.group(1)
            break
    p.kill()
    p.wait()
    return found


# ---- checks against the program ----------------------------------------------

def against_program(label, inp, want):
    summary = inp.summary()
    got = dict(summary["statics"])
    got.update(summary["instance"])
    for key, (type_, b) in sorted(want["values"].items()):
        check(key in got, "%s: no value of %s" % (label, key[1]))
        if key in got:
            gt, gb = got[key]
            check((gt, signed(gt, gb)) == (type_, b),
                  "%s: %s is %s %s, the program holds %s %s"
                  % (label, key[1], gt, signed(gt, gb), type_, b))
    for key, text in sorted(want["strings"].items()):
        s = summary.get(key)
        check(s is not None and s["class"] == "java.lang.String",
              "%s: no String in %s" % (label, key[1]))
        if s:
            check(s["text"] == text and
                  s["text_length"] == len(text.encode("utf-16-le")) // 2,
                  "%s: %s's text is %r (%s units), the program's %r"
                  % (label, key[1], s["text"], s["text_length"], text))
    for field, (type_, elements, hash_) in sorted(want["arrays"].items()):
        s = summary.get((False, field))
        a = s and s["array"]
        if not check(a, "%s: no contents of array %s" % (label, field)):
            continue
        width = WIDTH[type_]
        kept = len(elements) if len(elements) * width <= WHOLE_MAX \
            else PREFIX // width
        got_elements = [signed(type_, bits(type_, e)) for e in a["elements"]]
        check(a["type"] == type_ and a["length"] == len(elements),
              "%s: %s is %s[%s], the program's %s[%d]"
              % (label, field, a["type"], a["length"], type_, len(elements)))
        check(got_elements == elements[:kept],
              "%s: %s's elements are %s, the program's first %d %s"
              % (label, field, got_elements[:8], kept, elements[:8]))
        want_hash = "0x%016x" % hash_ if kept < len(elements) else None
        check(a["hash"] == want_hash,
              "%s: %s's hash is %s, the program's %s"
              % (label, field, a["hash"], want_hash))
    return summary


# ---- the whole heap, from cat -------------------------------------------------

ITEM = re.compile(r"(\w+): (\[[^\]]*\]|\{[^}]*\}|[^,}]+)")


def heap(heaptrace, path):
    """Dump 0 of PATH: {class name: {static field: (type, value)}} of the
    class objects, a Counter of (class name, tuple of sorted (field,
    value)) of the instances, a Counter of (class name, length, elements,
    hash) of the primitive arrays."""
    classes, fields = {}, {}
    objects = []
    dumps = 0
    p = subprocess.Popen([heaptrace, "cat", path], stdout=subprocess.PIPE)
    for raw in p.stdout:
        line = raw.decode("utf-8", "replace")
        if "C_END" in line:
            dumps += 1
            if dumps == 1:
                break
        m = re.match(r"  - class: \{id: (\w+), name: (.*?)(, size: \d+)?\}$",
                     line)
        if m:
            classes[m.group(1)] = m.group(2).strip('"')
            continue
        m = re.match(r"      - \{id: (\d+), class: (\w+), name: (.*?), "
                     r"kind: (\w+)(?:, offset: \d+)?, type: (\w+)\}", line)
        if m:
            fields[m.group(1)] = (m.group(3).strip('"'), m.group(4),
                                  m.group(5))
            continue
        if line.startswith("  - object_references:") and \
                ("values:" in line or "array:" in line):
            objects.append(line)
    p.kill()
    p.wait()
    statics = collections.defaultdict(dict)
    instances = collections.Counter()
    arrays = collections.Counter()
    for line in objects:
        m = re.match(r"  - object_references: \{id: (\w+), class: (\w+),",
                     line)
        oid, cid = m.group(1), m.group(2)
        vf = re.search(r"value_fields: \[([^\]]*)\], values: \[([^\]]*)\]",
                       line)
        if vf:
            named = [(fields.get(f.strip(), ("?", "?", "?")), v.strip())
                     for f, v in zip(vf.group(1).split(","),
                                     vf.group(2).split(","))]
            if oid in classes and all(f[1] == "static" for f, _ in named):
                statics[classes[oid]] = {f[0]: (f[2], v) for f, v in named}
            else:
                instances[(classes.get(cid, "?"),
                           tuple(sorted((f[0], v) for f, v in named)))] += 1
        ar = re.search(r"array: \{type: (\w+), length: (\d+), "
                       r"elements: \[([^\]]*)\](?:, hash: (\w+))?\}", line)
        if ar:
            arrays[(classes.get(cid, "?"), ar.group(2), ar.group(3),
                    ar.group(4))] += 1
    return statics, instances, arrays


def overlap(a, b):
    """The share of the larger multiset that the smaller one matches."""
    common = sum((a & b).values())
    return common / max(sum(a.values()), sum(b.values()), 1)


def whole_heap(heaptrace, trace, hprof):
    ts, ti, ta = heap(heaptrace, trace)
    hs, hi, ha = heap(heaptrace, hprof)
    names = sorted(set(ts) & set(hs))
    compared = differ = 0
    for name in names:
        for field, v in ts[name].items():
            compared += 1
            if hs[name].get(field) != v:
                differ += 1
                print("note: static %s.%s is %s recorded, %s in the HPROF "
                      "dump" % (name, field, v, hs[name].get(field)))
    check(len(names) > 100,
          "the whole heap: only %d classes with static values in both"
          % len(names))
    check(differ <= max(5, compared // 100),
          "the whole heap: %d of %d static values differ" % (differ,
                                                               compared))
    oi, oa = overlap(ti, hi), overlap(ta, ha)
    check(oi >= 0.9, "the whole heap: instances' values agree for %.1f%% "
          "of the objects only" % (100 * oi))
    check(oa >= 0.9, "the whole heap: primitive arrays agree for %.1f%% "
          "only" % (100 * oa))
    print("whole heap: %d static values of %d classes compared, %d differ; "
          "instances with values %d recorded, %d dumped, %.1f%% alike; "
          "primitive arrays %d and %d, %.1f%% alike"
          % (compared, len(names), differ, sum(ti.values()),
             sum(hi.values()), 100 * oi, sum(ta.values()), sum(ha.values()),
             100 * oa))


def main():
    if len(sys.argv) != 5:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    heaptrace, trace, hprof, out = sys.argv[1:]
    want = program(out)
    check(want["values"] and want["strings"] and want["arrays"],
          "%s: the program printed no values" % out)
    inputs = {}
    for label, path in (("recorded", trace), ("HPROF", hprof)):
        cid = class_id_of(heaptrace, path, "KnownValues")
        if not check(cid, "%s: no class KnownValues in %s" % (label, path)):
            continue
        inputs[label] = Input(heaptrace, path, cid)
    if len(inputs) != 2:
        sys.exit(1)
    summaries = {label: against_program(label, inp, want)
                 for label, inp in inputs.items()}
    rec, dumped = summaries["recorded"], summaries["HPROF"]
    for key in sorted(set(rec) | set(dumped), key=str):
        check(rec.get(key) == dumped.get(key),
              "recorded and HPROF differ at %s: %s / %s"
              % (key, rec.get(key), dumped.get(key)))
    text_rec = inputs["recorded"].text_sections()
    text_dumped = inputs["HPROF"].text_sections()
    check(text_rec == text_dumped,
          "object's text differs:\n  recorded: %s\n  HPROF:    %s"
          % ("\n            ".join(text_rec),
             "\n            ".join(text_dumped)))
    whole_heap(heaptrace, trace, hprof)
    if failures:
        print("%d checks failed" % len(failures))
        sys.exit(1)
    print("ok: %d values, %d strings, %d arrays as the program holds them, "
          "recorded and dumped alike"
          % (len(want["values"]), len(want["strings"]), len(want["arrays"])))


main()
