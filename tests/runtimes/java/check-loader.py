#!/usr/bin/env python3
"""check-loader.py - checks what heaptrace says a class loader retains in a
dump of LoaderHeap (LoaderHeap.java), against a count made by hand from
the objects and sizes of the same dump.

usage: check-loader.py [--statics-are-roots] HEAPTRACE TRACE

LoaderHeap's loader (a LoaderHeap$DirLoader, held by a static field)
defined Kept, Dropped1 and Dropped2; the program keeps an instance of Kept
and none of the others. The JVM keeps a class while an instance lives and
a loader while one of its classes does, so:
  - the loader retains (would free with it) the class objects of Dropped1
    and Dropped2, with their static arrays DATA (2016 and 4016 bytes), its
    `classes` list, and parts of its own;
  - it does not retain Kept's class object nor Kept.DATA: Kept's instance
    holds its class (the <class> link);
  - every class object whose instance is reachable is reachable.
The bytes the loader retains are counted by hand: every object the dump's
roots reach, minus those they reach without going through the loader,
each at its size in the dump; heaptrace's retained size must be that sum.
With --statics-are-roots (the JVMTI recorder, which reports each static
field's value as a root of its class), the DATA arrays are roots and are
not the loader's.
Prints one line per check; exits 1 if any failed.
"""
import collections
import importlib.util
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
import checks  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "check_fields", os.path.join(os.path.dirname(__file__),
                                 "check-fields.py"))
check_fields = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(check_fields)

WEAK = 0x2  # a weak root retains nothing


class Dump:
    """The last dump of a trace: objects, roots, class and field names."""

    def __init__(self, heaptrace, trace):
        self.classes, self.fields = {}, {}
        self.objects, self.roots = {}, []
        for name, ev in check_fields.events(heaptrace, trace):
            if name == "class":
                self.classes[ev["id"]] = ev["name"]
            elif name == "fields":
                for f in ev if isinstance(ev, list) else ev["fields"]:
                    self.fields[f["id"]] = f
            elif name == "begin_container" and ev["type"] == "C_BEGIN":
                self.objects, self.roots = {}, []
            elif name == "root_references":
                flags = ev.get("root_flags", [0] * len(ev["refs"]))
                self.roots += [r for r, f in zip(ev["refs"], flags)
                               if r and not f & WEAK]
            elif name == "object_references":
                o = self.objects.get(ev["id"])
                if o:  # a continuation
                    o["refs"] += ev["refs"]
                    o["ref_fields"] += ev.get("ref_fields",
                                              [0] * len(ev["refs"]))
                else:
                    ev.setdefault("ref_fields", [0] * len(ev["refs"]))
                    self.objects[ev["id"]] = ev

    def class_name(self, obj):
        return self.classes.get(self.objects[obj]["class"])

    def field(self, obj, name):
        """What obj's reference through the field named name holds."""
        o = self.objects[obj]
        for r, f in zip(o["refs"], o["ref_fields"]):
            if f in self.fields and self.fields[f]["name"] == name:
                return r
        return None

    def reach(self, without=None):
        """Every object the roots reach without going through `without`."""
        seen = set()
        todo = [r for r in self.roots if r in self.objects and r != without]
        seen.update(todo)
        while todo:
            x = todo.pop()
            for r in self.objects[x]["refs"]:
                if r and r != without and r in self.objects and \
                        r not in seen:
                    seen.add(r)
                    todo.append(r)
        return seen


def retained_by_heaptrace(heaptrace, trace, obj):
    out = subprocess.run([heaptrace, "object", "--format", "json", trace,
                          hex(obj)], check=True, stdout=subprocess.PIPE)
    return json.loads(out.stdout)["retained"]


def main():
    args = sys.argv[1:]
    statics_are_roots = "--statics-are-roots" in args
    heaptrace, trace = [a for a in args if not a.startswith("--")]
    res = checks.Result(os.path.basename(trace))
    d = Dump(heaptrace, trace)

    loaders = [o for o in d.objects
               if d.class_name(o) == "LoaderHeap$DirLoader"]
    res.check(len(loaders) == 1, "one LoaderHeap$DirLoader: %d" %
              len(loaders))
    if len(loaders) != 1:
        return res
    loader = loaders[0]
    mirror = {name: cid for cid, name in d.classes.items()
              if name in ("Kept", "Dropped1", "Dropped2")}
    res.check(len(mirror) == 3 and all(m in d.objects
                                       for m in mirror.values()),
              "the class objects of Kept, Dropped1, Dropped2 are in the "
              "dump: %s" % sorted(mirror))
    if len(mirror) != 3:
        return res

    everything = d.reach()
    alone = everything - d.reach(without=loader)
    by_hand = sum(d.objects[o]["size"] for o in alone)
    told = retained_by_heaptrace(heaptrace, trace, loader)
    res.check(told == by_hand,
              "the loader retains %d bytes; by hand, %d (%d objects: %s)"
              % (told, by_hand, len(alone),
                 ", ".join("%s %d B" % (d.class_name(o),
                                        d.objects[o]["size"])
                           for o in sorted(alone))))

    # what the program makes the loader hold alone, and what not
    classes_list = d.field(loader, "classes")
    res.check(loader in alone and classes_list in alone,
              "the loader and its classes list are the loader's")
    for name, data_size in (("Dropped1", 2016), ("Dropped2", 4016)):
        m = mirror[name]
        data = d.field(m, "DATA")
        res.check(m in alone, "class %s (no instance) is the loader's"
                  % name)
        res.check(data is not None and d.objects[data]["size"] == data_size,
                  "%s.DATA takes %d bytes (%s in the dump)" %
                  (name, data_size, data and d.objects[data]["size"]))
        if data is not None:
            res.check((data in alone) != statics_are_roots,
                      "%s.DATA is %sthe loader's" %
                      (name, "not " if statics_are_roots else ""))
    kept_data = d.field(mirror["Kept"], "DATA")
    res.check(mirror["Kept"] in everything and mirror["Kept"] not in alone,
              "class Kept is reachable and not the loader's: its instance "
              "holds it")
    res.check(kept_data in everything and kept_data not in alone,
              "Kept.DATA is not the loader's")

    # every class object whose instance is reachable is reachable
    lost = collections.Counter()
    for o in everything:
        c = d.objects[o]["class"]
        if c in d.objects and c not in everything:
            lost[d.classes.get(c)] += 1
    res.check(not lost, "class objects unreachable though an instance is "
              "reachable: %s" % lost.most_common(10))
    return res


if __name__ == "__main__":
    sys.exit(1 if main().failed else 0)
