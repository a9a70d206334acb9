"""jvm_histogram.py - reads what `jcmd PID GC.class_histogram` prints, in
heaptrace's names for the classes, for the checks that compare heaptrace's
per-class counts and bytes with the JVM's own (check-hprof.py,
check-tomcat.py).
"""
import re

PRIMITIVES = {"Z": "boolean", "B": "byte", "C": "char", "S": "short",
              "I": "int", "J": "long", "F": "float", "D": "double"}


def type_name(name):
    """jcmd prints arrays as descriptors ("[I", "[LFoo;"); heaptrace as
    Java code writes them ("int[]", "Foo[]")."""
    dims = len(name) - len(name.lstrip("["))
    if not dims:
        return name
    base = name[dims:]
    if base in PRIMITIVES:
        base = PRIMITIVES[base]
    elif base.startswith("L") and base.endswith(";"):
        base = base[1:-1]
    return base + "[]" * dims


def histogram(path):
    """{class name: (count, bytes)} from jcmd GC.class_histogram."""
    rows = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"\s*\d+:\s+(\d+)\s+(\d+)\s+(\S+)", line)
            if m:
                rows[type_name(m.group(3))] = (int(m.group(1)),
                                               int(m.group(2)))
    return rows
