#!/usr/bin/env python3
"""check-fields.py - checks the field names the JVMTI agent put in a dump of
KnownHeap (KnownHeap.java), against what the program built and against a
heap dump (HPROF) that jcmd GC.heap_dump took of the same process at the
same paused point.

usage: check-fields.py HEAPTRACE TRACE DUMP HPROF N DEPTH LEAVES

Reads `heaptrace cat TRACE` (the YAML form) up to the end of dump DUMP:
the fields events, each object's ref_fields and each root's root_fields.
Checks:
  - the fields KnownHeap's classes declare are declared, with their
    declaring class and kind: KnownHeap$Node.next, KnownHeap$TreeNode.left,
    .right and .leaf, KnownHeap$Labelled.label (the superclass of Leaf),
    the statics KnownHeap.head and .sharedLeaves, and
    KnownHeap$Tagged.TAGS (a static field of an interface);
  - every reference from KnownHeap's objects names a field of their class
    or superclass, and what each field holds is what the program put there:
    N - 1 next references to nodes, 2^DEPTH - 2 left and right references
    to tree nodes, 2^(DEPTH-1) leaf references to leaves, LEAVES label
    references to one String; the roots of KnownHeap's class name head (the
    list's first node) and sharedLeaves, Tagged's names TAGS;
  - the HPROF dump agrees: for every object of KnownHeap's classes, the
    (class, field, class of the value) of each non-null reference field,
    counted, is the same in the trace and in the HPROF dump, and so are the
    static reference fields of KnownHeap and KnownHeap$Tagged;
  - over the whole heap (the JDK's own objects too), every non-null
    reference of an instance (not an array, not a class object) names a
    field, unless the agent could not look at the fields of its class (it
    declared none for it: objects from the class data sharing archive whose
    class is not prepared yet); and each (class, field, class of the value)
    the trace has, the HPROF dump has too, for instance and static fields:
    a field index mapped to the wrong field would name a field that never
    holds such a value. (Counts may differ there: jcmd makes objects of its
    own between the two dumps.) A referent the trace names by its strength
    (the agent's synthetic field "referent" of kind soft, weak, final or
    phantom, declared by the matching java.lang.ref class) is the HPROF
    dump's java.lang.ref.Reference.referent.
Prints one line per failed check; exits 1 if any failed.
"""
import collections
import re
import struct
import subprocess
import sys

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL: " + what)


# ---- the YAML form, as heaptrace cat writes it ------------------------------

TOKEN = re.compile(r'\s*(?:([{}\[\],:])|"((?:[^"\\]|\\.)*)"|([^{}\[\],:\s][^{}\[\],]*?)(?=\s*[{}\[\],]|:\s|$))')


def flow(text):
    """The value of a YAML flow collection or scalar, as cat writes them:
    mappings, sequences, double-quoted strings and plain scalars (numbers
    as ints)."""
    tokens = []
    pos = 0
    while pos < len(text):
        m = TOKEN.match(text, pos)
        if not m or m.end() == pos:
            if text[pos:].strip() == "":
                break
            raise ValueError("cannot read %r at %d" % (text, pos))
        pos = m.end()
        if m.group(1):
            tokens.append(("p", m.group(1)))
        elif m.group(2) is not None:
            tokens.append(("s", bytes(m.group(2), "utf-8")
                           .decode("unicode_escape")))
        else:
            tokens.append(("s", plain(m.group(3).strip())))

    def value(i):
        kind, tok = tokens[i]
        if kind == "p" and tok == "{":
            out = {}
            i += 1
            while tokens[i] != ("p", "}"):
                key = tokens[i][1]
                assert tokens[i + 1] == ("p", ":"), text
                out[key], i = value(i + 2)
                if tokens[i] == ("p", ","):
                    i += 1
            return out, i + 1
        if kind == "p" and tok == "[":
            out = []
            i += 1
            while tokens[i] != ("p", "]"):
                v, i = value(i)
                out.append(v)
                if tokens[i] == ("p", ","):
                    i += 1
            return out, i + 1
        return tok, i + 1

    return value(0)[0] if tokens else None


def plain(s):
    try:
        return int(s, 0)
    except ValueError:
        return s


def events(heaptrace, trace):
    """(name, value) of each event of `heaptrace cat TRACE`; an event whose
    value is a block sequence (`- name:` then `    - {...}` lines) comes
    with the list."""
    text = subprocess.run([heaptrace, "cat", trace], check=True,
                          stdout=subprocess.PIPE).stdout.decode("utf-8")
    current = None
    for line in text.split("\n"):
        m = re.match(r"  - ([a-z_]+):\s*(.*)$", line)
        if m:
            if current:
                yield current
            rest = m.group(2)
            current = (m.group(1), flow(rest) if rest else [])
            continue
        m = re.match(r"      - (.*)$", line)
        if m and current and isinstance(current[1], list):
            current[1].append(flow(m.group(1)))
    if current:
        yield current


class Trace:
    """Dump DUMP of a trace: classes, fields, objects and class roots."""

    def __init__(self, heaptrace, trace, dump):
        self.classes = {}
        self.fields = {}
        self.objects = {}
        self.class_roots = []   # (class id, target, field id): statics
        dumps = 0
        container = None
        for name, ev in events(heaptrace, trace):
            if name == "class":
                self.classes[ev["id"]] = ev["name"]
            elif name == "fields":
                for f in ev if isinstance(ev, list) else ev["fields"]:
                    self.fields[f["id"]] = f
            elif name == "begin_container":
                container = ev
                if ev["type"] == "C_END":
                    dumps += 1
                    if dumps > dump:
                        break
            elif dumps < dump:
                continue
            elif name == "root_references" and \
                    container["type"] == "C_RT_CLASS":
                fields = ev.get("root_fields", [0] * len(ev["refs"]))
                for ref, f in zip(ev["refs"], fields):
                    self.class_roots.append((container.get("id1", 0), ref,
                                             f))
            elif name == "object_references":
                self.objects[ev["id"]] = ev
        # a class's statics are references of its class object
        for oid, o in self.objects.items():
            fields = o.get("ref_fields", [0] * len(o["refs"]))
            for ref, f in zip(o["refs"], fields):
                if ref and self.fields.get(f, {}).get("kind") == "static":
                    self.class_roots.append((oid, ref, f))

    def is_instance(self, obj):
        name = self.class_of(obj)
        return name is not None and name != "java.lang.Class" and \
            not name.endswith("[]")

    def class_of(self, obj):
        o = self.objects.get(obj)
        return self.classes.get(o["class"]) if o else None

    def field_name(self, fid):
        f = self.fields.get(fid)
        return (self.classes.get(f["class"]), f["name"]) if f else None

    def is_link(self, fid):
        """Whether the field is a link (<class>...), which no class
        declares: class 0."""
        f = self.fields.get(fid)
        return f is not None and f["class"] == 0

    def references(self, obj):
        """(field id, target) of each non-null reference of obj, its
        links left out (HPROF leaves them implicit)."""
        o = self.objects[obj]
        fields = o.get("ref_fields", [0] * len(o["refs"]))
        return [(f, r) for f, r in zip(fields, o["refs"])
                if r and not self.is_link(f)]


# ---- HPROF ------------------------------------------------------------------

TYPE_SIZE = {2: None, 4: 1, 5: 2, 6: 4, 7: 8, 8: 1, 9: 2, 10: 4, 11: 8}
TYPE_NAME = {4: "boolean", 5: "char", 6: "float", 7: "double", 8: "byte",
             9: "short", 10: "int", 11: "long"}


class Hprof:
    """The classes and instances of a heap dump (HPROF 1.0.2, as HotSpot
    writes it), and the class of every object."""

    def __init__(self, path):
        data = open(path, "rb").read()
        end = data.index(b"\0")
        self.idsize = struct.unpack_from(">I", data, end + 1)[0]
        self.id_fmt = ">I" if self.idsize == 4 else ">Q"
        self.data = data
        self.strings = {}
        self.class_names = {}      # class object id -> name
        self.class_dumps = {}      # class object id -> (super, statics, fields)
        self.instances = {}        # object id -> (class id, values offset, n)
        self.object_class = {}     # object id -> class id (or array class)
        self.primitive_arrays = {} # object id -> element type
        pos = end + 1 + 4 + 8
        while pos < len(data):
            tag, length = data[pos], struct.unpack_from(">I", data, pos + 5)[0]
            body = pos + 9
            if tag == 0x01:
                sid = self.ident(body)
                self.strings[sid] = data[body + self.idsize:body + length] \
                    .decode("utf-8", "replace")
            elif tag == 0x02:
                cid = self.ident(body + 4)
                nid = self.ident(body + 8 + self.idsize)
                self.class_names[cid] = hprof_array_name(
                    self.strings[nid].replace("/", "."))
            elif tag in (0x0C, 0x1C):
                self.heap(body, body + length)
            pos = body + length

    def ident(self, at):
        return struct.unpack_from(self.id_fmt, self.data, at)[0]

    def value_size(self, t):
        return self.idsize if t == 2 else TYPE_SIZE[t]

    def heap(self, pos, end):
        d, n = self.data, self.idsize
        roots = {0xFF: n, 0x01: 2 * n, 0x02: n + 8, 0x03: n + 8, 0x04: n + 4,
                 0x05: n, 0x06: n + 4, 0x07: n, 0x08: n + 8}
        while pos < end:
            sub = d[pos]
            pos += 1
            if sub in roots:
                pos += roots[sub]
            elif sub == 0x20:
                cid = self.ident(pos)
                super_id = self.ident(pos + 4 + n)
                pos += 4 + 7 * n + 4
                (cp,) = struct.unpack_from(">H", d, pos)
                pos += 2
                for _ in range(cp):
                    pos += 2 + 1 + self.value_size(d[pos + 2])
                (ns,) = struct.unpack_from(">H", d, pos)
                pos += 2
                statics = []
                for _ in range(ns):
                    name, t = self.ident(pos), d[pos + n]
                    value = self.ident(pos + n + 1) if t == 2 else None
                    statics.append((name, t, value))
                    pos += n + 1 + self.value_size(t)
                (nf,) = struct.unpack_from(">H", d, pos)
                pos += 2
                fields = []
                for _ in range(nf):
                    fields.append((self.ident(pos), d[pos + n]))
                    pos += n + 1
                self.class_dumps[cid] = (super_id, statics, fields)
            elif sub == 0x21:
                oid, cid = self.ident(pos), self.ident(pos + 4 + n)
                (length,) = struct.unpack_from(">I", d, pos + 4 + 2 * n)
                values = pos + 8 + 2 * n
                self.object_class[oid] = cid
                self.instances[oid] = (cid, values)
                pos = values + length
            elif sub == 0x22:
                oid = self.ident(pos)
                (count,) = struct.unpack_from(">I", d, pos + 4 + n)
                self.object_class[oid] = self.ident(pos + 8 + n)
                pos += 8 + 2 * n + count * n
            elif sub == 0x23:
                (count,) = struct.unpack_from(">I", d, pos + 4 + n)
                t = d[pos + 8 + n]
                self.primitive_arrays[self.ident(pos)] = t
                pos += 9 + n + count * self.value_size(t)
            else:
                raise ValueError("HPROF: unknown heap sub-record 0x%02x" % sub)

    def name(self, cid):
        return self.class_names.get(cid)

    def class_name_of(self, oid):
        """The class of an object as the trace names it: a class object's
        is java.lang.Class, a primitive array's (which HPROF gives no
        class) its element type's."""
        if oid in self.class_dumps:
            return "java.lang.Class"
        if oid in self.primitive_arrays:
            return TYPE_NAME.get(self.primitive_arrays[oid], "?") + "[]"
        return self.name(self.object_class.get(oid))

    def references(self, oid):
        """(declaring class, field, value) of each non-null reference field
        of the instance oid: its class's fields, then its superclasses'."""
        cid, pos = self.instances[oid]
        out = []
        while cid:
            super_id, _, fields = self.class_dumps[cid]
            for name, t in fields:
                if t == 2:
                    value = self.ident(pos)
                    if value:
                        out.append((self.name(cid), self.strings[name],
                                    value))
                pos += self.value_size(t)
            cid = super_id
        return out

    def all_statics(self):
        """(class, field, class of the value) of every non-null static
        reference of every class."""
        return {(self.name(cid), self.strings[nm], self.class_name_of(v))
                for cid, (_, statics, _) in self.class_dumps.items()
                for nm, t, v in statics if t == 2 and v}

    def statics(self, class_name):
        """(field, value) of the non-null static references of a class."""
        for cid, (_, statics, _) in self.class_dumps.items():
            if self.name(cid) == class_name:
                # HotSpot adds "<resolved_references>", the constant
                # pool's cache, which is no field
                return [(self.strings[nm], v) for nm, t, v in statics
                        if t == 2 and v and
                        not self.strings[nm].startswith("<")]
        return []


# ---- the checks --------------------------------------------------------------

KNOWN = ["KnownHeap$Node", "KnownHeap$TreeNode", "KnownHeap$Leaf"]
STATICS = ["KnownHeap", "KnownHeap$Tagged"]


def trace_profile(t):
    """Counter of (class, declaring class.field, target class) over the
    references of KnownHeap's objects, and of (class.field, target class)
    over the static roots of KnownHeap and Tagged."""
    refs = collections.Counter()
    for oid, o in t.objects.items():
        cname = t.classes.get(o["class"])
        if cname not in KNOWN:
            continue
        for fid, target in t.references(oid):
            f = t.field_name(fid)
            refs[(cname, "%s.%s" % f if f else "(no field)",
                  t.class_of(target))] += 1
    statics = collections.Counter()
    for cls, target, fid in t.class_roots:
        cname = t.classes.get(cls)
        if cname in STATICS and cls != target:
            f = t.field_name(fid)
            statics[("%s.%s" % f if f else "(no field)",
                     t.class_of(target))] += 1
    return refs, statics


def hprof_profile(h):
    refs = collections.Counter()
    for oid, (cid, _) in h.instances.items():
        cname = h.name(cid)
        if cname not in KNOWN:
            continue
        for decl, field, value in h.references(oid):
            refs[(cname, "%s.%s" % (decl, field),
                  h.class_name_of(value))] += 1
    statics = collections.Counter()
    for cname in STATICS:
        for field, value in h.statics(cname):
            statics[("%s.%s" % (cname, field), h.class_name_of(value))] += 1
    return refs, statics


STRENGTH_CLASSES = {
    "soft": "java.lang.ref.SoftReference",
    "weak": "java.lang.ref.WeakReference",
    "final": "java.lang.ref.FinalReference",
    "phantom": "java.lang.ref.PhantomReference",
}


def referent_as_declared(field, name):
    """(class, name) of a field as the HPROF dump declares it: a referent
    of a strength, declared by its strength's class in the trace, is
    java.lang.ref.Reference's there."""
    kind = field.get("kind", "instance")
    if kind not in STRENGTH_CLASSES:
        return name
    check(name == (STRENGTH_CLASSES[kind], "referent"),
          "a %s referent declared as %s.%s" % ((kind,) + name))
    return ("java.lang.ref.Reference", "referent")


def whole_heap(t, h):
    """Checks every reference of every instance in the trace against the
    triples the HPROF dump has."""
    seen = set()
    for oid, (cid, _) in h.instances.items():
        for decl, field, value in h.references(oid):
            seen.add((h.name(cid), "%s.%s" % (decl, field),
                      h.class_name_of(value)))
    declaring = {f["class"] for f in t.fields.values()}
    unnamed = collections.Counter()
    unknown = collections.Counter()
    wrong = collections.Counter()
    total = 0
    for oid in t.objects:
        if not t.is_instance(oid):
            continue
        for fid, target in t.references(oid):
            total += 1
            f = t.field_name(fid)
            if not f and t.objects[oid]["class"] in declaring:
                unnamed[t.class_of(oid)] += 1
            if not f:
                unknown[t.class_of(oid)] += 1
                continue
            triple = (t.class_of(oid), "%s.%s" % referent_as_declared(
                t.fields[fid], f), t.class_of(target))
            if triple[2] and triple not in seen:
                wrong[triple] += 1
    check(total > 1000, "only %d references from instances" % total)
    check(not unnamed, "references of instances with no field: %s"
          % unnamed.most_common(10))
    check(not wrong, "references whose field never holds such a value in "
          "the HPROF dump: %s" % wrong.most_common(10))
    print("whole heap: %d references of instances, %d with no field (of "
          "classes whose fields were not looked at: %s), %d not in the "
          "HPROF dump" % (total, sum(unknown.values()),
                          ", ".join(sorted(unknown)) or "none",
                          sum(wrong.values())))

    # static fields, of classes the HPROF dump names alike (not hidden ones)
    statics = h.all_statics()
    named = set(h.class_names.values())
    wrong = collections.Counter()
    total = 0
    for cls, target, fid in t.class_roots:
        f = t.field_name(fid)
        if not f or t.classes.get(cls) not in named:
            continue
        total += 1
        triple = (f[0], f[1], t.class_of(target))
        if t.classes.get(cls) != f[0] or (triple[2] and
                                          triple not in statics):
            wrong[(t.classes.get(cls),) + triple] += 1
    check(total > 100, "only %d static references with a field" % total)
    check(not wrong, "static references whose field never holds such a "
          "value in the HPROF dump: %s" % wrong.most_common(10))
    print("whole heap: %d static references with a field, %d not in the "
          "HPROF dump" % (total, sum(wrong.values())))


def hprof_array_name(name):
    """HPROF names arrays by signature ("[LKnownHeap$Leaf;"); the trace
    as Java writes them."""
    if not name or not name.startswith("["):
        return name
    dims = len(name) - len(name.lstrip("["))
    base = name[dims:]
    base = base[1:-1].replace("/", ".") if base.startswith("L") else {
        "Z": "boolean", "B": "byte", "C": "char", "S": "short", "I": "int",
        "J": "long", "F": "float", "D": "double"}.get(base, base)
    return base + "[]" * dims


def main():
    heaptrace, trace, dump, hprof = sys.argv[1:5]
    n, depth, leaves = (int(x) for x in sys.argv[5:8])
    t = Trace(heaptrace, trace, int(dump))

    declared = {(t.classes.get(f["class"]), f["name"]): f
                for f in t.fields.values()}
    for cls, name, kind in [
            ("KnownHeap$Node", "next", "instance"),
            ("KnownHeap$TreeNode", "left", "instance"),
            ("KnownHeap$TreeNode", "right", "instance"),
            ("KnownHeap$TreeNode", "leaf", "instance"),
            ("KnownHeap$Labelled", "label", "instance"),
            ("KnownHeap", "head", "static"),
            ("KnownHeap", "sharedLeaves", "static"),
            ("KnownHeap$Tagged", "TAGS", "static")]:
        f = declared.get((cls, name))
        check(f is not None, "no field %s.%s declared" % (cls, name))
        if f:
            check(f.get("kind", "instance") == kind,
                  "%s.%s declared %s, not %s"
                  % (cls, name, f.get("kind", "instance"), kind))
    for cls, name in [("KnownHeap$Node", "value"), ("KnownHeap$Leaf", "id")]:
        check((cls, name) not in declared,
              "primitive field %s.%s declared" % (cls, name))
    ids = sorted(t.fields)
    check(ids == list(range(1, len(ids) + 1)),
          "field ids are not 1..%d: %s..." % (len(ids), ids[:10]))

    refs, statics = trace_profile(t)
    tree = 2 ** depth - 1
    expected = collections.Counter({
        ("KnownHeap$Node", "KnownHeap$Node.next", "KnownHeap$Node"): n - 1,
        ("KnownHeap$TreeNode", "KnownHeap$TreeNode.left",
         "KnownHeap$TreeNode"): (tree - 1) // 2,
        ("KnownHeap$TreeNode", "KnownHeap$TreeNode.right",
         "KnownHeap$TreeNode"): (tree - 1) // 2,
        ("KnownHeap$TreeNode", "KnownHeap$TreeNode.leaf",
         "KnownHeap$Leaf"): 2 ** (depth - 1),
        ("KnownHeap$Leaf", "KnownHeap$Labelled.label",
         "java.lang.String"): leaves,
    })
    check(refs == expected,
          "the references of KnownHeap's objects by field are %s, not %s"
          % (sorted(refs.items()), sorted(expected.items())))
    for want in [("KnownHeap.head", "KnownHeap$Node"),
                 ("KnownHeap.sharedLeaves", "KnownHeap$Leaf[]"),
                 ("KnownHeap$Tagged.TAGS", "java.lang.String[]")]:
        check(statics[want] == 1, "the static root %s (a %s) is there %d "
              "times: %s" % (want[0], want[1], statics[want],
                             sorted(statics.items())))
    head = [target for cls, target, fid in t.class_roots
            if t.field_name(fid) == ("KnownHeap", "head")]
    if head:
        # the head is the node no next reaches
        reached = {r for o in t.objects for f, r in t.references(o)
                   if t.field_name(f) == ("KnownHeap$Node", "next")}
        check(head[0] not in reached and t.class_of(head[0]) ==
              "KnownHeap$Node", "KnownHeap.head is not the list's first node")

    h = Hprof(hprof)
    hrefs, hstatics = hprof_profile(h)
    check(refs == hrefs,
          "KnownHeap's objects' references by field: the trace has %s, the "
          "HPROF dump %s" % (sorted(refs.items()), sorted(hrefs.items())))
    check(statics == hstatics,
          "the static references of %s: the trace has %s, the HPROF dump %s"
          % (STATICS, sorted(statics.items()), sorted(hstatics.items())))
    whole_heap(t, h)


if __name__ == "__main__":
    main()
    sys.exit(1 if failures else 0)
