#!/usr/bin/env python3
"""check-man-help.py HEAPTRACE [SOURCE_ROOT] - fails when the man pages and
--help disagree about the commands.

Every command that `heaptrace --help` lists must have its page,
man/heaptrace-COMMAND.1, whose NAME line says what the list says of it;
its --help must end with the line that names that page; every long option
its --help shows must be in the page's OPTIONS (its own, or in the pointer
to the options the analyses share); and heaptrace(1) must name the page in its
COMMANDS and SEE ALSO. A command added to the dispatch table without a
page, or an option added without a word in the page, fails here.
"""
import os
import re
import subprocess
import sys


def run(*args):
    return subprocess.run(args, capture_output=True, text=True,
                          check=True).stdout


def rendered(page):
    """The page as a reader sees it, without hyphenation or special dashes."""
    text = run("groff", "-man", "-Tutf8", "-P-cbou", "-rLL=3000n", "-rHY=0",
               page)
    return text.replace("\u2010", "-").replace("\u2212", "-")


def section(text, heading):
    """The section heading of a rendered page (headings are at the margin,
    the rest indented)."""
    m = re.search(rf"^{heading}\n((?:[ \t].*\n|\n)*)", text, re.M)
    return m.group(1) if m else ""


def main():
    heaptrace = os.path.abspath(sys.argv[1])
    os.chdir(sys.argv[2] if len(sys.argv) > 2 else ".")
    usage = run(heaptrace, "--help")
    commands = re.findall(r"^  (\w+) +(.+)$", usage, re.M)
    overview = rendered("man/heaptrace.1")
    problems = []
    for name, summary in commands:
        page = f"man/heaptrace-{name}.1"
        ref = f"heaptrace-{name}(1)"
        if not os.path.exists(page):
            problems.append(f"{name}: no {page}")
            continue
        text = rendered(page)
        if f"heaptrace-{name} - {summary}" not in re.sub(r"\s+", " ", text):
            problems.append(f"{page}: NAME does not say '{summary}'")
        helps = run(heaptrace, name, "--help")
        if helps.splitlines()[-1] != f"See {ref}.":
            problems.append(f"{name} --help does not end with 'See {ref}.'")
        for opt in sorted(set(re.findall(r"^ +(?:-\w, )?(--[\w-]+)",
                                         helps, re.M))):
            if opt not in section(text, "OPTIONS"):
                problems.append(f"{page}: {opt} of --help is not in OPTIONS")
        if overview.count(ref) < 2:
            problems.append(f"heaptrace.1: {ref} not in COMMANDS and SEE ALSO")
    for p in problems:
        print(p)
    print(f"{len(commands)} commands: {len(problems)} problems")
    return 1 if problems or not commands else 0


if __name__ == "__main__":
    sys.exit(main())
