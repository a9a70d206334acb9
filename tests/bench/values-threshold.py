#!/usr/bin/env python3
"""values-threshold.py [--whole BYTES] DUMP.hprof... - what the threshold
of whole arrays (HT_VALUES_WHOLE_MAX in include/heaptrace/trace.h, 256
bytes) buys and costs on real heap dumps, for thresholds of 64, 256, 1024
and 4096 bytes.

A trace keeps a primitive array of at most the threshold's bytes whole,
and of a longer one its first 64 bytes and a 64-bit hash of all. For each
dump and threshold it prints:
  - whole: the arrays kept whole, in number and in share of the arrays'
    bytes, and of the duplicate copies (arrays equal to an earlier one,
    what `waste` counts) those whose equality is exact because both are
    whole, rather than resting on a hash;
  - stored: the bytes the trace's array contents take (whole contents, or
    prefix and hash), raw and compressed with zlib at its default level
    in 1 MiB pieces (about what a .ht's chunks do with them), per object.

With --whole, it prints only the number of arrays a threshold of BYTES
keeps whole, for a benchmark to hold heaptrace's own count to it.

It reads the dump itself (the HPROF manual's record layouts, not
heaptrace's reader) and keeps only a digest of each array, so that a dump
of 10 million objects goes through in a minute or so. The compressed
figure is an estimate of what the values add to a .ht: the contents are
compressed alone here, among the objects' other events there.
"""
import hashlib
import mmap
import struct
import sys
import zlib

THRESHOLDS = (64, 256, 1024, 4096)
PREFIX = 64          # HT_VALUES_PREFIX
HASH_BYTES = 8
PIECE = 1 << 20      # bytes compressed together, about a chunk's worth

# element width of each basic type but 2 (an object, which takes the id
# size); root sub-records: bytes after the tag and the object id (None:
# one more id)
WIDTH = {4: 1, 5: 2, 6: 4, 7: 8, 8: 1, 9: 2, 10: 4, 11: 8}
ROOT_TAIL = {0xFF: 0, 0x01: None, 0x02: 8, 0x03: 8, 0x04: 4, 0x05: 0,
             0x06: 4, 0x07: 0, 0x08: 8}
U4 = struct.Struct(">I")
U2 = struct.Struct(">H")


class Stored:
    """What the trace stores of the arrays at one threshold."""

    def __init__(self, threshold):
        self.threshold = threshold
        self.raw = 0
        self.packed = 0
        self.piece = bytearray()
        self.z = zlib.compressobj()

    def add(self, width, contents):
        if len(contents) <= self.threshold:
            kept = contents
        else:
            kept = contents[:PREFIX // width * width] + bytes(HASH_BYTES)
        self.raw += len(kept)
        self.piece += kept
        if len(self.piece) >= PIECE:
            self.flush()

    def flush(self):
        if self.piece:
            z = zlib.compressobj()
            self.packed += len(z.compress(bytes(self.piece)) + z.flush())
            self.piece = bytearray()


class Arrays:
    """The primitive arrays of one dump: digests, sizes, what is stored."""

    def __init__(self):
        self.objects = 0
        self.sizes = []          # bytes of each array's contents
        self.first = {}          # digest -> index of its first array
        self.copies = []         # indexes of arrays equal to an earlier one
        self.stored = [Stored(t) for t in THRESHOLDS]

    def add(self, elem_type, contents):
        digest = hashlib.blake2b(bytes([elem_type]) + contents,
                                 digest_size=16).digest()
        i = len(self.sizes)
        self.sizes.append(len(contents))
        if digest in self.first:
            self.copies.append(i)
        else:
            self.first[digest] = i
        for s in self.stored:
            s.add(WIDTH[elem_type], contents)


def walk(path, arrays):
    with open(path, "rb") as f:
        data = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    end = data.find(b"\0")
    n = U4.unpack_from(data, end + 1)[0]
    pos = end + 13
    while pos + 9 <= len(data):
        tag = data[pos]
        length = U4.unpack_from(data, pos + 5)[0]
        if tag in (0x0C, 0x1C):
            heap(data, n, pos + 9, pos + 9 + length, arrays)
        pos += 9 + length


def heap(data, n, at, end, arrays):
    while at < end:
        tag = data[at]
        at += 1
        if tag == 0x21:
            arrays.objects += 1
            at += 2 * n + 8 + U4.unpack_from(data, at + 2 * n + 4)[0]
        elif tag == 0x22:
            arrays.objects += 1
            at += 2 * n + 8 + U4.unpack_from(data, at + n + 4)[0] * n
        elif tag == 0x23:
            arrays.objects += 1
            count = U4.unpack_from(data, at + n + 4)[0]
            t = data[at + n + 8]
            start = at + n + 9
            size = count * WIDTH[t]
            arrays.add(t, little_endian(data[start:start + size], WIDTH[t]))
            at = start + size
        elif tag == 0x20:
            arrays.objects += 1
            at = class_dump(data, n, at)
        elif tag in ROOT_TAIL:
            tail = ROOT_TAIL[tag]
            at += n + (n if tail is None else tail)
        else:
            sys.exit(f"unknown heap sub-record 0x{tag:02x} at byte {at - 1}")


def little_endian(big, width):
    """Elements as the trace stores them: each little-endian."""
    if width == 1:
        return big
    out = bytearray(big)
    for b in range(width):
        out[b::width] = big[width - 1 - b::width]
    return bytes(out)


def class_dump(data, n, at):
    def width(t):
        return n if t == 2 else WIDTH[t]

    at += 7 * n + 8
    count = U2.unpack_from(data, at)[0]     # the constant pool
    at += 2
    for _ in range(count):
        at += 3 + width(data[at + 2])
    count = U2.unpack_from(data, at)[0]     # static fields
    at += 2
    for _ in range(count):
        at += n + 1 + width(data[at + n])
    count = U2.unpack_from(data, at)[0]     # instance fields
    return at + 2 + count * (n + 1)


def report(path, arrays):
    total = sum(arrays.sizes)
    print(f"{path}: {arrays.objects} objects, {len(arrays.sizes)} "
          f"primitive arrays of {total} bytes, "
          f"{len(arrays.copies)} of them copies of another")
    print(f"  {'threshold':>9} {'whole':>8} {'of bytes':>8} "
          f"{'exact copies':>12} {'stored':>10} {'zlib':>10} "
          f"{'zlib B/obj':>10}")
    for s in arrays.stored:
        s.flush()
        whole = sum(1 for b in arrays.sizes if b <= s.threshold)
        whole_bytes = sum(b for b in arrays.sizes if b <= s.threshold)
        exact = sum(1 for i in arrays.copies
                    if arrays.sizes[i] <= s.threshold)
        print(f"  {s.threshold:>9} {pct(whole, len(arrays.sizes)):>8} "
              f"{pct(whole_bytes, total):>8} "
              f"{pct(exact, len(arrays.copies)):>12} {s.raw:>10} "
              f"{s.packed:>10} {s.packed / max(arrays.objects, 1):>10.3f}")


def pct(part, whole):
    return f"{100.0 * part / whole:.1f}%" if whole else "-"


def main():
    args = sys.argv[1:]
    whole = None
    if args[:1] == ["--whole"] and len(args) > 1:
        whole, args = int(args[1]), args[2:]
    if not args:
        sys.exit("usage: values-threshold.py [--whole BYTES] DUMP.hprof...")
    for path in args:
        arrays = Arrays()
        walk(path, arrays)
        if whole is None:
            report(path, arrays)
        else:
            print(sum(1 for b in arrays.sizes if b <= whole))


if __name__ == "__main__":
    main()
