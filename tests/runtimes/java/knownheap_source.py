"""knownheap_source.py - what the checking scripts read in
KnownHeap.java itself: the line where main waits to be dumped, which
names the frame of main in both an HPROF dump and the JVM recorder's
("KnownHeap.main(KnownHeap.java:120)")."""
import os


def waiting_line():
    """The line of KnownHeap.java where main waits to be dumped."""
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "KnownHeap.java")
    with open(source, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            if ".readLine()" in text:
                return number
    raise SystemExit("knownheap_source.py: no readLine in " + source)


def waiting_frame():
    """main's frame at that line, as heaptrace names it."""
    return "KnownHeap.main(KnownHeap.java:%d)" % waiting_line()
