#!/bin/sh
# java-test.sh - the JVMTI agent on a real JVM, through `heaptrace record`.
#
# Records KnownHeap (see KnownHeap.java) and, at the point where it waits,
# runs jcmd GC.class_histogram, then jcmd JVMTI.data_dump, which returns
# once the agent has taken its dump, then jcmd GC.heap_dump; check-knownheap.py
# then checks that dump against what the program built and against the
# histogram, check-fields.py the fields its references name against the
# program and against the HPROF dump of the same moment. Then
# records once in each other --dump-on mode and checks the traces, the
# exit status passed through, and the messages of record and of the agent,
# word for word (DIAGNOSTICS in heaptrace-record(1)).
#
# usage: java-test.sh HEAPTRACE SOURCE_DIR WORK_DIR
# Exits 77 (skipped) without java, javac, jcmd or python3. Under
# AddressSanitizer the JVM runs through a wrapper (java-wrapper.sh).
set -u

if [ $# -ne 3 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR WORK_DIR" >&2
	exit 2
fi
heaptrace=$1 src=$2 work=$3
n=5000 depth=6 leaves=8 garbage=200000
status=0

. "$(dirname "$0")/../../lib.sh"
need_tools java javac jcmd python3

. "$(dirname "$0")/java-wrapper.sh"
java_setup "$heaptrace" "$src" KnownHeap.java

# ---- the paused-point dump, next to the JVM's own class histogram --------

trace=$work/known.ht
mkfifo "$work/stdin" || exit 1
"$heaptrace" record -o "$trace" --dump-on exit -- "$java" -Xmx256m \
	-cp "$work/classes" KnownHeap $n $depth $leaves $garbage \
	<"$work/stdin" >"$work/known.out" 2>"$work/known.err" &
record=$!
exec 3>"$work/stdin"
if wait_ready "$work/known.out" && pid=$(child_of $record); then
	jcmd "$pid" GC.class_histogram >"$work/histogram.txt" 2>&1 ||
		fail "jcmd GC.class_histogram: $(cat "$work/histogram.txt")"
	jcmd "$pid" JVMTI.data_dump >"$work/data_dump.txt" 2>&1 ||
		fail "jcmd JVMTI.data_dump: $(cat "$work/data_dump.txt")"
	jcmd "$pid" GC.heap_dump "$work/known.hprof" >"$work/heap_dump.txt" 2>&1 ||
		fail "jcmd GC.heap_dump: $(cat "$work/heap_dump.txt")"
else
	fail "KnownHeap did not get ready under heaptrace record"
fi
echo go >&3
exec 3>&-
wait $record
rc=$?
[ $rc -eq 0 ] || fail "heaptrace record exited $rc: $(cat "$work/known.err")"
grep -q '^done' "$work/known.out" || fail "KnownHeap did not finish"

"$heaptrace" check "$trace" >"$work/check.txt" 2>&1 ||
	fail "heaptrace check: $(cat "$work/check.txt")"
dumps=$("$heaptrace" stats --format json "$trace" |
	python3 -c 'import json, sys; print(len(json.load(sys.stdin)["dumps"]))')
# the requested dump, then the one at exit
[ "$dumps" = 2 ] || fail "$dumps dumps, not the requested one and the last"
python3 "$src/check-knownheap.py" "$heaptrace" "$trace" 0 \
	"$work/histogram.txt" $n $depth $leaves || fail "the paused-point dump"
python3 "$src/check-fields.py" "$heaptrace" "$trace" 0 "$work/known.hprof" \
	$n $depth $leaves || fail "the fields of the paused-point dump"
# every GC and dump carries its time: pauses present and plausible
"$heaptrace" stats --format json "$trace" >"$work/stats.json"
python3 "$src/../check-pauses.py" --label "java" "$work/stats.json" ||
	fail "the GC pauses"

# ---- each mode gives a clean trace; the exit status passes through -------

# record_mode MODE EXPECTED_DUMPS_AT_LEAST: KnownHeap under --dump-on MODE
record_mode() {
	t=$work/mode-$1.ht
	echo go | "$heaptrace" record -q -o "$t" --dump-on "$1" -- "$java" \
		-cp "$work/classes" KnownHeap 1000 4 4 1000 \
		>"$work/mode.out" 2>"$work/mode.err" ||
		fail "--dump-on $1: exit $?: $(cat "$work/mode.err")"
	"$heaptrace" check "$t" >"$work/check.txt" 2>&1 ||
		fail "--dump-on $1: heaptrace check: $(cat "$work/check.txt")"
	got=$("$heaptrace" stats --format json "$t" | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(len(s["dumps"]), min(
    [c["count"] for d in s["dumps"] for c in d["classes"]
     if c["name"] == "KnownHeap$Node"] or [0]))')
	set -- "$1" "$2" $got
	[ "$3" -ge "$2" ] || fail "--dump-on $1: $3 dumps, expected $2 or more"
	[ "$4" = 1000 ] || fail "--dump-on $1: a dump has $4 list nodes, not 1000"
}
# major: KnownHeap's System.gc() is one, and the exit
record_mode major 2
record_mode every-gc 2
record_mode signal 1

# -o naming a trace of an earlier run is fine, in a directory of the class
# path too (heaptrace.ht in -cp .); naming the program's class is refused
# before the JVM runs, and the class is kept
t=$work/classes/earlier.ht
cp "$work/mode-signal.ht" "$t"
echo go | "$heaptrace" record -q -o "$t" --dump-on exit -- "$java" \
	-cp "$work/classes" KnownHeap 1000 4 4 1000 >/dev/null \
	2>"$work/earlier.err" ||
	fail "an earlier trace in the class path: exit $?: $(cat "$work/earlier.err")"
"$heaptrace" check "$t" >/dev/null 2>&1 ||
	fail "an earlier trace in the class path: the new one does not check"

# ---- two runs of one program: diff by path finds nothing new -------------
# the run above again: objects are matched by their path of field names
# (a hidden class's address, which changes from run to run, left out), so
# the two show no growth; the tail's path reads as the static field
# KnownHeap.head, then KnownHeap$Node.next steps (check-same-run.py).
# Hash tables keyed by identity hashes, new in each run (the JDK's
# Reflection.fieldFilterMap is keyed by Class objects), hold their entries
# in other buckets and chains from run to run: diff matches them all the
# same, by what the slots hold. One difference is the JVM's own: it starts
# compiler threads on demand, as the JIT's load asks, and JVMTI lists no
# such thread, so a run may hold one more thread object, unnamed ("thread
# object 0x..."), than the other. Another is the recorder's own: its agent
# thread ("heaptrace") may or may not have ended when the JVM's death
# brings the exit dump; since threads are named, it no longer reads as
# "thread object 0x...".
echo go | "$heaptrace" record -q -o "$work/again.ht" --dump-on exit -- \
	"$java" -cp "$work/classes" KnownHeap 1000 4 4 1000 >/dev/null \
	2>"$work/again.err" ||
	fail "KnownHeap again: exit $?: $(cat "$work/again.err")"
python3 "$src/../check-same-run.py" --label "two runs" \
	--list 'KnownHeap$Node' --n 1000 --root "static KnownHeap.head" \
	--step 'KnownHeap$Node.next' \
	--allow "thread object 0x" --allow 'thread object "heaptrace"' \
	"$heaptrace" "$t" "$work/again.ht" ||
	fail "two runs of KnownHeap differ"

cp "$work/classes/KnownHeap.class" "$work/KnownHeap.class.orig"
"$heaptrace" record -q -o "$work/classes/KnownHeap.class" -- "$java" \
	-cp "$work/classes" KnownHeap 1000 4 4 1000 >/dev/null 2>"$work/err"
rc=$?
[ $rc -eq 2 ] || fail "-o naming the program's class: exit status $rc, not 2"
cmp -s "$work/classes/KnownHeap.class" "$work/KnownHeap.class.orig" ||
	fail "-o naming the program's class: the class was changed"

"$heaptrace" record -q -o "$work/exit3.ht" -- "$java" -cp "$work/classes" \
	NoSuchClass >/dev/null 2>&1
rc=$?
[ $rc -eq 1 ] || fail "the JVM's exit status 1 came back as $rc"

# ---- what record says, word for word -------------------------------------

# has FILE WHAT LINE: FILE has LINE among its lines.
has() {
	grep -qxF -- "$3" "$1" || fail "$2: no line '$3' in: $(cat "$1")"
}

# an agent that cannot be loaded: the JVM refuses to start
mkdir -p "$work/empty"
: >"$work/empty/libheaptrace-jvmti.so"
HEAPTRACE_RECORDER_DIR=$work/empty "$heaptrace" record -o "$work/none.ht" \
	-- "$java" -version >"$work/none.out" 2>&1
rc=$?
[ $rc -eq 3 ] || fail "a broken agent: exit status $rc, not 3"
has "$work/none.out" "a broken agent" \
	"heaptrace: the java recorder did not record: no trace at $work/none.ht (the program exited with status 1)"
has "$work/none.out" "a broken agent" \
	"heaptrace: a JVM that cannot load its agent does not start, and says why: see FILES in heaptrace(1)"

# a heaptrace outside a build tree, with no agent installed where it looks
mkdir -p "$work/solo"
cp "$heaptrace" "$work/solo/heaptrace"
"$work/solo/heaptrace" record -q -o "$work/x.ht" -- "$java" -version \
	>/dev/null 2>"$work/err"
rc=$?
lib=libheaptrace-jvmti.so
if [ $rc -eq 0 ]; then
	echo "note: an agent is installed where heaptrace looks: not-found check not made"
else
	[ $rc -eq 3 ] || fail "no agent found: exit status $rc, not 3"
	case $(cat "$work/err") in
	"heaptrace: cannot record java: cannot find $lib: looked in $work/solo/../recorders/jvm/$lib, $work/solo/../"*"/$lib, /"*"/$lib (set HEAPTRACE_RECORDER_DIR to its directory)") ;;
	*) fail "no agent found: the message is: $(cat "$work/err")" ;;
	esac
fi

# a java that is not there (127), or cannot be executed (126)
agent_dir=$(dirname "$heaptrace")/../recorders/jvm
mkdir -p "$work/bin2"
HEAPTRACE_RECORDER_DIR=$agent_dir "$heaptrace" record -q -o "$work/x.ht" \
	-- "$work/bin2/java" -version >/dev/null 2>"$work/err"
rc=$?
[ $rc -eq 127 ] || fail "a java that is not there: exit status $rc, not 127"
has "$work/err" "a java that is not there" \
	"heaptrace: cannot run '$work/bin2/java': No such file or directory"
: >"$work/bin2/java"
chmod 644 "$work/bin2/java"
HEAPTRACE_RECORDER_DIR=$agent_dir "$heaptrace" record -q -o "$work/x.ht" \
	-- "$work/bin2/java" -version >/dev/null 2>"$work/err"
rc=$?
[ $rc -eq 126 ] || fail "a java that cannot be executed: exit status $rc, not 126"
has "$work/err" "a java that cannot be executed" \
	"heaptrace: cannot run '$work/bin2/java': Permission denied"

# ---- what the agent says, loaded by hand ----------------------------------

agent=$agent_dir/$lib

# agent OUTFILE OPTIONS [JAVA_OPTIONS...]: KnownHeap with the agent, its
# standard output and error in OUTFILE; the JVM's exit status.
agent() {
	out=$1 options=$2
	shift 2
	echo go | "$java" "$@" -agentpath:"$agent=$options" -cp "$work/classes" \
		KnownHeap 1000 4 4 1000 >"$out" 2>&1
}

# refused OPTIONS MESSAGE: the JVM does not start, and the agent says why.
refused() {
	agent "$work/agent.out" "$1"
	rc=$?
	[ $rc -eq 1 ] || fail "options '$1': the JVM's exit status is $rc, not 1"
	has "$work/agent.out" "options '$1'" "heaptrace: java recorder: $2"
}
refused dump-on=sometimes "dump-on= takes major, every-gc, exit or signal, not 'sometimes'"
refused every=0 "every= takes a number from 1 to 1000000000, not '0'"
refused every=1000000001 "every= takes a number from 1 to 1000000000, not '1000000001'"
refused colour=blue "unknown option 'colour=blue' (options: dump-on=WHEN, every=N, verbose, values, sites[=BYTES|all], control=SOCKET, report=FD, output=FILE last)"
refused output= "output= needs a file name"
refused "output=$work/no/such/dir/t.ht" "cannot record: $work/no/such/dir/t.ht: cannot open for writing: No such file or directory"
refused output=/dev/full "cannot record: /dev/full: cannot write the header: No space left on device"

# loaded twice: the first records, the second says it is ignored
agent "$work/agent.out" "output=$work/twice-1.ht" \
	-agentpath:"$agent=output=$work/twice-2.ht" ||
	fail "the agent loaded twice: the JVM failed"
has "$work/agent.out" "the agent loaded twice" \
	"heaptrace: java recorder: loaded twice: the second is ignored"

# no java.management: major collections cannot be told from minor ones
agent "$work/agent.out" "dump-on=major,output=$work/nomgmt.ht" \
	--limit-modules java.base ||
	fail "without java.management: the JVM failed"
has "$work/agent.out" "without java.management" \
	"heaptrace: java recorder: cannot tell major GCs from minor ones (java.management unavailable): dumping after every GC"

# verbose: a line per dump, and one at the end
agent "$work/agent.out" "dump-on=exit,verbose,output=$work/verbose.ht" ||
	fail "verbose: the JVM failed"
grep -qxE "heaptrace: java recorder: dump 0 \(at exit\): [0-9]+ objects, [0-9]+ roots, [0-9.]+ ms \(walk [0-9.]+ ms\)" "$work/agent.out" ||
	fail "verbose: no line for the dump at exit in: $(cat "$work/agent.out")"
has "$work/agent.out" "verbose" \
	"heaptrace: java recorder: 1 dump written to $work/verbose.ht"

# a write that fails on the way: the file-size limit, in bytes as this
# shell counts its blocks, stops the trace there
(trap '' XFSZ; ulimit -f 40; head -c 100000 /dev/zero >"$work/limit") 2>/dev/null
limit=$(($(wc -c <"$work/limit")))
(trap '' XFSZ; ulimit -f 40; echo go | "$java" -XX:-UsePerfData \
	-agentpath:"$agent=output=$work/cut.ht" -cp "$work/classes" \
	KnownHeap 20000 4 4 1000 >"$work/agent.out" 2>&1)
has "$work/agent.out" "a write that fails" \
	"heaptrace: java recorder: $work/cut.ht: byte $limit: cannot write: File too large"

[ $status -eq 0 ] && echo "ok: KnownHeap recorded and checked, $n nodes"
exit $status
