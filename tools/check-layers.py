#!/usr/bin/env python3
"""check-layers.py [SOURCE_ROOT] - every internal include and every link
of src/ stays within the layers of doc/design.md section 7: a folder
includes and links only itself and the folders below it, so that each
layer can be built, linked and tested without the ones above. SOURCE_ROOT
is the tree holding src/, by default the one this script lives in.

What is read, and why each:
  "folder/file.h"        internal headers, named with their folder from
                         src/ (a name without a folder is reported too);
  <heaptrace/...>        the public headers: record.h is the shim, what a
                         recorder links; trace.h the reading API, which a
                         recorder does not link (the shim carries no
                         reader), so a recorder that includes it compiles
                         against functions it cannot call;
  <folder/...>           an internal header written as a system one,
                         which hides it from the include rule;
  meson.build            `dependencies :`, `link_with :`, `link_whole :`
                         of each target of src/: a folder that links a
                         layer it may not include has the same fault in
                         its binary that an include would show in its
                         source. Other <...> includes are system headers
                         and are ignored.
Each recorder's folder (recorders/mono, recorders/jvm, recorders/clr) is a
room of its own: it speaks to one runtime and shares with the others only
through recorders/core, so one recorder including another would tie two
runtimes' builds together.

Exits 1 naming each include or link that crosses a layer, 2 on a wrong
command line; tests/layers/ holds a tree with one fault of each kind that
the test `layers-selftest` checks this script reports.
"""
import os
import re
import sys

RECORD_H = "<heaptrace/record.h>"
TRACE_H = "<heaptrace/trace.h>"

# What a recorder's room may include and link besides itself: the shim
# and the helpers, and what the recorders share (recorders/core). Not
# lib/common: the recorders see only the shim (doc/design.md section 7).
RECORDER = {"util", "lib/record", RECORD_H, "recorders/core"}

# What each folder of src/ may include and link besides itself (doc/design.md
# section 7): a folder, a header named by its path, or a public header.
ALLOWED = {
    "util": set(),
    "lib/common": {"util", RECORD_H, TRACE_H},
    "lib/record": {"util", "lib/common", RECORD_H, TRACE_H},
    "lib/read": {"util", "lib/common", TRACE_H},
    "analysis": {"util", "lib/common", "lib/read", TRACE_H},
    "recorders": RECORDER,
    "recorders/core": RECORDER - {"recorders/core"},
    "recorders/mono": RECORDER,
    "recorders/jvm": RECORDER,
    "recorders/clr": RECORDER,
    # the dump modes and the option grammar heaptrace record shares with
    # the recorders
    "cli": {"util", "lib/common", "lib/record", "lib/read", "analysis",
            "recorders/core/options.h", RECORD_H, TRACE_H},
    "tools": {"util", "lib/common", "lib/record", RECORD_H},
}

# The first part of an internal header's path: what marks <util/x.h> as one
# of ours written as a system header.
TOP = {layer.split("/")[0] for layer in ALLOWED}

# A target of meson whose links are checked, and the keywords naming them.
TARGET = re.compile(r"\b(static_library|shared_library|shared_module|library"
                    r"|both_libraries|executable|declare_dependency)\s*\(")
LINK_KEY = re.compile(r"\b(dependencies|link_with|link_whole)\s*:")
ASSIGN = re.compile(r"^\s*([A-Za-z_]\w*)\s*=\s*(.*)", re.S)
WORDS = {"true", "false", "if", "else", "and", "or", "not"}


def layer_of(path):
    """The layer of a path under src/, None outside them. Each folder
    under recorders/ is a room of its own, even one not yet named here."""
    parts = path.split("/")
    if parts[0] == "recorders" and len(parts) > 2:
        return "recorders/" + parts[1]
    for layer in sorted(ALLOWED, key=len, reverse=True):
        if path == layer or path.startswith(layer + "/"):
            return layer
    return None


def allowed(own, target):
    """Whether own may use target: a path under src/ or a public header."""
    if target in ALLOWED.get(own, RECORDER):
        return True
    if target.startswith("<"):
        return False
    to = layer_of(target)
    return to == own or to in ALLOWED.get(own, RECORDER)


def check_includes(root, rel, own, report):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = re.match(r'\s*#\s*include\s+(["<])([^">]+)[">]', line)
            if not m or m.group(2) == "ht_config.h":
                continue
            quoted, target = m.group(1) == '"', m.group(2)
            where = f"{rel}:{n}:"
            if not quoted:
                if target.startswith("heaptrace/"):
                    if not allowed(own, f"<{target}>"):
                        report(f"{where} {own} may not include <{target}>")
                    continue
                if target.split("/")[0] not in TOP or "/" not in target:
                    continue  # a system header
                report(f"{where} <{target}> is internal: include it as "
                       f'"{target}"')
            elif "/" not in target:
                report(f"{where} {target} is not named with its folder")
                continue
            if not allowed(own, target):
                report(f"{where} {own} may not include {target}")


def uncommented(text):
    """A meson.build without its comments, its lines where they were."""
    out = []
    for line in text.split("\n"):
        quoted = False
        for i, c in enumerate(line):
            if c == "'":
                quoted = not quoted
            elif c == "#" and not quoted:
                line = line[:i]
                break
        out.append(line)
    return "\n".join(out)


def calls(text):
    """Each target call of a meson.build: its text inside the parentheses,
    the variable assigned, the line it starts on."""
    for m in TARGET.finditer(text):
        depth, i = 1, m.end()
        while i < len(text) and depth:
            c = text[i]
            if c == "'":
                i = text.index("'", i + 1)
            elif c in "([":
                depth += 1
            elif c in ")]":
                depth -= 1
            i += 1
        start = text.rfind("\n", 0, m.start()) + 1
        a = ASSIGN.match(text[start:m.start()] + "x")
        yield (text[m.end():i - 1], a.group(1) if a else None,
               text.count("\n", 0, m.start()) + 1)


def linked(args):
    """The variables an argument list names under dependencies, link_with
    and link_whole: a list or a single value, method calls on a variable
    (mono_dep.partial_dependency(...)) counted as the variable."""
    args = re.sub(r"'[^']*'", "''", args)
    args = re.sub(r"\.\s*\w+\s*\([^()]*\)", "", args)
    for m in LINK_KEY.finditer(args):
        value = args[m.end():]
        # up to the next keyword argument of the call
        nxt = re.search(r",\s*\w+\s*:", value)
        value = value[:nxt.start()] if nxt else value
        for name in re.findall(r"\b[A-Za-z_]\w*\b", value):
            if name not in WORDS:
                yield m.group(1), name


def meson_files(src):
    for folder, dirs, files in os.walk(src):
        dirs.sort()
        if "meson.build" in files:
            yield os.path.join(folder, "meson.build")


def check_links(root, report):
    """The links of each target of src/ against the layer of each variable
    it links, a variable's layer being the folder whose meson.build makes
    it. A variable made where no layer is (src/lib's lib_dep) carries the
    layers of what it names; one not made in src/ (zlib_dep, a
    dependency() of the system) is outside the layers."""
    src = os.path.join(root, "src")
    made = {}   # variable -> the layers it stands for
    texts = {}
    for path in meson_files(src):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8") as f:
            texts[rel] = uncommented(f.read())
    for rel, text in texts.items():
        own = layer_of(os.path.relpath(os.path.dirname(rel), "src"))
        for line in text.split("\n"):
            a = ASSIGN.match(line)
            if not a or re.match(r"\s*(dependency|disabler|find_program"
                                 r"|import|files)\s*\(", a.group(2)):
                continue
            made[a.group(1)] = {own} if own else set()
        if own is None:
            for args, var, _ in calls(text):
                if var:
                    made[var] = set()
                    for _, name in linked(args):
                        made[var] |= made.get(name, set())
    for rel, text in texts.items():
        own = layer_of(os.path.relpath(os.path.dirname(rel), "src"))
        if own is None:
            continue
        for args, var, line in calls(text):
            for key, name in linked(args):
                for to in sorted(made.get(name, set())):
                    if to != own and not allowed(own, to):
                        report(f"{rel}:{line}: {own} may not link {name} "
                               f"({to}) by {key}")


def main(argv):
    if len(argv) > 2 or len(argv) == 2 and argv[1].startswith("-"):
        print("usage: check-layers.py [SOURCE_ROOT]", file=sys.stderr)
        return 2
    root = argv[1] if len(argv) == 2 else \
        os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    src = os.path.join(root, "src")
    if not os.path.isdir(src):
        print(f"check-layers.py: {root} holds no src/", file=sys.stderr)
        return 2
    faults = []
    for folder, dirs, files in os.walk(src):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            rel = os.path.relpath(os.path.join(folder, name), root)
            own = layer_of(os.path.relpath(rel, "src"))
            if own is None:
                faults.append(f"{rel}: in no layer of doc/design.md section 7")
                continue
            check_includes(root, rel, own, faults.append)
    check_links(root, faults.append)
    for fault in faults:
        print(fault)
    print(f"{len(faults)} includes or links cross a layer" if faults
          else "layers kept")
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
