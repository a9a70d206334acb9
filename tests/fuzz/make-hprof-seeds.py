#!/usr/bin/env python3
# make-hprof-seeds.py DIR - writes small HPROF heap dumps into DIR, the
# seeds of the fuzz_hprof target: 4- and 8-byte ids, 1.0.1 and 1.0.2, a
# heap dump in segments and one in a single HEAP_DUMP record, two dumps in
# one file, every root kind, instances, object and primitive arrays, a
# cycle, and References of java.lang.ref (a SoftReference subclass, a
# WeakReference) whose referents nothing else holds, as the JVM dumps
# them: Reference declares `referent`. Written from the HPROF format as
# the JDK documents it
# (big-endian), independently of src/lib/read/hprof_source.c.
import os
import struct
import sys

OBJECT, BOOLEAN, CHAR, FLOAT, DOUBLE, BYTE, SHORT, INT, LONG = \
    2, 4, 5, 6, 7, 8, 9, 10, 11


class Dump:
    def __init__(self, id_size, version="1.0.2"):
        self.n = id_size
        self.out = bytearray(b"JAVA PROFILE " + version.encode() + b"\0")
        self.out += struct.pack(">IQ", id_size, 1700000000000)
        self.strings = {}

    def id(self, v):
        return v.to_bytes(self.n, "big")

    def record(self, tag, body):
        self.out += struct.pack(">BII", tag, 0, len(body)) + body

    def utf8(self, text):
        if text not in self.strings:
            sid = 0x100 + len(self.strings)
            self.strings[text] = sid
            self.record(0x01, self.id(sid) + text.encode())
        return self.strings[text]

    def load_class(self, serial, class_id, name):
        self.record(0x02, struct.pack(">I", serial) + self.id(class_id) +
                    struct.pack(">I", 1) + self.id(self.utf8(name)))


def class_dump(d, class_id, super_id, size, fields, statics=()):
    body = (bytes([0x20]) + d.id(class_id) + struct.pack(">I", 1) +
            d.id(super_id) + d.id(0) * 5 + struct.pack(">I", size) +
            struct.pack(">H", 0) + struct.pack(">H", len(statics)))
    for name, ftype, value in statics:
        body += d.id(d.utf8(name)) + bytes([ftype]) + value
    body += struct.pack(">H", len(fields))
    for name, ftype in fields:
        body += d.id(d.utf8(name)) + bytes([ftype])
    return body


def instance(d, obj, class_id, values):
    return (bytes([0x21]) + d.id(obj) + struct.pack(">I", 1) +
            d.id(class_id) + struct.pack(">I", len(values)) + values)


def heap(d, base):
    """The sub-records of one heap: ids offset by base."""
    node, obj_class, arr_class = 0x1100, 0x1000, 0x1200
    a, b, arr, raw, thread = (base + 0x2000, base + 0x2100, base + 0x3000,
                              base + 0x4000, base + 0x5000)
    body = bytearray()
    body += bytes([0x08]) + d.id(thread) + struct.pack(">II", 1, 1)
    body += bytes([0x01]) + d.id(a) + d.id(0x77)
    body += bytes([0x03]) + d.id(b) + struct.pack(">II", 1, 0)
    body += bytes([0x02]) + d.id(arr) + struct.pack(">II", 1, 0)
    body += bytes([0x04]) + d.id(raw) + struct.pack(">I", 1)
    body += bytes([0x05]) + d.id(obj_class)
    body += bytes([0x06]) + d.id(thread) + struct.pack(">I", 1)
    body += bytes([0x07]) + d.id(a)
    body += bytes([0xff]) + d.id(b)
    body += class_dump(d, obj_class, 0, 0, [])
    body += class_dump(d, node, obj_class, d.n + 4,
                       [("next", OBJECT), ("value", INT)],
                       [("count", INT, struct.pack(">i", 2))])
    body += class_dump(d, arr_class, obj_class, 0, [])
    body += instance(d, a, node, d.id(b) + struct.pack(">i", 1))
    body += instance(d, b, node, d.id(a) + struct.pack(">i", 2))
    body += instance(d, thread, node, d.id(arr) + struct.pack(">i", 3))
    body += (bytes([0x22]) + d.id(arr) + struct.pack(">II", 1, 3) +
             d.id(arr_class) + d.id(a) + d.id(0) + d.id(raw))
    body += (bytes([0x23]) + d.id(raw) + struct.pack(">II", 1, 5) +
             bytes([BYTE]) + b"hello")
    return bytes(body)


def preamble(d):
    d.load_class(1, 0x1000, "java/lang/Object")
    d.load_class(2, 0x1100, "Node")
    d.load_class(3, 0x1200, "[Ljava/lang/Object;")
    d.record(0x04, d.id(0x900) + d.id(d.utf8("main")) +
             d.id(d.utf8("([Ljava/lang/String;)V")) +
             d.id(d.utf8("Main.java")) + struct.pack(">Ii", 2, 12))
    d.record(0x05, struct.pack(">III", 1, 1, 1) + d.id(0x900))
    d.record(0x0a, struct.pack(">I", 1) + d.id(0x5000) +
             struct.pack(">I", 1) + d.id(d.utf8("main")) +
             d.id(d.utf8("system")) + d.id(0))


def segmented(id_size):
    d = Dump(id_size)
    preamble(d)
    body = heap(d, 0)
    # split at a sub-record boundary: the class dumps start after the roots
    cut = body.index(bytes([0x20]) + d.id(0x1000))
    d.record(0x1c, body[:cut])
    d.record(0x1c, body[cut:])
    d.record(0x2c, b"")
    return d.out


def single_record(id_size):
    d = Dump(id_size, "1.0.1")
    preamble(d)
    d.record(0x0c, heap(d, 0))
    return d.out


def two_dumps():
    d = Dump(8)
    preamble(d)
    d.record(0x1c, heap(d, 0))
    d.record(0x2c, b"")
    d.record(0x1c, heap(d, 0x10000))
    d.record(0x2c, b"")
    return d.out


def references():
    """A Main (the thread's local) holding a Cache (a SoftReference
    subclass) and a WeakReference; each referent, a Blob, is held by
    nothing else. The Reference classes carry the fields the JDK's do."""
    d = Dump(8)
    obj, ref, soft, weak, cache, main_, blob = (
        0x1000, 0x1300, 0x1310, 0x1320, 0x1330, 0x1340, 0x1350)
    for serial, (cid, name) in enumerate(
            [(obj, "java/lang/Object"), (ref, "java/lang/ref/Reference"),
             (soft, "java/lang/ref/SoftReference"),
             (weak, "java/lang/ref/WeakReference"), (cache, "Cache"),
             (main_, "Main"), (blob, "Blob")], start=1):
        d.load_class(serial, cid, name)
    m, c, w, b1, b2, t = 0x2000, 0x2100, 0x2200, 0x3000, 0x3100, 0x5000
    body = bytearray()
    body += bytes([0x08]) + d.id(t) + struct.pack(">II", 1, 1)
    body += bytes([0x03]) + d.id(m) + struct.pack(">II", 1, 0)
    body += class_dump(d, obj, 0, 0, [])
    body += class_dump(d, ref, obj, 4 * d.n,
                       [("referent", OBJECT), ("queue", OBJECT),
                        ("next", OBJECT), ("discovered", OBJECT)])
    body += class_dump(d, soft, ref, 8, [("timestamp", LONG)])
    body += class_dump(d, weak, ref, 0, [])
    body += class_dump(d, cache, soft, d.n, [("name", OBJECT)])
    body += class_dump(d, main_, obj, 2 * d.n,
                       [("cache", OBJECT), ("weak", OBJECT)])
    body += class_dump(d, blob, obj, 4, [("size", INT)])
    body += instance(d, t, main_, d.id(0) + d.id(0))
    body += instance(d, m, main_, d.id(c) + d.id(w))
    # an instance's own fields first, then each super class's
    body += instance(d, c, cache, d.id(0) + struct.pack(">q", 7) +
                     d.id(b1) + d.id(0) * 3)
    body += instance(d, w, weak, d.id(b2) + d.id(0) * 3)
    body += instance(d, b1, blob, struct.pack(">i", 1000))
    body += instance(d, b2, blob, struct.pack(">i", 2000))
    d.record(0x1c, bytes(body))
    d.record(0x2c, b"")
    return d.out


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    seeds = {
        "segments-id8.hprof": segmented(8),
        "segments-id4.hprof": segmented(4),
        "heap-dump-101.hprof": single_record(8),
        "two-dumps.hprof": two_dumps(),
        "references.hprof": references(),
    }
    for name, data in seeds.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)


if __name__ == "__main__":
    main()
