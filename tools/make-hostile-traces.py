#!/usr/bin/env python3
# make-hostile-traces.py - writes testdata/hostile/*.ht: small .ht files
# whose checksums are right and whose content lies, as a damaged or
# malicious producer would write them (heaptrace(5), LIMITS). The
# command-level cases diag-* feed them to heaptrace and check that each is
# refused with a clear message before anything is allocated for it.
#
# Written from the layout in heaptrace(5), independently of the library's
# writer. Run from anywhere: python3 tools/make-hostile-traces.py
import os
import struct
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "testdata", "hostile")

EV_CLASS, EV_BEGIN_CONTAINER, EV_OBJECT_REFERENCES = 1, 10, 12
C_BEGIN, C_HEAP = 1, 15


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
    data = s.encode()
    return varint((len(data) if claimed is None else claimed) + 1) + data


def file_header(payload):
    fixed = b"\x89HTRACE\n" + struct.pack("<II", 1, len(payload))
    crc = zlib.crc32(fixed + payload)
    return fixed + payload + struct.pack("<I", crc)


def header_payload(runtime="hostile", claimed=None):
    # runtime, runtime_version, pointer size, flags, command line, metadata
    return (string(runtime, claimed) + varint(0) + varint(8) + varint(0) +
            varint(0) + varint(0))


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


if __name__ == "__main__":
    main()
