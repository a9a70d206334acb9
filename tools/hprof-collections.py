#!/usr/bin/env python3
"""hprof-collections.py DUMP.hprof - the size and capacity of every
java.util.HashMap, LinkedHashMap, HashSet, LinkedHashSet, Hashtable,
ConcurrentHashMap, ArrayList and ArrayDeque of a Java heap dump, one
"ID<TAB>CLASS<TAB>size N of M" line each in id order, as `heaptrace top`
and `paths` label them.

Read with the HPROF reader of tools/hprof-strings.py (an independent
reading of the format, not heaptrace's code), and counted another way
than heaptrace's collections.c where a count exists: a hash table's size
is the entries its buckets chain (`next`, and a ConcurrentHashMap's
TreeBin's `first` list), which must equal its own size field; a line ends
with "MISCOUNT" where it does not. A list's size is its field (its slots
may hold nulls); an ArrayDeque's is its ring's (tail - head) mod length.
"""
import importlib.util
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location(
    "hprof_strings", os.path.join(here, "hprof-strings.py"))
hprof = importlib.util.module_from_spec(spec)
spec.loader.exec_module(hprof)

MAPS = {"java/util/HashMap": "size", "java/util/LinkedHashMap": "size",
        "java/util/Hashtable": "count",
        "java/util/concurrent/ConcurrentHashMap": None}
SETS = ("java/util/HashSet", "java/util/LinkedHashSet")
LISTS = {"java/util/ArrayList": ("size", "elementData")}


class Heap:
    def __init__(self, path):
        self.dump = hprof.Dump(open(path, "rb").read())
        self.dump.read()
        self.name = {c: self.dump.names.get(n, "?")
                     for c, n in self.dump.class_names.items()}

    def cls(self, obj):
        entry = self.dump.instances.get(obj)
        return self.name.get(entry[0]) if entry else None

    def fields(self, obj):
        cls, raw = self.dump.instances[obj]
        return self.dump.fields(cls, raw)

    def chained(self, table):
        """Entries chained from a table's buckets."""
        n = 0
        for e in self.dump.elements(table):
            while e:
                f = self.fields(e)
                if "first" in f and "root" in f:   # a TreeBin
                    n += self.chain(f["first"])
                    break
                n += 1
                e = f.get("next", 0)
        return n

    def chain(self, e):
        n = 0
        while e:
            n += 1
            e = self.fields(e).get("next", 0)
        return n

    def map_figures(self, obj):
        name, f = self.cls(obj), self.fields(obj)
        table = f.get("table", 0)
        capacity = len(self.dump.elements(table)) if table else 0
        if MAPS[name] is None:
            size = f["baseCount"]
            cells = f.get("counterCells", 0)
            for c in self.dump.elements(cells) if cells else []:
                if c:
                    size += self.fields(c)["value"]
            size = max(size, 0)
        else:
            size = f[MAPS[name]]
        counted = self.chained(table) if table else 0
        return size, capacity, counted

    def figures(self, obj):
        name, f = self.cls(obj), self.fields(obj)
        if name in MAPS:
            return self.map_figures(obj)
        if name in SETS:
            return self.map_figures(f["map"])
        if name in LISTS:
            size_field, array = LISTS[name]
            data = f[array]
            return f[size_field], \
                len(self.dump.elements(data)) if data else 0, None
        # ArrayDeque
        data = f["elements"]
        length = len(self.dump.elements(data)) if data else 0
        size = (f["tail"] - f["head"]) % length if length else 0
        return size, length, None


def main():
    heap = Heap(sys.argv[1])
    known = set(MAPS) | set(SETS) | set(LISTS) | {"java/util/ArrayDeque"}
    for obj in sorted(heap.dump.instances):
        name = heap.cls(obj)
        if name not in known:
            continue
        size, capacity, counted = heap.figures(obj)
        line = f"0x{obj:x}\t{name.replace('/', '.')}\tsize {size} of {capacity}"
        if counted is not None and counted != size:
            line += f"\tMISCOUNT {counted}"
        print(line)


if __name__ == "__main__":
    main()
