#!/usr/bin/env python3
"""check-diagnostics.py [SOURCE_ROOT] - fails when a message the code can
print is missing from the catalog: DIAGNOSTICS of heaptrace(1) (the
messages every command shares) and of each command's page
(man/heaptrace-*.1), or ERRORS of libheaptrace(3) for the recording API.

Every call that makes a message (error_msg, warning_msg, usage_error, the
err_* of src/lib/common/error.h, and the recorders' own) is found in src/, its
format string cut at each conversion (%s, %llu, ...), and each piece of
two words or more must appear in the rendered catalog. A piece the
catalog writes with a placeholder in it ("not KIND" for "not null") or
a message no command can show (a caller's mistake inside the library)
is listed in KNOWN below, with the reason.
"""
import glob
import os
import re
import subprocess
import sys

# the functions whose string arguments are messages
CALLS = r"\b(error_msg|warning_msg|usage_error|err_plain|err_at_offset|" \
        r"err_at_line|err_sys|record_error|fail|say|damage|hprof_fail|" \
        r"hprof_damage|" \
        r"fail_at|bad)\s*\("

# (file, piece): why it is not in the catalog word for word
KNOWN = {
    ("src/cli/parse-options.c", "unknown option '-"):
        "cataloged as unknown option 'OPTION'",
    ("src/lib/read/yaml_fields.c", "must be a number, not null"):
        "cataloged as 'FIELD' must be a number, not KIND",
    ("src/lib/read/yaml_fields.c", "must be a number, not a string"):
        "cataloged as 'FIELD' must be a number, not KIND",
    ("src/lib/read/yaml_read.c", "no input"):
        "a caller's mistake: no command opens YAML without a stream",
    ("src/lib/read/yaml_write.c", "is NULL"):
        "a caller's mistake: readers never give an event without its arrays",
    ("src/lib/read/yaml_write.c", "header: metadata is NULL"):
        "a caller's mistake: readers never give a header without metadata",
    ("src/analysis/heap.c", "no dump %"):
        "a caller's mistake: the commands ask only for dumps >= -2",
    ("src/analysis/paths.c", "in the dump"):
        "a caller's mistake: paths are asked only for an object found",
}

CONVERSION = re.compile(
    r"%[-+ #0-9.*]*(?:hh|h|ll|l|z|j|t)?[diouxXscpfegEGm%]|\\n")
LITERALS = re.compile(
    r'"(?:[^"\\]|\\.)*"(?:\s*(?:PRI[a-zA-Z0-9]+\s*)?"(?:[^"\\]|\\.)*")*')


def rendered(page, heading):
    """The text of the section heading of page, on one line."""
    text = subprocess.run(
        ["sh", "-c", f"groff -man -Tutf8 -P-cbou -rLL=3000n -rHY=0 '{page}'"],
        capture_output=True, text=True, check=True).stdout
    for a, b in (("\u2010", "-"), ("\u2212", "-"), ("\u2018", "'"),
                 ("\u2019", "'"), ("\u201c", '"'), ("\u201d", '"')):
        text = text.replace(a, b)
    # headings start at the margin, everything else is indented
    lines = text.split("\n")
    if heading not in lines:
        sys.exit(f"{page}: no {heading} section")
    start = lines.index(heading) + 1
    end = start
    while end < len(lines) and not lines[end][:1].strip():
        end += 1
    return " " + re.sub(r"\s+", " ", " ".join(lines[start:end])) + " "


def arguments(src, at):
    """The text between the parenthesis opened before at and its match."""
    depth, j = 1, at
    while j < len(src) and depth:
        c = src[j]
        if c == '"':
            j += 1
            while src[j] != '"':
                j += 2 if src[j] == "\\" else 1
        elif c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        j += 1
    return src[at:j - 1]


def pieces(args):
    """The parts of the message formats in args, without conversions."""
    for group in LITERALS.findall(args):
        # "a %" PRIu64 " b" -> a %d b
        fmt = re.sub(r'"\s*(PRI[a-zA-Z0-9]+)?\s*"',
                     lambda m: "d" if m.group(1) else "", group)[1:-1]
        for piece in CONVERSION.split(fmt):
            piece = piece.strip(" :;,.()'").replace('\\"', '"')
            if len(piece) >= 6 and " " in piece:
                yield piece


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    os.chdir(root)
    pages = sorted(glob.glob("man/heaptrace*.1"))
    catalog = "".join(rendered(page, "DIAGNOSTICS") for page in pages)
    catalog += rendered("man/libheaptrace.3", "ERRORS")
    missing = 0
    sources = sorted(f for f in glob.glob("src/**/*.c", recursive=True)
                     if not f.startswith("src/tools/"))
    for path in sources:
        with open(path, encoding="utf-8") as f:
            src = f.read()
        for call in re.finditer(CALLS, src):
            for piece in pieces(arguments(src, call.end())):
                if piece in catalog or (path, piece) in KNOWN:
                    continue
                line = src.count("\n", 0, call.start()) + 1
                print(f"{path}:{line}: not in the catalog: {piece!r}")
                missing += 1
    print(f"{len(sources)} files: {missing} message parts missing "
          "from the catalog")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
