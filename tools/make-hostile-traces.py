#!/usr/bin/env python3
# make-hostile-traces.py - writes testdata/hostile/*.ht: small .ht files
# whose checksums are right and whose content lies, as a damaged or
# malicious producer would write them (heaptrace(5), LIMITS). The
# command-level cases diag-* feed them to heaptrace and check that each is
# refused with a clear message before anything is allocated for it.
#
# classes-colliding.ht is well formed but chosen against the id maps:
# 80,000 classes whose ids all had one home slot under the Fibonacci
# hashing the maps once used (`top` took 13.6 s over it), and a dump of
# one object. The case top-classes-colliding answers it at once.
#
# names-invalid-utf8.ht has names and header strings that are not UTF-8
# (a stray continuation byte, bytes 0xFF 0xFE, a truncated sequence, an
# overlong form, an encoded surrogate) next to control characters: the
# reader makes each ill-formed part U+FFFD (heaptrace(5), STRINGS) and
# every output stays valid (the cases names-*).
#
# names-modified-utf8.hprof is a Java heap dump whose class names are in
# the JVM's modified UTF-8: U+1F600 as two 3-byte surrogates, U+0000 as
# C0 80, an unpaired surrogate. Written from the HPROF format as the JDK
# documents it (big-endian), as tests/fuzz/make-hprof-seeds.py does.
#
# null-refs-1m.ht, null-roots-1m.ht and moved-1m.ht are amplifications:
# a few KB that describe a million null references, a million null roots
# or a million moved blocks, which the heap graph and the relocation
# tracker would store (8, 56 and 40 bytes each). The cases
# diag-max-memory-* check that they are refused under --max-memory with
# "needs more than N bytes" before that memory is taken, and answered
# without it. roots-22m.ht describes 22 million roots (1.2 GB of graph)
# in 44 KB: refused under the default limit.
#
# deep-hierarchy.hprof is an HPROF heap dump of 1,024 classes, each the
# super class of the next and each adding a long and an int, with an
# instance of a few: every class once copied the field blocks of all its
# super classes (1,024 classes of 180 fields took stats 23 s and 775 MB).
# With compressed oops, class k (from 0) packs its 12(k+1) bytes of
# fields after the 12-byte header without a gap: an instance is
# 24 + 12k bytes, rounded up to 8 (HPROF written by hand, big-endian, as
# tests/fuzz/make-hprof-seeds.py writes it).
#
# deep-references.hprof is an HPROF heap dump (4-byte ids) of 1,024
# classes, each the super class of the next and each adding 32 reference
# fields, with a real instance of classes 0, 1, 2 and 40 and then an
# INSTANCE_DUMP of no field bytes of each class, which the reader must
# refuse (its class's fields take more). Every class once kept a copy of
# the reference offsets of all its super classes, made when an instance
# named it: the 170 KB asked for 67 MB. Instance 0x900002 (class 2)
# refers to 0x900000 by its own first field and to 0x900001 by class 0's
# last field; 0x900028 (class 40) to 0x900002 by its own first and to
# 0x900000 by class 20's fifth.
#
# Written from the layout in heaptrace(5), independently of the library's
# writer. Run from anywhere: python3 tools/make-hostile-traces.py
import os
import struct
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "testdata", "hostile")

EV_CLASS, EV_THREAD, EV_METHOD = 1, 2, 3
EV_GC_STARTED, EV_MOVED_REFERENCES, EV_GC_FINISHED = 5, 7, 9
EV_BEGIN_CONTAINER, EV_ROOT_REFERENCES, EV_OBJECT_REFERENCES = 10, 11, 12
C_BEGIN, C_HEAP, C_END = 1, 15, 16


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def zigzag(v):
    return (v << 1) ^ (v >> 63) if v >= 0 else ((-v) << 1) - 1


def string(s, claimed=None):
    data = s if isinstance(s, bytes) else s.encode()
    return varint((len(data) if claimed is None else claimed) + 1) + data


def file_header(payload):
    fixed = b"\x89HTRACE\n" + struct.pack("<II", 1, len(payload))
    crc = zlib.crc32(fixed + payload)
    return fixed + payload + struct.pack("<I", crc)


def header_payload(runtime="hostile", claimed=None):
    # runtime, runtime_version, pointer size, flags, command line, metadata
    return (string(runtime, claimed) + varint(0) + varint(8) + varint(0) +
            varint(0) + varint(0))


def names_header_payload():
    # every header string, with bytes that are not UTF-8 and controls
    return (string(b"clr\xff") + string(b"4.\xc0\xaf\x1b[31m") + varint(8) +
            varint(0) + string(b"app.exe \xe2\x82 --x\nforged: yes") +
            varint(1) + string(b"k\xed\xa0\x80") + string(b"v\x80\x1b]0;t\x07"))


def names_invalid_utf8():
    """Classes whose names are not UTF-8, objects of each in one dump."""
    names = [b"Stray\x80Continuation", b"Bytes\xff\xfeHere",
             b"Truncated\xe2\x82", b"Overlong\xc0\xaf",
             b"Surrogate\xed\xa0\x80", b"Esc\x1b[2J\xff\nforged 1 line"]
    events = bytes([EV_THREAD]) + varint(7) + string(b"main\xf0\x9f")
    events += bytes([EV_METHOD]) + varint(9) + string(b"run\xfe")
    prev = 0
    for i, name in enumerate(names):
        cid = 0x40 + i
        events += (bytes([EV_CLASS]) + varint(0) + varint(zigzag(cid - prev))
                   + string(name))
        prev = cid
    dump = container(C_BEGIN) + container(C_HEAP)
    prev_obj, prev_cls = 0, prev
    for i in range(len(names)):
        oid, cid = 0x1000 + 0x10 * i, 0x40 + i
        dump += (bytes([EV_OBJECT_REFERENCES]) + varint(0) +
                 varint(zigzag(oid - prev_obj)) +
                 varint(zigzag(cid - prev_cls)) + varint(16 * (i + 1)) +
                 varint(0) + varint(0))
        prev_obj, prev_cls = oid, cid
    dump += container(C_END)
    n = 2 + len(names) + 3 + len(names)
    return file_header(names_header_payload()) + chunk(events + dump, n)


def names_modified_utf8():
    """An HPROF 1.0.2 dump, 8-byte ids, with class names in modified UTF-8."""
    def hid(v):
        return v.to_bytes(8, "big")

    out = bytearray(b"JAVA PROFILE 1.0.2\0" + struct.pack(">IQ", 8, 0))

    def record(tag, body):
        out.extend(struct.pack(">BII", tag, 0, len(body)) + body)

    names = {0x100: b"java/lang/Object",
             # U+1F600 as the surrogates D83D DE00, 3 bytes each
             0x101: b"Emoji\xed\xa0\xbd\xed\xb8\x80Class",
             # U+0000 as C0 80
             0x102: b"Nul\xc0\x80Inside",
             # a high surrogate with no low one after it
             0x103: b"Lone\xed\xa0\xbdSurrogate"}
    for sid, text in names.items():
        record(0x01, hid(sid) + text)
    for serial, cid in enumerate((0x1000, 0x1010, 0x1020, 0x1030), 1):
        record(0x02, struct.pack(">I", serial) + hid(cid) +
               struct.pack(">I", 1) + hid(0x100 + serial - 1))
    body = bytearray()
    for cid in (0x1000, 0x1010, 0x1020, 0x1030):
        body += bytes([0x05]) + hid(cid)  # ROOT_STICKY_CLASS
    for i in range(3):
        body += bytes([0x01]) + hid(0x2000 + 0x10 * i) + hid(0x77)
    for cid in (0x1000, 0x1010, 0x1020, 0x1030):
        body += (bytes([0x20]) + hid(cid) + struct.pack(">I", 1) +
                 hid(0 if cid == 0x1000 else 0x1000) + hid(0) * 5 +
                 struct.pack(">IHHH", 0, 0, 0, 0))
    for i, cid in enumerate((0x1010, 0x1020, 0x1030)):
        body += (bytes([0x21]) + hid(0x2000 + 0x10 * i) +
                 struct.pack(">I", 1) + hid(cid) + struct.pack(">I", 0))
    record(0x1c, bytes(body))
    record(0x2c, b"")
    return bytes(out)


def chunk(payload, events, first_event=0, stored=None, raw=None):
    body = zlib.compress(payload)
    head = b"HTCK" + bytes([1, 1, 0, 0]) + struct.pack(
        "<IIQII",
        len(body) if stored is None else stored,
        len(payload) if raw is None else raw,
        first_event, events, zlib.crc32(body))
    return head + struct.pack("<I", zlib.crc32(head)) + body


def container(ctype):
    return bytes([EV_BEGIN_CONTAINER]) + varint(ctype) + varint(0) + varint(0)


def write(name, data):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(data)


def main():
    os.makedirs(OUT, exist_ok=True)
    header = file_header(header_payload())

    # an object claiming 2^60 references, with 8 bytes of them
    obj = (bytes([EV_OBJECT_REFERENCES]) + varint(0) + varint(zigzag(0x1000))
           + varint(zigzag(0x40)) + varint(16) + varint(0) + varint(1 << 60)
           + bytes([2] * 8))
    write("refs-2p60.ht",
          header + chunk(container(C_BEGIN) + container(C_HEAP) + obj, 3))

    # a class name claiming 10 GiB, with 9 bytes of it
    cls = (bytes([EV_CLASS]) + varint(0) + varint(zigzag(0x40)) +
           string("java/lang", 10 << 30))
    write("string-10gib.ht", header + chunk(cls, 1))

    # the runtime's name in the file header claiming 10 GiB
    write("header-string-10gib.ht",
          file_header(header_payload("clr", 10 << 30)))

    # a chunk header (its CRC right) claiming 256 MiB + 1 bytes
    write("chunk-over-limit.ht",
          header + chunk(container(C_BEGIN), 1, stored=(256 << 20) + 1,
                         raw=(256 << 20) + 1))

    # classes whose ids times 2^64/phi share their top 20 bits, so that
    # Fibonacci hashing gave them one home slot in any table of up to 2^20
    # slots: id_i = (K + i) * phi^-1 mod 2^64, one constant delta apart
    n_classes = 80000
    phi = 0x9E3779B97F4A7C15
    inverse = pow(phi, -1, 1 << 64)
    def signed(v):
        return v if v < 1 << 63 else v - (1 << 64)
    first = signed(((0xABCDE << 44) * inverse) % (1 << 64))
    delta = signed(inverse)
    classes = b"".join(
        bytes([EV_CLASS]) + varint(0) +
        varint(zigzag(first if i == 0 else delta)) + string("C")
        for i in range(n_classes))
    # an object of the last class (class id delta 0), 16 bytes, no refs
    obj = (bytes([EV_OBJECT_REFERENCES]) + varint(0) + varint(zigzag(0x1000))
           + varint(zigzag(0)) + varint(16) + varint(0) + varint(0))
    dump = container(C_BEGIN) + container(C_HEAP) + obj + container(C_END)
    write("classes-colliding.ht",
          header + chunk(classes + dump, n_classes + 4))

    write("names-invalid-utf8.ht", names_invalid_utf8())
    write("names-modified-utf8.hprof", names_modified_utf8())

    # amplifications: one event of a million null references or roots
    n = 1000000
    obj = (bytes([EV_OBJECT_REFERENCES]) + varint(0) + varint(zigzag(0x1000))
           + varint(zigzag(0x40)) + varint(16) + varint(0) + varint(n)
           + bytes(n))
    write("null-refs-1m.ht", header + chunk(
        container(C_BEGIN) + container(C_HEAP) + obj + container(C_END), 4))
    roots = bytes([EV_ROOT_REFERENCES]) + varint(0) + varint(n) + bytes(2 * n)
    write("null-roots-1m.ht", header + chunk(
        container(C_BEGIN) + roots + container(C_END), 3))
    moved = (bytes([EV_MOVED_REFERENCES]) + varint(n) +
             (varint(zigzag(16)) + varint(zigzag(0)) + varint(8)) * n)
    write("moved-1m.ht", header + chunk(
        bytes([EV_GC_STARTED]) + varint(0) + varint(1) + moved +
        bytes([EV_GC_FINISHED]), 3))
    big = 22 << 20
    roots = (bytes([EV_ROOT_REFERENCES]) + varint(0) + varint(big) +
             bytes(2 * big))
    write("roots-22m.ht", header + chunk(
        container(C_BEGIN) + roots + container(C_END), 3))
    write("deep-hierarchy.hprof", deep_hierarchy(1024))
    write("deep-references.hprof", deep_references(1024, 32))


def deep_hierarchy(depth):
    out = bytearray(b"JAVA PROFILE 1.0.2\0" + struct.pack(">IQ", 8, 0))

    def record(tag, body):
        out.extend(struct.pack(">BII", tag, 0, len(body)) + body)

    def ident(v):
        return struct.pack(">Q", v)

    def utf8(sid, text):
        record(0x01, ident(sid) + text.encode())

    def class_dump(cid, super_id, fields):
        body = (bytes([0x20]) + ident(cid) + struct.pack(">I", 1) +
                ident(super_id) + ident(0) * 5 + struct.pack(">IHH", 0, 0, 0)
                + struct.pack(">H", len(fields)))
        for sid, ftype in fields:
            body += ident(sid) + bytes([ftype])
        return body

    utf8(1, "java/lang/Object")
    utf8(2, "l")
    utf8(3, "i")
    record(0x02, struct.pack(">I", 1) + ident(0x100) + struct.pack(">I", 1)
           + ident(1))
    heap = bytearray(class_dump(0x100, 0, []))
    fields = [(2, 11), (3, 10)]  # long l, int i
    for k in range(depth):
        utf8(0x1000 + k, "C%d" % k)
        record(0x02, struct.pack(">I", 2 + k) + ident(0x10000 + k) +
               struct.pack(">I", 1) + ident(0x1000 + k))
        heap += class_dump(0x10000 + k, 0x100 if k == 0 else 0xffff + k,
                           fields)
    for k in (0, 1, 2, 511, depth - 1):
        heap += (bytes([0x21]) + ident(0x900000 + k) + struct.pack(">I", 1)
                 + ident(0x10000 + k) + struct.pack(">I", 12 * (k + 1))
                 + bytes(12 * (k + 1)))
        heap += bytes([0xff]) + ident(0x900000 + k)  # a root: unknown
    record(0x1c, bytes(heap))
    record(0x2c, b"")
    return bytes(out)


def deep_references(depth, refs):
    out = bytearray(b"JAVA PROFILE 1.0.2\0" + struct.pack(">IQ", 4, 0))

    def record(tag, body):
        out.extend(struct.pack(">BII", tag, 0, len(body)) + body)

    def ident(v):
        return struct.pack(">I", v)

    def class_dump(cid, super_id, fields):
        body = (bytes([0x20]) + ident(cid) + struct.pack(">I", 1) +
                ident(super_id) + ident(0) * 5 + struct.pack(">IHH", 0, 0, 0)
                + struct.pack(">H", len(fields)))
        for sid, ftype in fields:
            body += ident(sid) + bytes([ftype])
        return body

    def instance(obj, k, data):
        return (bytes([0x21]) + ident(obj) + struct.pack(">I", 1) +
                ident(0x10000 + k) + struct.pack(">I", len(data)) + data)

    def fields_of(k, points):
        # the instance's fields: class k's own first, then each super's;
        # points maps (class, field) to the object it refers to
        data = bytearray()
        for c in range(k, -1, -1):
            for f in range(refs):
                data += ident(points.get((c, f), 0))
        return bytes(data)

    record(0x01, ident(1) + b"java/lang/Object")
    record(0x01, ident(2) + b"r")
    record(0x02, struct.pack(">I", 1) + ident(0x100) + struct.pack(">I", 1)
           + ident(1))
    heap = bytearray(class_dump(0x100, 0, []))
    for k in range(depth):
        record(0x01, ident(0x1000 + k) + b"R%d" % k)
        record(0x02, struct.pack(">I", 2 + k) + ident(0x10000 + k) +
               struct.pack(">I", 1) + ident(0x1000 + k))
        heap += class_dump(0x10000 + k, 0x100 if k == 0 else 0xffff + k,
                           [(2, 2)] * refs)
    points = {0: {}, 1: {}, 2: {(2, 0): 0x900000, (0, refs - 1): 0x900001},
              40: {(40, 0): 0x900002, (20, 4): 0x900000}}
    for k, p in points.items():
        heap += instance(0x900000 + k, k, fields_of(k, p))
        heap += bytes([0xff]) + ident(0x900000 + k)  # a root: unknown
    for k in range(depth):
        heap += instance(0x800000 + k, k, b"")
    record(0x1c, bytes(heap))
    record(0x2c, b"")
    return bytes(out)


if __name__ == "__main__":
    main()
