#!/usr/bin/env python3
"""check-strings.py - the strings a recorder's --values kept, checked
against the text the recorded program put in them.

usage: check-strings.py [--label TEXT] [--dump N] HEAPTRACE TRACE CLASS
                        FIELD=TEXT...

CLASS is the class of one object of the program (the first `top` lists)
whose reference field FIELD holds a string of text TEXT (UTF-8 here). For
each, `heaptrace object --format json` of the string must show, as
heaptrace(5) says a trace keeps a string's UTF-16 units:
  - up to 128 units (256 bytes): the whole text, its length in units, and
    no hash;
  - longer: the first 32 units (64 bytes) as its text, its length, and
    the 64-bit FNV-1a hash of all its units' little-endian bytes,
    computed here from TEXT, not taken from heaptrace.
With --none instead of FIELD=TEXT pairs, the trace must keep no text:
each string CLASS references shows none. Exits 1 on a mismatch, naming it.
"""
import argparse
import json
import subprocess
import sys

WHOLE_MAX = 256
PREFIX = 64


def fnv1a64(data):
    h = 0xcbf29ce484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def run_json(*args):
    out = subprocess.run(list(args), capture_output=True, text=True)
    if out.returncode != 0:
        sys.exit(f"{' '.join(args)}: status {out.returncode}: {out.stderr}")
    return json.loads(out.stdout)


def holder_id(heaptrace, trace, dump, cls):
    top = run_json(heaptrace, "top", *dump, "-n", "1000000", "--format",
                   "json", trace)
    ids = [o["id"] for o in top["objects"] if o["class"] == cls]
    if not ids:
        sys.exit(f"no {cls} object in dump {dump} of {trace}")
    return ids[0]


def referents(heaptrace, trace, dump, holder):
    """The holder's references by field name (the step's last word)."""
    obj = run_json(heaptrace, "object", *dump, "--format", "json", trace,
                   holder)
    return {(r.get("step") or "").rsplit(".", 1)[-1]: r
            for r in obj["references"]}


def expected(text):
    units = text.encode("utf-16-le")
    n = len(units) // 2
    if len(units) <= WHOLE_MAX:
        return text, n, None
    return units[:PREFIX].decode("utf-16-le"), n, f"0x{fnv1a64(units):x}"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default="strings")
    ap.add_argument("--dump", help="the dump (default: the last)")
    ap.add_argument("--none", action="store_true")
    ap.add_argument("heaptrace")
    ap.add_argument("trace")
    ap.add_argument("cls")
    ap.add_argument("pairs", nargs="*")
    a = ap.parse_args()
    dump = ["--dump", a.dump] if a.dump else []
    refs = referents(a.heaptrace, a.trace, dump,
                     holder_id(a.heaptrace, a.trace, dump, a.cls))
    bad = 0
    if a.none:
        for field, r in sorted(refs.items()):
            obj = run_json(a.heaptrace, "object", *dump, "--format",
                           "json", a.trace, r["id"])
            if obj.get("text") is not None or obj.get("array") is not None:
                print(f"{a.label}: {a.cls}.{field} keeps a text: "
                      f"{obj.get('text')!r}")
                bad += 1
        if not refs:
            print(f"{a.label}: {a.cls} references nothing")
            return 1
        if not bad:
            print(f"{a.label}: {len(refs)} strings without text")
        return 1 if bad else 0
    for pair in a.pairs:
        field, text = pair.split("=", 1)
        r = refs.get(field)
        if r is None:
            print(f"{a.label}: {a.cls} has no reference field {field}")
            bad += 1
            continue
        obj = run_json(a.heaptrace, "object", *dump, "--format", "json",
                       a.trace, r["id"])
        want_text, want_len, want_hash = expected(text)
        arr = obj.get("array") or {}
        got = (obj.get("text"), obj.get("text_length"), arr.get("type"),
               arr.get("length"), arr.get("hash"))
        want = (want_text, want_len, "char", want_len, want_hash)
        if got != want:
            print(f"{a.label}: {a.cls}.{field} ({r['id']}): "
                  f"text, length, type, array length, hash {got!r}, "
                  f"not {want!r}")
            bad += 1
        else:
            print(f"{a.label}: {a.cls}.{field}: {want_len} units"
                  f"{', prefix and hash' if want_hash else ', whole'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
