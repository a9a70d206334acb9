#!/usr/bin/env python3
"""hprof-strings.py [--duplicates] DUMP.hprof - the text of every
java.lang.String of a Java heap dump, one "ID<TAB>TEXT" line each in id
order, the text as a JSON string; with --duplicates, the Strings of equal
text instead, as one JSON document (duplicates() says what it holds).

An independent reading of the HPROF format (the JDK's heapDumper.cpp
comment and its hprof manual, not heaptrace's code), to check what
heaptrace's reader and `object` say of Strings (issue 18's values) and,
later, the duplicate strings `waste` counts. A String's text is in the
array its `value` field holds: a byte[] in Latin-1 (`coder` 0) or UTF-16
in the machine's order, little-endian on the JVMs heaptrace runs on
(`coder` 1), or a char[] before JDK 9. Unpaired surrogates and U+0000
become U+FFFD, as heaptrace writes them in a C string.
"""
import json
import struct
import sys

# basic types: (struct format, size); 2 (object) takes the id size
TYPES = {4: ("B", 1), 5: ("H", 2), 6: ("f", 4), 7: ("d", 8),
         8: ("b", 1), 9: ("h", 2), 10: ("i", 4), 11: ("q", 8)}
# root sub-records: bytes after the tag and the object id
ROOT_TAIL = {0xFF: 0, 0x01: None, 0x02: 8, 0x03: 8, 0x04: 4, 0x05: 0,
             0x06: 4, 0x07: 0, 0x08: 8}


class Dump:
    def __init__(self, data):
        end = data.index(b"\0")
        self.id_size = struct.unpack(">I", data[end + 1:end + 5])[0]
        self.data = data
        self.pos = end + 13
        self.names = {}          # string id -> text
        self.class_names = {}    # class id -> name
        self.classes = {}        # class id -> (super, [(name id, type)])
        self.instances = {}      # object id -> (class id, field bytes)
        self.arrays = {}         # object id -> (type, element bytes)
        self.object_arrays = {}  # object id -> (offset of elements, count)

    def ident(self, at):
        fmt = ">I" if self.id_size == 4 else ">Q"
        return struct.unpack(fmt, self.data[at:at + self.id_size])[0]

    def width(self, t):
        return self.id_size if t == 2 else TYPES[t][1]

    def read(self):
        data = self.data
        while self.pos + 9 <= len(data):
            tag = data[self.pos]
            length = struct.unpack(">I", data[self.pos + 5:self.pos + 9])[0]
            body = self.pos + 9
            if tag == 0x01:
                sid = self.ident(body)
                text = data[body + self.id_size:body + length]
                self.names[sid] = text.decode("utf-8", "replace")
            elif tag == 0x02:
                cls = self.ident(body + 4)
                name = self.ident(body + 8 + self.id_size)
                self.class_names[cls] = name
            elif tag in (0x0C, 0x1C):
                self.heap(body, body + length)
            self.pos = body + length

    def heap(self, at, end):
        n = self.id_size
        while at < end:
            tag = self.data[at]
            at += 1
            if tag in ROOT_TAIL:
                tail = ROOT_TAIL[tag]
                at += n + (n if tail is None else tail)
            elif tag == 0x20:
                at = self.class_dump(at)
            elif tag == 0x21:
                obj, cls = self.ident(at), self.ident(at + n + 4)
                size = struct.unpack(">I", self.data[at + 2 * n + 4:
                                                     at + 2 * n + 8])[0]
                start = at + 2 * n + 8
                self.instances[obj] = (cls, self.data[start:start + size])
                at = start + size
            elif tag == 0x22:
                count = struct.unpack(">I", self.data[at + n + 4:
                                                      at + n + 8])[0]
                self.object_arrays[self.ident(at)] = (at + 2 * n + 8, count)
                at += 2 * n + 8 + count * n
            elif tag == 0x23:
                obj = self.ident(at)
                count = struct.unpack(">I", self.data[at + n + 4:
                                                      at + n + 8])[0]
                t = self.data[at + n + 8]
                start = at + n + 9
                size = count * self.width(t)
                self.arrays[obj] = (t, self.data[start:start + size])
                at = start + size
            else:
                sys.exit(f"unknown heap sub-record 0x{tag:02x}")

    def class_dump(self, at):
        n = self.id_size
        cls, sup = self.ident(at), self.ident(at + n + 4)
        at += 7 * n + 8
        pool = struct.unpack(">H", self.data[at:at + 2])[0]
        at += 2
        for _ in range(pool):
            t = self.data[at + 2]
            at += 3 + self.width(t)
        statics = struct.unpack(">H", self.data[at:at + 2])[0]
        at += 2
        for _ in range(statics):
            t = self.data[at + n]
            at += n + 1 + self.width(t)
        count = struct.unpack(">H", self.data[at:at + 2])[0]
        at += 2
        fields = []
        for _ in range(count):
            fields.append((self.ident(at), self.data[at + n]))
            at += n + 1
        self.classes[cls] = (sup, fields)
        return at

    def elements(self, obj):
        """An object array's element ids (0 for null)."""
        at, count = self.object_arrays[obj]
        return [self.ident(at + i * self.id_size) for i in range(count)]

    def fields(self, cls, raw):
        """An instance's values by field name, its class's own first."""
        out, at = {}, 0
        while cls:
            sup, fields = self.classes[cls]
            for name, t in fields:
                w = self.width(t)
                if t == 2:
                    value = int.from_bytes(raw[at:at + w], "big")
                else:
                    value = struct.unpack(">" + TYPES[t][0],
                                          raw[at:at + w])[0]
                out.setdefault(self.names.get(name, "?"), value)
                at += w
            cls = sup
        return out


def text_of(units, utf16, big):
    if not utf16:
        return "".join("\ufffd" if b == 0 else chr(b) for b in units)
    order = "big" if big else "little"
    codes = [int.from_bytes(units[i:i + 2], order)
             for i in range(0, len(units) - 1, 2)]
    out, i = [], 0
    while i < len(codes):
        c = codes[i]
        if 0xD800 <= c <= 0xDBFF and i + 1 < len(codes) and \
                0xDC00 <= codes[i + 1] <= 0xDFFF:
            c = 0x10000 + ((c - 0xD800) << 10) + (codes[i + 1] - 0xDC00)
            i += 1
        elif 0xD800 <= c <= 0xDFFF or c == 0:
            c = 0xFFFD
        out.append(chr(c))
        i += 1
    return "".join(out)


def align8(n):
    return (n + 7) // 8 * 8


def instance_size(dump, cls):
    """A String's size as HotSpot lays it out with compressed oops (the
    default under 32 GB, and what the dumps checked with this have): a
    12-byte header, 4-byte references, the end rounded up to 8. String's
    fields (int, byte, boolean and a reference) leave no gap to fill."""
    size = 12
    while cls:
        sup, fields = dump.classes[cls]
        size += sum(4 if t == 2 else TYPES[t][1] for _, t in fields)
        cls = sup
    return align8(size)


def array_size(dump, t, raw):
    """Elements from byte 16 (compressed oops), rounded up to 8."""
    return align8(16 + len(raw))


def strings_of(dump, string):
    """The Strings of the dump (instances of the classes in string) whose
    value array the dump holds, in id order: (id, class, fields, array
    type, array bytes)."""
    for obj in sorted(dump.instances):
        cls, raw = dump.instances[obj]
        if cls not in string:
            continue
        f = dump.fields(cls, raw)
        if f.get("value", 0) not in dump.arrays:
            continue
        t, units = dump.arrays[f["value"]]
        yield obj, cls, f, t, units


def duplicates(dump, string):
    """Strings whose value arrays have equal type, coder and bytes, in
    groups of two or more. Per group: its text (as text_of gives it), how
    many Strings, how many distinct arrays among them, and the bytes that
    keeping one String and one array would save: the Strings' sizes and
    their distinct arrays' less one of each. With the totals: Strings
    read, groups, Strings in them, copies (Strings beyond one a group),
    wasted bytes."""
    groups = {}
    examined = 0
    for obj, cls, f, t, units in strings_of(dump, string):
        examined += 1
        coder = 2 if t == 5 else f.get("coder", 0)
        groups.setdefault((t, coder, bytes(units)), []).append(
            (obj, cls, f["value"]))
    out = []
    for (t, coder, units), members in groups.items():
        if len(members) < 2:
            continue
        each = instance_size(dump, members[0][1])
        array = array_size(dump, t, units)
        arrays = len({value for _, _, value in members})
        out.append({
            "text": text_of(units, coder != 0, t == 5),
            "count": len(members),
            "arrays": arrays,
            "wasted": (len(members) - 1) * each + (arrays - 1) * array,
        })
    out.sort(key=lambda g: (-g["wasted"], -g["count"], g["text"]))
    return {
        "strings": examined,
        "groups": len(out),
        "objects": sum(g["count"] for g in out),
        "copies": sum(g["count"] - 1 for g in out),
        "wasted": sum(g["wasted"] for g in out),
        "list": out,
    }


def main():
    args = sys.argv[1:]
    dupes = args[:1] == ["--duplicates"]
    if dupes:
        args = args[1:]
    dump = Dump(open(args[0], "rb").read())
    dump.read()
    string = [c for c, name in dump.class_names.items()
              if dump.names.get(name) == "java/lang/String"]
    if dupes:
        json.dump(duplicates(dump, string), sys.stdout, ensure_ascii=False,
                  indent=1)
        print()
        return
    for obj, cls, f, t, units in strings_of(dump, string):
        text = text_of(units, t == 5 or f.get("coder") == 1, t == 5)
        print(f"0x{obj:x}\t{json.dumps(text, ensure_ascii=False)}")


if __name__ == "__main__":
    main()
