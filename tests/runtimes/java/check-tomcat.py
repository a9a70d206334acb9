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
  - retained sizes at the strong level (the default) against VisualVM's
    heap library on second.hprof (WORK_DIR/visualvm.out, which
    tomcat-test.sh writes; skipped without it), object by object: at
    least 95% the same, each difference counted by its cause; the
    References and WeakHashMaps at least 99% (and fewer at phantom, where
    they retain their referents); the sessions, carts and their lines and
    the session manager exactly;
  - `heaptrace threads`: the checkout's request thread, with the frame
    CartServlet.checkout at its line holding the cart and its retained
    size, and Tomcat's frames below it down to Thread.run;
  - levels: stats counts objects held only softly or weakly (Tomcat's
    and the JDK's caches), the path to the biggest session at the
    default level goes through no referent, and `top --class` lists the
    sessions with their retained sizes;
  - the webapp's class loader (ParallelWebappClassLoader): strongly
    reachable, the loader of the servlet's three classes, which it does
    not retain alone, and retaining less than the biggest session's cart,
    so that no instance of the classes it defined is charged to it;
  - `heaptrace waste`: the duplicate strings of second.hprof (groups,
    Strings in them, copies, wasted bytes, and group by group the text,
    count, distinct arrays and bytes wasted) are those an independent
    reading of the same dump finds (tools/hprof-strings.py --duplicates).
Prints as figures how many classes match the histogram, each session's
overhead, diff's new objects against the real growth, how many objects
retain what VisualVM says (and why the others do not), the checkout
thread's frames and retained size, the objects at each level and the
loader's retained size.

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
WEBAPP_LOADER = "org.apache.catalina.loader.ParallelWebappClassLoader"


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

    def object(self, name, ident):
        """`heaptrace object`'s JSON of the object IDENT, with all its
        referrers and references."""
        key = ("object", name, ident)
        if key not in self.cache:
            out = subprocess.run([self.heaptrace, "object", "--max-refs",
                                  "100000", "--format", "json",
                                  self.path(name), ident],
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


# Roots of a thread's frames: a thread of Tomcat's may step into native
# code or out of it between the two dumps of one moment, holding one
# local more or less; the heap is the same.
FRAME_CONTAINERS = {"C_RT_JIT", "C_RT_NATIVE", "C_RT_NATIVEGC", "C_RT_COM",
                    "C_RT_INTERPRETED", "C_RT_FASTINTERPRETED",
                    "C_RT_INTERNALFRAME"}


def without_frame_roots(stats):
    for d in stats:
        frames = [g for g in d.get("root_groups", [])
                  if g.get("container") in FRAME_CONTAINERS]
        d["roots"] -= sum(g["count"] for g in frames)
        d["root_groups"] = [g for g in d.get("root_groups", [])
                            if g not in frames]
    return stats


def check_gzip_same_moment(r, dumps):
    plain = dumps.json("stats", "second.hprof", "-n", "0")["dumps"]
    gz = dumps.json("stats", "second.hprof.gz", "-n", "0")["dumps"]
    r.check(without_frame_roots(plain) == without_frame_roots(gz),
            "second.hprof.gz (-gz=1) has the stats of second.hprof, dumped "
            "at the same moment (the roots in threads' frames aside)")

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


def visualvm_figures(dumps):
    """{id: (size, retained)} by VisualVM's heap library on second.hprof
    (VisualVMAllRetained.java; tomcat-test.sh writes visualvm.out), or
    None where its package is not installed."""
    out = dumps.path("visualvm.out")
    if not os.path.exists(out):
        return None
    figures = {}
    with open(out, encoding="utf-8") as f:
        for line in f:
            i, size, retained = line.split()
            figures[int(i, 16)] = (int(size), int(retained))
    return figures


def about_references(cls):
    """Whether objects of CLS hold referents: java.lang.ref's References
    and their subclasses here, and WeakHashMaps with their entries."""
    return (cls.startswith("java.lang.ref.") or
            cls.startswith("java.util.WeakHashMap") or
            cls.endswith("Reference") or cls.endswith("Reference[]"))


def check_visualvm(r, dumps):
    """Retained sizes at the strong level (the default), object by object,
    against VisualVM's, which leaves References' referents out too. The
    differences have causes of their own, counted apart:
      - own size: VisualVM sizes an object by the fields the dump lists,
        heaptrace as HotSpot lays it out (the JVM's injected fields of
        Class, Thread, Module, ClassLoader, MemberName), as the JVM's
        histogram does; every object above such one differs too;
      - less in VisualVM: its dominators count referrers no root reaches
        (the objects HotSpot leaves reachable only from fields it does
        not dump, such as the Method[] of Class.reflectionData, which
        refer to the root Methods that copies share), so what they refer
        to looks shared there;
      - more in VisualVM: a handful of the class loaders' maps of
        ProtectionDomains, which heaptrace also reaches from the classes
        they protect (<protection_domain>, as the dump's class records
        say), VisualVM only from the map.
    The webapp's objects and Tomcat's sessions and manager have none of
    these: they must match exactly."""
    vv = visualvm_figures(dumps)
    if vv is None:
        print("VisualVM's heap library not installed (Debian package "
              "visualvm): retained sizes not compared")
        return
    ht = {int(o["id"], 16): o for o in dumps.objects("second.hprof")}
    both = [i for i in vv if i in ht]
    same = [i for i in both if ht[i]["retained"] == vv[i][1]]
    other = [i for i in both if ht[i]["retained"] != vv[i][1]]
    own = [i for i in other if ht[i]["size"] != vv[i][0]]
    less = [i for i in other if ht[i]["size"] == vv[i][0] and
            ht[i]["retained"] > vv[i][1]]
    more = [i for i in other if ht[i]["size"] == vv[i][0] and
            ht[i]["retained"] < vv[i][1]]
    print("VisualVM: %d of %d objects retain the same at strong (%.1f%%); "
          "of the others, %d have an own size VisualVM computes otherwise, "
          "%d retain less there, %d more"
          % (len(same), len(both), 100.0 * len(same) / max(len(both), 1),
             len(own), len(less), len(more)))
    r.check(len(both) >= 0.95 * len(ht), "VisualVM's library answers for "
            "%d of heaptrace's %d objects (it leaves class objects out)"
            % (len(both), len(ht)))
    r.check(len(same) >= 0.95 * len(both), "at least 95%% of the objects "
            "retain what VisualVM says (%d of %d)" % (len(same), len(both)))
    r.check(len(more) <= 0.001 * len(both), "at most 0.1%% of the objects "
            "retain more in VisualVM (%d)" % len(more))
    # what the level is about: References and WeakHashMaps (the JDK's
    # caches, Tomcat's loggers per class loader) retain no referent
    refs = [i for i in both if about_references(ht[i]["class"]) and
            ht[i]["size"] == vv[i][0]]
    refs_same = [i for i in refs if ht[i]["retained"] == vv[i][1]]
    print("VisualVM: %d of %d References and WeakHashMaps retain the same"
          % (len(refs_same), len(refs)))
    r.check(refs and len(refs_same) >= 0.99 * len(refs),
            "at least 99%% of the References and WeakHashMaps retain what "
            "VisualVM says (%d of %d)" % (len(refs_same), len(refs)))
    # the comparison sees a referent followed: at phantom, where every
    # reference is, the References holding softly reachable caches retain
    # them, which VisualVM leaves out
    phantom = {int(o["id"], 16): o["retained"] for o in
               dumps.json("top", "second.hprof", "-n", "0", "--retained",
                          "phantom")["objects"]}
    refs_phantom = [i for i in refs if phantom.get(i) == vv[i][1]]
    r.check(len(refs_phantom) < len(refs_same), "at phantom fewer "
            "References and WeakHashMaps retain what VisualVM says (%d)"
            % len(refs_phantom))
    for cls in (SESSION, MANAGER, CART, LINE):
        mine = [i for i in both if ht[i]["class"] == cls]
        wrong = ["%s %d, VisualVM %d" % (ht[i]["id"], ht[i]["retained"],
                                        vv[i][1])
                 for i in mine if ht[i]["retained"] != vv[i][1]]
        r.check(mine and not wrong, "every %s (%d) retains what VisualVM "
                "says%s" % (cls, len(mine), (": " + ", ".join(wrong[:3]))
                            if wrong else ""))


def check_threads(r, dumps):
    """`heaptrace threads`: the checkout's request thread, its frame in
    CartServlet.checkout with the cart among its locals, and Tomcat's own
    frames below it down to Thread.run."""
    report = dumps.json("threads", "second.hprof")
    threads = report["threads"]
    r.check(report["thread_count"] == len(threads) and threads,
            "threads lists all %d threads (%d)"
            % (report["thread_count"], len(threads)))
    frame = "shop.CartServlet.checkout(CartServlet.java:%d)" % waiting_line()
    mine = [t for t in threads
            if frame in [f["method"] for f in t["frames"]]]
    r.check(len(mine) == 1, "one thread has the frame %s (%d)"
            % (frame, len(mine)))
    if len(mine) != 1:
        return
    thread = mine[0]
    name = thread["name"] or ""
    r.check(name.startswith("http-nio-") and "-exec-" in name,
            "the checkout's thread is a request thread (%s)" % name)
    methods = [f["method"] for f in thread["frames"]]
    at = methods.index(frame)
    big = dumps.checkout_size("second")
    carts = [x for x in thread["frames"][at]["locals"] if x["class"] == CART]
    r.check([x["retained"] for x in carts] == [big],
            "%s holds the checkout's cart, retaining %d B (%s)"
            % (frame, big, [x["retained"] for x in carts]))
    r.check(thread["retained"] >= big, "the thread retains %d B, at least "
            "its cart's %d" % (thread["retained"], big))
    below = methods[at + 1:]
    r.check(below and below[0].startswith("shop.CartServlet.doGet(") and
            any(m.startswith("org.apache.catalina.") for m in below) and
            below[-1].startswith("java.lang.Thread.run("),
            "below checkout: doGet, Tomcat's frames, and Thread.run last "
            "(%s .. %s)" % (below[:1], below[-1:]))
    print("the checkout's thread %s: %d frames, %d B retained (locals %d B)"
          % (name, len(methods), thread["retained"],
             thread["locals_retained"]))


def check_levels(r, dumps):
    """Tomcat holds objects through soft and weak references (class
    loaders' caches, WeakHashMaps): stats counts them apart; the default
    level takes no path through a referent, and lists the sessions with
    what they retain."""
    d = dumps.json("stats", "second.hprof", "-n", "0")["dumps"][-1]
    levels = d["reachability"]
    print("second.hprof reachability: %s" % ", ".join(
        "%s %d" % (k, v["objects"]) for k, v in levels.items()))
    r.check(d["level"] == "strong", "stats is at the strong level by "
            "default (%s)" % d["level"])
    weaker = levels["soft"]["objects"] + levels["weak"]["objects"]
    r.check(weaker > 0, "stats counts objects held only softly or weakly "
            "(%d)" % weaker)
    sessions = dumps.objects("second.hprof", SESSION)
    if not sessions:
        return
    session = max(sessions, key=lambda o: o["retained"])
    p = dumps.json("paths", "second.hprof", "-n", "1", "--to",
                   session["id"])
    steps = [str(o["step"]) for x in p["paths"] for o in x["objects"][1:]]
    r.check(p["level"] == "strong" and p["paths"] and
            not any("referent" in s for s in steps),
            "paths --to the biggest session at the default level: no step "
            "through a referent")
    listed = dumps.json("top", "second.hprof", "-n", "0", "--class",
                        SESSION)["objects"]
    want = sorted(((o["id"], o["retained"]) for o in sessions),
                  key=lambda x: (-x[1], x[0]))
    got = [(o["id"], o["retained"]) for o in listed]
    r.check(len(got) == dumps.first + dumps.second and
            sorted(got) == sorted(want) and
            [x[1] for x in got] == sorted([x[1] for x in got], reverse=True),
            "top --class %s lists the %d sessions, biggest first, with "
            "their retained sizes" % (SESSION, len(got)))


def check_loader(r, dumps):
    """The webapp's class loader: reachable, the loader of the servlet's
    three classes and no other, and charged with what it alone holds: not
    with those classes, which their instances keep (<class>) as much as
    it does, nor with their instances, the carts of live sessions, so that
    it retains less than the biggest session's cart."""
    loaders = dumps.objects("second.hprof", WEBAPP_LOADER)
    r.check(len(loaders) == 1, "one %s (%d)" % (WEBAPP_LOADER, len(loaders)))
    if len(loaders) != 1:
        return
    loader = dumps.object("second.hprof", loaders[0]["id"])
    r.check(not loader["unreachable"] and loader["strongest"] == "strong",
            "the webapp's class loader is strongly reachable (%s)"
            % loader["strongest"])
    defined = [x["id"] for x in loader["referrers"]
               if x["step"] == "<classloader>"]
    classes = [dumps.object("second.hprof", i) for i in defined]
    names = sorted(c["class_object_of"] for c in classes)
    r.check(names == sorted(["shop.CartServlet", CART, LINE]),
            "the webapp's class loader defined the servlet's classes: %s"
            % names)
    charged = [c["class_object_of"] for c in classes
               if c["dominator"] == loader["id"] or c["unreachable"]]
    r.check(not charged, "its classes are reachable and not retained by "
            "it alone (%s)" % charged)
    carts = dumps.carts("second.hprof")[0]
    biggest = max([o["retained"] for o in carts] or [0])
    r.check(loader["retained"] < biggest,
            "the webapp's class loader retains %d B, less than the biggest "
            "session's cart (%d B): no live instance is charged to it"
            % (loader["retained"], biggest))
    print("the webapp's class loader retains %d B; its classes %s"
          % (loader["retained"], ", ".join(
              "%s %d B" % (c["class_object_of"], c["retained"])
              for c in sorted(classes,
                              key=lambda c: c["class_object_of"]))))

def check_waste(r, dumps):
    """Duplicate strings: heaptrace's against tools/hprof-strings.py's,
    which reads the HPROF with none of heaptrace's code."""
    tool = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                        "..", "..", "..", "tools", "hprof-strings.py")
    out = subprocess.run([sys.executable, tool, "--duplicates",
                          dumps.path("second.hprof")],
                         check=True, stdout=subprocess.PIPE).stdout
    want = json.loads(out)
    got = dumps.json("waste", "second.hprof", "-n", "0")["duplicate_strings"]
    figures = [("strings", "examined"), ("groups", "group_count"),
               ("objects", "objects"), ("copies", "copies"),
               ("wasted", "wasted")]
    for theirs, ours in figures:
        r.check(got[ours] == want[theirs],
                "waste: %s %d, the independent reading's %d"
                % (ours, got[ours], want[theirs]))
    # heaptrace keeps 200 characters of a text; groups in any order
    mine = sorted((g["text"], g["count"], g["arrays"], g["wasted"])
                  for g in got["groups"])
    theirs = sorted((g["text"][:200], g["count"], g["arrays"], g["wasted"])
                    for g in want["list"])
    odd = sorted(set(mine) ^ set(theirs))[:3]
    r.check(mine == theirs, "waste: the %d groups of duplicate strings are "
            "the independent reading's, text, count, arrays and bytes%s"
            % (len(mine), " (differ: %r)" % odd if odd else ""))
    print("duplicate strings of second.hprof: %d B wasted by %d copies in "
          "%d groups (%d of %d Strings)"
          % (got["wasted"], got["copies"], got["group_count"],
             got["objects"], got["examined"]))


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
    check_visualvm(r, dumps)
    check_threads(r, dumps)
    check_levels(r, dumps)
    check_loader(r, dumps)
    check_waste(r, dumps)
    sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
