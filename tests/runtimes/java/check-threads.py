#!/usr/bin/env python3
"""check-threads.py HEAPTRACE TRACE DUMP BIG SMALL CHUNKS [FRAMES_OUT]

Checks `heaptrace threads` on a dump of ParkedThreads (see
ParkedThreads.java) taken while its two threads were parked: parked-1
and parked-2 are the two threads that retain the most, in that order;
each one's stack has, from the top, the native Unsafe.park and
LockSupport.park, then ParkedThreads.hold, middle and outer at the lines
ParkedThreads.java marks (@hold, @middle, @outer), with no frame between
them; hold's locals hold
the byte[BIG] (or byte[SMALL]) that retains only itself, middle's hold
nothing, outer's the Object[CHUNKS] that retains itself and its CHUNKS
byte[1000]; what the thread's locals retain covers these and little more.
With FRAMES_OUT, writes parked-1's frames there, one a line, for the test
to compare the dump with another of the same moment.
"""
import json
import os
import subprocess
import sys

failures = 0


def check(ok, what):
    global failures
    if not ok:
        failures += 1
        print("FAIL: " + what, file=sys.stderr)


def marked_lines():
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "ParkedThreads.java")
    lines = {}
    with open(source, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            for mark in ("@outer", "@middle", "@hold"):
                if "// " + mark in text:
                    lines[mark[1:]] = number
    return lines


def check_array(local, cls, length, element, what):
    """An array local's size is its elements' and a header of 12 to 24
    bytes, 8-byte aligned, whichever layout the JVM chose."""
    check(local["class"] == cls, "%s is a %s, not a %s"
          % (what, local["class"], cls))
    least = length * element
    check(least + 12 <= local["size"] <= least + 24 and
          local["size"] % 8 == 0,
          "%s is %d bytes, not %d plus a header" % (what, local["size"],
                                                    least))


def check_thread(thread, name, bytes_, chunks, lines):
    frames = thread["frames"]
    names = [f["method"] or "" for f in frames]
    where = {"hold": "ParkedThreads.hold(ParkedThreads.java:%d)",
             "middle": "ParkedThreads.middle(ParkedThreads.java:%d)",
             "outer": "ParkedThreads.outer(ParkedThreads.java:%d)"}
    want = [where[m] % lines[m] for m in ("hold", "middle", "outer")]
    at = names.index(want[0]) if want[0] in names else -1
    check(at >= 1 and names[at:at + 3] == want,
          "%s: the frames are not %s in a row: %s" % (name, want, names))
    if at < 1 or names[at:at + 3] != want:
        return
    # park's two frames above: LockSupport.park and the native Unsafe.park
    check(at == 2, "%s: hold is frame %d from the top, not 2: %s"
          % (name, at, names))
    check(names[at - 1].startswith(
        "java.util.concurrent.locks.LockSupport.park("),
        "%s: the frame above hold is %s, not LockSupport.park"
        % (name, names[at - 1]))
    check(frames[0]["method"].endswith("(native)"),
          "%s: the top frame %s is not native" % (name, names[0]))
    hold, middle, outer = frames[at:at + 3]
    arrays = [x for x in hold["locals"] if x["class"] == "byte[]"]
    check(len(arrays) == 1, "%s: hold holds %d byte[], not 1: %s"
          % (name, len(arrays), hold["locals"]))
    if arrays:
        check_array(arrays[0], "byte[]", bytes_, 1, name + ": hold's data")
        check(arrays[0]["retained"] == arrays[0]["size"],
              "%s: hold's byte[] retains %d, not its own %d bytes"
              % (name, arrays[0]["retained"], arrays[0]["size"]))
    check(middle["locals"] == [], "%s: middle holds %s, not nothing"
          % (name, middle["locals"]))
    parts = [x for x in outer["locals"] if x["class"] == "java.lang.Object[]"]
    check(len(parts) == 1, "%s: outer holds %d Object[], not 1: %s"
          % (name, len(parts), outer["locals"]))
    if parts:
        p = parts[0]
        inside = p["retained"] - p["size"]
        check(inside % chunks == 0 and
              1000 + 12 <= inside // chunks <= 1000 + 24,
              "%s: outer's Object[%d] retains %d bytes besides itself, "
              "not %d byte[1000]" % (name, chunks, inside, chunks))
        least = bytes_ + chunks * 1000
        check(least <= thread["locals_retained"] <= least + 65536,
              "%s: its locals retain %d bytes, not %d and a little"
              % (name, thread["locals_retained"], least))
    check(thread["retained"] ==
          thread["object_retained"] + thread["locals_retained"],
          "%s: retained %d is not its object's %d and its locals' %d"
          % (name, thread["retained"], thread["object_retained"],
             thread["locals_retained"]))
    check(thread["class"] == "java.lang.Thread",
          "%s: its object is a %s" % (name, thread["class"]))


def main():
    heaptrace, trace, dump, big, small, chunks = sys.argv[1:7]
    out = sys.argv[7] if len(sys.argv) > 7 else None
    big, small, chunks = int(big), int(small), int(chunks)
    report = json.loads(subprocess.run(
        [heaptrace, "threads", "--format", "json", "--dump", dump, trace],
        capture_output=True, text=True, check=True).stdout)
    threads = report["threads"]
    check(report["thread_count"] == len(threads) and len(threads) >= 3,
          "%d threads listed of %d" % (len(threads), report["thread_count"]))
    names = [t["name"] for t in threads]
    check(names[:2] == ["parked-1", "parked-2"],
          "the threads that retain the most are %s, not parked-1 and "
          "parked-2" % names[:2])
    lines = marked_lines()
    for t, size in zip(threads[:2], (big, small)):
        if t["name"] in ("parked-1", "parked-2"):
            check_thread(t, t["name"], size, chunks, lines)
    if out and threads and threads[0]["name"] == "parked-1":
        with open(out, "w", encoding="utf-8") as f:
            for frame in threads[0]["frames"]:
                f.write("%s\n" % frame["method"])
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
