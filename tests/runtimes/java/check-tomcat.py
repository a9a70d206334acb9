#!/usr/bin/env python3
"""check-tomcat.py - checks what heaptrace reads from heap dumps of a real
Tomcat 10 serving the shop webapp (tomcat/CartServlet.java), as
tomcat-test.sh takes them.

usage: check-tomcat.py HEAPTRACE WORK_DIR FIRST SECOND HOLD

WORK_DIR holds first.hprof and first.histogram (jcmd GC.heap_dump and
GC.class_histogram after FIRST sessions), second.hprof, second.histogram
and second.hprof.gz (after SECOND more sessions, the gzipped dump taken
right after the plain one, with no request between). The k-th session
made (k = 1 .. FIRST + SECOND) holds a cart of k lines; through both
dumps, a checkout waits in CartServlet.checkout, on a request thread,
holding a cart of HOLD lines in a local.

Checks, one line each (ok: or FAIL:), exiting 1 if any failed:
  - every dump is clean: `heaptrace check` exits 0;
  - per-class counts and bytes are jcmd GC.class_histogram's for the
    classes of the webapp and of Tomcat's sessions, and for nearly all
    others (the attach mechanism allocates between the histogram and the
    dump; class data sharing keeps mirrors the dump leaves out);
  - one moment dumped twice: second.hprof.gz reads as second.hprof does,
    the same stats, and top lists the same objects (class, size and
    retained size; an object a waiting thread makes anew may change id);
  - the sessions: FIRST + SECOND StandardSession objects, one cart each;
    the carts retain size(Cart) + k x size(Line), k = 1 .. FIRST + SECOND,
    the sizes being the JVM's (its histogram); every session retains its
    cart and the same overhead of Tomcat's own, under 1 KiB; and the path
    to the biggest cart goes through the biggest session;
  - the checkout: one cart of HOLD lines, held by a local of the frame
    CartServlet.checkout, at the line where it waits
    (tomcat/CartServlet.java), on one of the connector's request threads
    (http-nio-...-exec-N);
  - `paths --to` a session: from a root, through Tomcat's session manager
    (StandardContext.manager, then the map ManagerBase.sessions) into the
    map's entry (ConcurrentHashMap$Node.val);
  - `diff first.hprof second.hprof`: SECOND more sessions and carts, and
    their lines; the session manager's retained size grew by what the new
    sessions retain and their map's entries; and it counts as new at least
    the objects the servlet made.
Prints as figures how many classes match the histogram, each session's
overhead, and diff's new objects against the real growth.

Each check is a function of the dumps; main() lists them, so that a check
of a new command (threads, retained sizes at a reachability level) is one
more function there.
"""
import json
import os
import subprocess
import sys

# the script's own folder is first on sys.path; no .pyc left in the tree
sys.dont_write_bytecode = True
sys.path.insert(1, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                ".."))
from checks import Result  # noqa: E402
from jvm_histogram import histogram  # noqa: E402

SESSION = "org.apache.catalina.session.StandardSession"
MANAGER = "org.apache.catalina.session.StandardManager"
CART = "shop.CartServlet$Cart"
LINE = "shop.CartServlet$Line"
# the classes whose counts and bytes must be the histogram's to the byte
EXACT = (SESSION, MANAGER, CART, LINE, "shop.CartServlet")


class Dumps:
    """The dumps of one run and what heaptrace says of them, each command
    run once."""

    def __init__(self, heaptrace, work, first, second, hold):
        self.heaptrace = heaptrace
        self.work = work
        self.first = first
        self.second = second
        self.hold = hold
        self.cache = {}

    def path(self, name):
        return os.path.join(self.work, name)

    def json(self, command, names, *args):
        """The JSON of `heaptrace COMMAND ARGS --format json NAMES...`
        (NAMES: one dump's file name, or a tuple of them)."""
        names = names if isinstance(names, tuple) else (names,)
        key = (command, names) + args
        if key not in self.cache:
            out = subprocess.run([self.heaptrace, command] + list(args) +
                                 ["--format", "json"] +
                                 [self.path(x) for x in names],
                                 check=True, stdout=subprocess.PIPE).stdout
            self.cache[key] = json.loads(out)
        return self.cache[key]

    def classes(self, name):
        """{class: (count, bytes)} of the dump, as `stats` reads it."""
        d = self.json("stats", name, "-n", "0")["dumps"][-1]
        return {c["name"]: (c["count"], c["bytes"]) for c in d["classes"]}

    def objects(self, name, cls=None):
        """`top -n 0`'s objects, of class CLS if given."""
        objs = self.json("top", name, "-n", "0")["objects"]
        return [o for o in objs if cls is None or o["class"] == cls]

    def size(self, name, cls):
        """The size of one object of CLS, by the JVM's histogram."""
        count, total = histogram(self.path(name + ".histogram"))[cls]
        return total // count

    def checkout_size(self, name):
        """What the checkout's cart retains, by the JVM's sizes."""
        return self.size(name, CART) + self.hold * self.size(name, LINE)

    def carts(self, name):
        """The carts of the sessions, and those of the size of the
        checkout's (more lines than any session's cart)."""
        big = self.checkout_size(name.split(".")[0])
        carts = self.objects(name, CART)
        return ([o for o in carts if o["retained"] != big],
                [o for o in carts if o["retained"] == big])


def check_clean(r, dumps):
    for name in ("first.hprof", "second.hprof", "second.hprof.gz"):
        run = subprocess.run([dumps.heaptrace, "check", dumps.path(name)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                             text=True)
        r.check(run.returncode == 0, "heaptrace check %s: clean (%s)"
                % (name, run.stdout.strip().splitlines()[-1:]))


def check_histogram(r, dumps, name):
    jvm = histogram(dumps.path(name + ".histogram"))
    got = dumps.classes(name + ".hprof")
    for cls in EXACT:
        r.check(got.get(cls) == jvm.get(cls) and cls in jvm,
                "%s.hprof: %s (count, bytes) %s, the JVM's histogram %s"
                % (name, cls, got.get(cls), jvm.get(cls)))
    same = sum(1 for k, v in jvm.items() if got.get(k) == v)
    print("%s.hprof: %d of the histogram's %d classes have its counts and "
          "bytes" % (name, same, len(jvm)))
    r.check(same >= 0.95 * len(jvm), "%s.hprof: at least 95%% of the "
            "histogram's classes have its counts and bytes (%d of %d)"
            % (name, same, len(jvm)))


def check_gzip_same_moment(r, dumps):
    plain = dumps.json("stats", "second.hprof", "-n", "0")["dumps"]
    gz = dumps.json("stats", "second.hprof.gz", "-n", "0")["dumps"]
    r.check(plain == gz, "second.hprof.gz (-gz=1) has the stats of "
            "second.hprof, dumped at the same moment")

    def shape(name):
        return sorted((o["class"], o["size"], o["retained"])
                      for o in dumps.objects(name))
    r.check(shape("second.hprof") == shape("second.hprof.gz"),
            "top of second.hprof.gz lists the objects of second.hprof's, "
            "with the same retained sizes")


def check_sessions(r, dumps):
    n = dumps.first + dumps.second
    sessions = dumps.objects("second.hprof", SESSION)
    carts = dumps.carts("second.hprof")[0]
    r.check(len(sessions) == n, "%d sessions made, %d %s objects"
            % (n, len(sessions), SESSION))
    r.check(len(carts) == n, "%d sessions made, %d carts besides the "
            "checkout's" % (n, len(carts)))
    cart = dumps.size("second", CART)
    line = dumps.size("second", LINE)
    want = [cart + k * line for k in range(1, n + 1)]
    got = sorted(o["retained"] for o in carts)
    r.check(got == want, "the carts retain %d + k x %d bytes, k = 1 .. %d "
            "(by the JVM's sizes; %s)" % (cart, line, n,
                                         "so they do" if got == want else
                                         "got %s .. %s" % (got[:3], got[-3:])))
    # a session's overhead is Tomcat's: the same for every session
    sessions.sort(key=lambda o: o["retained"])
    carts.sort(key=lambda o: o["retained"])
    overhead = sorted({s["retained"] - c["retained"]
                       for s, c in zip(sessions, carts)})
    print("each session retains its cart and %s bytes of Tomcat's own"
          % " or ".join(map(str, overhead)))
    r.check(len(overhead) == 1 and 0 < overhead[0] < 1024,
            "every session retains its cart and the same overhead, under "
            "1 KiB (%s)" % overhead)
    if not sessions:
        return
    p = dumps.json("paths", "second.hprof", "-n", "1", "--to",
                   carts[-1]["id"])["paths"]
    through = p and sessions[-1]["id"] in [o["id"] for o in p[0]["objects"]]
    r.check(through, "the path to the biggest cart goes through the biggest "
            "session")


def check_session_path(r, dumps):
    sessions = dumps.objects("second.hprof", SESSION)
    if not sessions:
        return
    session = max(sessions, key=lambda o: o["retained"])
    p = dumps.json("paths", "second.hprof", "-n", "1", "--to",
                   session["id"])["paths"]
    r.check(len(p) == 1 and p[0]["root"].get("name"),
            "paths --to a session: a path from a root")
    if not p:
        return
    steps = [o["step"] for o in p[0]["objects"][1:]]
    want = ["org.apache.catalina.core.StandardContext.manager",
            "org.apache.catalina.session.ManagerBase.sessions"]
    at = [i for i in range(len(steps) - 1) if steps[i:i + 2] == want]
    into = "java.util.concurrent.ConcurrentHashMap$Node.val"
    r.check(at and steps[-1] == into,
            "the path to a session goes through %s, then %s, into the map's "
            "entry (%s)" % (want[0], want[1], " > ".join(map(str, steps))))
    r.check(p[0]["objects"][-1]["id"] == session["id"],
            "the path ends at the session")


def waiting_line():
    """The line of CartServlet.java where a checkout waits."""
    source = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "tomcat", "CartServlet.java")
    with open(source, encoding="utf-8") as f:
        for number, text in enumerate(f, 1):
            if "// waits here" in text:
                return number
    raise SystemExit("check-tomcat.py: no '// waits here' in " + source)


def check_checkout(r, dumps):
    held = dumps.carts("second.hprof")[1]
    r.check(len(held) == 1, "one cart of the checkout's %d lines, %d bytes "
            "(%d)" % (dumps.hold, dumps.checkout_size("second"), len(held)))
    if len(held) != 1:
        return
    p = dumps.json("paths", "second.hprof", "-n", "1", "--to",
                   held[0]["id"])["paths"]
    r.check(len(p) == 1, "paths --to the checkout's cart: a path")
    if not p:
        return
    root = p[0]["root"]
    frame = "shop.CartServlet.checkout(CartServlet.java:%d)" % waiting_line()
    r.check(root.get("method_name") == frame and len(p[0]["objects"]) == 1,
            "the checkout's cart is held by a local of %s (%s)"
            % (frame, root.get("name")))
    thread = root.get("thread_name") or ""
    r.check(thread.startswith("http-nio-") and "-exec-" in thread,
            "the checkout's frame is on a request thread (%s)" % thread)


def check_diff(r, dumps):
    d = dumps.json("diff", ("first.hprof", "second.hprof"), "-n", "20")
    classes = {c["name"]: c["count"]["change"] for c in d["classes"]}
    # what the sessions retain together: they hold nothing in common
    grown = [c["retained"]["change"] for c in d["classes"]
             if c["name"] == SESSION]
    first, n = dumps.first, dumps.first + dumps.second
    lines = sum(range(first + 1, n + 1))
    for cls, want in ((SESSION, dumps.second), (CART, dumps.second),
                      (LINE, lines)):
        r.check(classes.get(cls) == want, "diff: %s %+d, the webapp made %d"
                % (cls, classes.get(cls, 0), want))

    managers = [x for x in d["retainers"] if x["class"] == MANAGER]
    r.check(len(managers) == 1, "diff: the session manager is among the "
            "retainers that grew most")
    if managers and grown:
        grown = grown[0]
        extra = managers[0]["retained"]["change"] - grown
        # a map entry, and the session's id as its key: under 256 bytes
        # each; the table doubles at most once (4 KiB at 1,024 slots)
        r.check(0 <= extra <= 256 * dumps.second + 4096,
                "diff: the session manager grew by the new sessions' %d "
                "bytes and %d bytes of map entries" % (grown, extra))
    made = 2 * dumps.second + lines
    real = d["total"]["objects"]["change"]
    print("diff: %d new objects for a real growth of %d (%.1f%%); the "
          "servlet made %d" % (d["new_objects"], real,
                               100.0 * (d["new_objects"] - real) / real,
                               made))
    r.check(d["new_objects"] >= made, "diff: at least the %d objects the "
            "servlet made are new (%d)" % (made, d["new_objects"]))
    # the sessions' map resizes between the dumps: its entries are matched
    # through it, so what diff calls new is what the heap really gained
    r.check(abs(d["new_objects"] - real) <= 0.05 * real,
            "diff: %d new objects within 5%% of the real growth of %d"
            % (d["new_objects"], real))


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    heaptrace, work = sys.argv[1:3]
    dumps = Dumps(heaptrace, work, *(int(x) for x in sys.argv[3:6]))
    r = Result("")
    check_clean(r, dumps)
    check_histogram(r, dumps, "first")
    check_histogram(r, dumps, "second")
    check_gzip_same_moment(r, dumps)
    check_sessions(r, dumps)
    check_session_path(r, dumps)
    check_checkout(r, dumps)
    check_diff(r, dumps)
    sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
