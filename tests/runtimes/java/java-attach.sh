#!/bin/sh
# java-attach.sh - heaptrace record --pid on a real JVM: KnownHeap (see
# KnownHeap.java) started on its own, recorded once it has built its heap.
#
# 1. Attached at KnownHeap's paused point: jcmd GC.class_histogram, then
#    jcmd JVMTI.data_dump (which returns once the agent has taken its
#    dump), then SIGTERM to heaptrace, which stops the recording with a
#    last dump; the trace checks clean, holds those two dumps, and the
#    first has the program's known objects (check-knownheap.py, against
#    the histogram); the JVM runs on and finishes as if nothing happened.
# 2. SIGUSR1 to heaptrace asks for a dump, SIGINT stops: two dumps. Then
#    five recordings in a row of that JVM, each with its one GC.
# 3. The JVM exits during the recording: heaptrace says so, the trace is
#    closed at VM death and checks clean, with the dump at exit.
#    Killed: the JVM, then heaptrace (whose agent closes the trace anyway).
# 4. --duration stops the recording by itself.
#    Then a second recording of the same JVM, checked the same way, and a
#    third attach, during it, refused.
# 5. What record says, word for word (DIAGNOSTICS in heaptrace-record(1)): an
#    attach to a JVM launched with the agent, a process that is not a JVM,
#    one that does not exist, one of another user (when run as root), one
#    whose attach listener is off, and the usage errors of --pid and
#    --duration.
#
# usage: java-attach.sh HEAPTRACE SOURCE_DIR WORK_DIR
# Exits 77 (skipped) without java, javac, jcmd or python3.
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

# start_jvm NAME N DEPTH LEAVES GARBAGE: KnownHeap on its own, its
# standard input the FIFO $work/NAME.in held open on descriptor 3 (a line
# there lets it exit); $jvm is its pid once it has printed "ready".
start_jvm() {
	name=$1
	shift
	rm -f "$work/$name.in"
	mkfifo "$work/$name.in" || return 1
	"$java" -Xmx256m -cp "$work/classes" KnownHeap "$@" \
		<"$work/$name.in" >"$work/$name.out" 2>"$work/$name.err" &
	jvm=$!
	exec 3>"$work/$name.in"
	wait_ready "$work/$name.out" || {
		fail "$name: KnownHeap did not get ready: $(cat "$work/$name.err")"
		return 1
	}
}

# end_jvm NAME: lets KnownHeap finish; it must exit 0 having printed done.
end_jvm() {
	echo go >&3
	exec 3>&-
	wait "$jvm" || fail "$1: KnownHeap exited $?: $(cat "$work/$1.err")"
	grep -q '^done' "$work/$1.out" || fail "$1: KnownHeap did not finish"
}

# attach NAME [OPTIONS...]: heaptrace record --pid $jvm -o $work/NAME.ht in
# the background, its standard error in $work/NAME.rec; $rec its pid once
# it says it is recording.
attach() {
	name=$1
	shift
	"$heaptrace" record --pid "$jvm" -o "$work/$name.ht" "$@" \
		2>"$work/$name.rec" &
	rec=$!
	wait_lines "$work/$name.rec" '^heaptrace record: attached' ||
		fail "$name: heaptrace did not attach: $(cat "$work/$name.rec")"
}

# finished NAME: heaptrace record exited 0, and the trace checks clean.
finished() {
	wait "$rec"
	rc=$?
	[ $rc -eq 0 ] || fail "$1: heaptrace record exited $rc: $(cat "$work/$1.rec")"
	"$heaptrace" check "$work/$1.ht" >"$work/$1.check" 2>&1 ||
		fail "$1: heaptrace check: $(cat "$work/$1.check")"
}

# dumps NAME: the dumps of the trace, one line each: its number of
# KnownHeap$Node objects.
dumps() {
	"$heaptrace" stats --format json "$work/$1.ht" | python3 -c '
import json, sys
for d in json.load(sys.stdin)["dumps"]:
    print(sum(c["count"] for c in d["classes"] if c["name"] == "KnownHeap$Node"))'
}

# has FILE WHAT LINE: FILE has LINE among its lines.
has() {
	grep -qxF -- "$3" "$1" || fail "$2: no line '$3' in: $(cat "$1")"
}

# ---- 1. a dump at the paused point, and the stop -------------------------

if start_jvm paused $n $depth $leaves $garbage; then
	attach paused --dump-on exit
	jcmd "$jvm" GC.class_histogram >"$work/histogram.txt" 2>&1 ||
		fail "jcmd GC.class_histogram: $(cat "$work/histogram.txt")"
	jcmd "$jvm" JVMTI.data_dump >"$work/data_dump.txt" 2>&1 ||
		fail "jcmd JVMTI.data_dump: $(cat "$work/data_dump.txt")"
	kill -TERM "$rec"
	finished paused
	has "$work/paused.rec" "the stop" \
		"heaptrace record: attached to process $jvm, recording into $work/paused.ht until SIGINT or SIGTERM"
	grep -q "^heaptrace record: wrote $work/paused.ht: .*, 2 dumps, " \
		"$work/paused.rec" ||
		fail "the stop: no summary of 2 dumps in: $(cat "$work/paused.rec")"
	[ "$(dumps paused | tr '\n' ' ')" = "$n $n " ] ||
		fail "the stop: the dumps' list nodes are $(dumps paused | tr '\n' ' '), not $n twice"
	python3 "$src/check-knownheap.py" "$heaptrace" "$work/paused.ht" 0 \
		"$work/histogram.txt" $n $depth $leaves ||
		fail "the paused-point dump of the attached recording"
	"$heaptrace" cat "$work/paused.ht" 2>/dev/null | grep -q 'attached: "yes"' ||
		fail "the trace's header does not say attached: yes"

	# ---- a second recording of the same JVM: the agent, which HotSpot
	# cannot unload, records anew, its classes and fields declared again
	# in the new trace; a third attach meanwhile is refused
	attach again --dump-on exit
	jcmd "$jvm" GC.class_histogram >"$work/histogram2.txt" 2>&1 ||
		fail "jcmd GC.class_histogram: $(cat "$work/histogram2.txt")"
	jcmd "$jvm" JVMTI.data_dump >"$work/data_dump.txt" 2>&1 ||
		fail "jcmd JVMTI.data_dump: $(cat "$work/data_dump.txt")"
	"$heaptrace" record --pid "$jvm" -o "$work/third.ht" >"$work/third.out" 2>&1
	rc=$?
	[ $rc -eq 3 ] || fail "an attach during an attached recording: exit status $rc, not 3"
	has "$work/third.out" "an attach during an attached recording" \
		"heaptrace: java recorder: this JVM is being recorded by an attached agent already"
	has "$work/third.out" "an attach during an attached recording" \
		"heaptrace: jcmd could not load the agent into process $jvm: return code: -1"
	kill -TERM "$rec"
	finished again
	[ "$(dumps again | tr '\n' ' ')" = "$n $n " ] ||
		fail "the second recording: the dumps' list nodes are $(dumps again | tr '\n' ' '), not $n twice"
	python3 "$src/check-knownheap.py" "$heaptrace" "$work/again.ht" 0 \
		"$work/histogram2.txt" $n $depth $leaves ||
		fail "the paused-point dump of the second attached recording"
	end_jvm paused
fi

# ---- 2. SIGUSR1 asks for a dump, SIGINT stops ----------------------------

if start_jvm usr1 1000 4 4 1000; then
	attach usr1 --dump-on exit
	# in that order on the socket: the dump, then the stop
	kill -USR1 "$rec"
	kill -INT "$rec"
	finished usr1
	[ "$(dumps usr1 | tr '\n' ' ')" = "1000 1000 " ] ||
		fail "SIGUSR1: the dumps' list nodes are $(dumps usr1 | tr '\n' ' '), not 1000 twice"
	# recordings in a row of one JVM, a collection in each (jcmd GC.run):
	# every one records its GC and dumps after it (the dump that follows
	# the GC, or the last one, which a stop just after the GC leaves alone
	# to stand for both)
	for cycle in 1 2 3 4 5; do
		attach cycle-$cycle --dump-on every-gc
		jcmd "$jvm" GC.run >/dev/null 2>&1 || fail "jcmd GC.run"
		kill -TERM "$rec"
		finished cycle-$cycle
		got=$("$heaptrace" stats --format json "$work/cycle-$cycle.ht" |
			python3 -c '
import json, sys
s = json.load(sys.stdin)
print(len(s["gcs"]), len(s["dumps"]))')
		case $got in
		"1 1" | "1 2") ;;
		*) fail "recording $cycle in a row: GCs and dumps are $got, not 1 and 1 or 2" ;;
		esac
	done
	end_jvm usr1
fi

# ---- 3. the JVM exits during the recording --------------------------------

if start_jvm exits 1000 4 4 1000; then
	attach exits --dump-on every-gc
	end_jvm exits
	finished exits
	has "$work/exits.rec" "the JVM's exit" \
		"heaptrace record: process $jvm ended the recording: the JVM exited"
	# the list is KnownHeap's static field's to the end
	[ "$(dumps exits | tail -n 1)" = 1000 ] ||
		fail "the JVM's exit: the last dump has $(dumps exits | tail -n 1) list nodes, not 1000"
fi

# killed: the JVM (by kill -9) ends the recording as its exit does, the
# trace cut there but readable; heaptrace (by kill -9) closes its end of
# the socket all the same, so the agent stops: the last dump is taken and
# the trace closed, and the JVM can be recorded again
if start_jvm killed 1000 4 4 1000; then
	attach jvm-killed --dump-on exit
	jcmd "$jvm" JVMTI.data_dump >/dev/null 2>&1
	kill -KILL "$jvm"
	wait "$rec"
	rc=$?
	[ $rc -eq 0 ] || fail "the JVM killed: heaptrace record exited $rc: $(cat "$work/jvm-killed.rec")"
	has "$work/jvm-killed.rec" "the JVM killed" \
		"heaptrace record: process $jvm ended the recording: the JVM exited"
	"$heaptrace" stats "$work/jvm-killed.ht" >/dev/null 2>&1 ||
		fail "the JVM killed: the trace does not read"
	exec 3>&-
	wait "$jvm" 2>/dev/null
fi
if start_jvm survives 1000 4 4 1000; then
	attach heaptrace-killed --dump-on exit
	kill -KILL "$rec"
	wait "$rec" 2>/dev/null
	# closed: it has its index (check says "no index" of one cut short)
	tries=0
	until "$heaptrace" check "$work/heaptrace-killed.ht" \
		>"$work/killed.check" 2>&1 &&
		! grep -q "no index" "$work/killed.check"; do
		tries=$((tries + 1))
		[ $tries -le 100 ] || break
		sleep 0.1
	done
	[ "$(dumps heaptrace-killed | tr '\n' ' ')" = "1000 " ] ||
		fail "heaptrace killed: the agent did not close the trace with its last dump: $("$heaptrace" check "$work/heaptrace-killed.ht" 2>&1)"
	attach after-kill --dump-on exit
	kill -TERM "$rec"
	finished after-kill
	end_jvm survives
fi

# ---- 4. --duration --------------------------------------------------------

if start_jvm duration 1000 4 4 1000; then
	"$heaptrace" record --pid "$jvm" -o "$work/duration.ht" --duration 1 \
		-q 2>"$work/duration.rec" &
	rec=$!
	finished duration
	[ "$(dumps duration | tr '\n' ' ')" = "1000 " ] ||
		fail "--duration: the dumps' list nodes are $(dumps duration | tr '\n' ' '), not 1000 once"
	[ -s "$work/duration.rec" ] &&
		fail "--duration -q: heaptrace said: $(cat "$work/duration.rec")"
	end_jvm duration
fi

# ---- 5. what record says, word for word -----------------------------------

# a JVM that heaptrace record started with the agent: it has one already
mkfifo "$work/launched.in" || exit 1
"$heaptrace" record -q -o "$work/launched.ht" --dump-on exit -- "$java" \
	-cp "$work/classes" KnownHeap 1000 4 4 1000 <"$work/launched.in" \
	>"$work/launched.out" 2>"$work/launched.err" &
launched=$!
exec 3>"$work/launched.in"
if wait_ready "$work/launched.out"; then
	jvm=$(ps -o pid= --ppid $launched | tr -d ' ')
	"$heaptrace" record --pid "$jvm" -o "$work/x.ht" >"$work/err" 2>&1
	rc=$?
	[ $rc -eq 3 ] || fail "a JVM launched with the agent: exit status $rc, not 3"
	has "$work/err" "a JVM launched with the agent" \
		"heaptrace: java recorder: this JVM runs with the agent already"
else
	fail "KnownHeap did not get ready under heaptrace record"
fi
echo go >&3
exec 3>&-
wait $launched || fail "the recording of the launched JVM failed: $(cat "$work/launched.err")"
"$heaptrace" check "$work/launched.ht" >/dev/null 2>&1 ||
	fail "the launched JVM's own recording does not check after the refused attach"

"$heaptrace" record --pid $$ -o "$work/x.ht" >"$work/err" 2>&1
rc=$?
[ $rc -eq 3 ] || fail "not a JVM: exit status $rc, not 3"
has "$work/err" "not a JVM" \
	"heaptrace: cannot attach to process $$ ($(cat /proc/$$/comm)): it is neither a JVM nor a .NET process; only a running JVM or .NET (CoreCLR) process can be recorded with --pid"

sh -c 'exit 0' &
gone=$!
wait $gone
"$heaptrace" record --pid $gone -o "$work/x.ht" >"$work/err" 2>&1
rc=$?
[ $rc -eq 3 ] || fail "no such process: exit status $rc, not 3"
has "$work/err" "no such process" \
	"heaptrace: cannot attach to process $gone: there is no such process"

# a JVM of another user: run as root, the test starts one as nobody
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	chmod -R a+rX "$work/classes"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$java" -cp \
		"$work/classes" KnownHeap 10 2 2 10 </dev/zero >/dev/null 2>&1 &
	other=$!
	sleep 0.3
	"$heaptrace" record --pid $other -o "$work/x.ht" >"$work/err" 2>&1
	rc=$?
	kill $other 2>/dev/null
	wait $other 2>/dev/null
	[ $rc -eq 3 ] || fail "another user's JVM: exit status $rc, not 3"
	has "$work/err" "another user's JVM" \
		"heaptrace: cannot attach to process $other (java): it runs as uid 65534, heaptrace as uid 0; run heaptrace as the process's user, as whom the recorder writes the trace"
fi

# a JVM whose attach listener is off: refused at once, not after jcmd's
# ten seconds; turned back on by a later option, attached
for flags in "-XX:+DisableAttachMechanism" \
	"-XX:+DisableAttachMechanism -XX:-DisableAttachMechanism"; do
	mkfifo "$work/noattach.in" 2>/dev/null
	# the last JVM's "ready" must not be taken for this one's: the shell
	# truncates the file only once the new process is forked
	rm -f "$work/noattach.out"
	# shellcheck disable=SC2086
	"$java" $flags -cp "$work/classes" KnownHeap 10 2 2 10 \
		<"$work/noattach.in" >"$work/noattach.out" 2>&1 &
	jvm=$!
	exec 3>"$work/noattach.in"
	wait_ready "$work/noattach.out" ||
		fail "KnownHeap $flags did not get ready"
	"$heaptrace" record --pid "$jvm" -o "$work/noattach.ht" --duration 0.1 \
		>"$work/err" 2>&1
	rc=$?
	case $flags in
	*-XX:-*)
		[ $rc -eq 0 ] || fail "$flags: exit status $rc, not 0: $(cat "$work/err")" ;;
	*)
		[ $rc -eq 3 ] || fail "$flags: exit status $rc, not 3"
		has "$work/err" "$flags" \
			"heaptrace: cannot attach to process $jvm (java): it runs with -XX:+DisableAttachMechanism" ;;
	esac
	echo go >&3
	exec 3>&-
	wait "$jvm"
done
rm -f "$work/noattach.out"
JAVA_TOOL_OPTIONS=-XX:+DisableAttachMechanism "$java" -cp "$work/classes" \
	KnownHeap 10 2 2 10 <"$work/noattach.in" >"$work/noattach.out" 2>&1 &
jvm=$!
exec 3>"$work/noattach.in"
wait_ready "$work/noattach.out" ||
	fail "KnownHeap with JAVA_TOOL_OPTIONS did not get ready"
"$heaptrace" record --pid "$jvm" -o "$work/noattach.ht" >"$work/err" 2>&1
rc=$?
[ $rc -eq 3 ] || fail "JAVA_TOOL_OPTIONS=-XX:+DisableAttachMechanism: exit status $rc, not 3"
has "$work/err" "JAVA_TOOL_OPTIONS=-XX:+DisableAttachMechanism" \
	"heaptrace: cannot attach to process $jvm (java): it runs with -XX:+DisableAttachMechanism"
echo go >&3
exec 3>&-
wait "$jvm"

"$heaptrace" record --pid 1 -o "$work/x.ht" -- java -version >"$work/err" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "--pid and a program: exit status $rc, not 2"
has "$work/err" "--pid and a program" \
	"heaptrace record: --pid records a process that runs already: no program to run, not 'java'"
"$heaptrace" record --duration 5 -- java -version >"$work/err" 2>&1
rc=$?
[ $rc -eq 2 ] || fail "--duration alone: exit status $rc, not 2"
has "$work/err" "--duration alone" "heaptrace record: --duration goes with --pid"
for bad in 0 -3 x 1e8; do
	"$heaptrace" record --pid 1 --duration "$bad" >"$work/err" 2>&1
	has "$work/err" "--duration $bad" \
		"heaptrace record: --duration takes seconds, more than 0 and at most 10000000, not '$bad'"
done
for bad in 0 -1 abc 99999999999; do
	"$heaptrace" record --pid "$bad" >"$work/err" 2>&1
	has "$work/err" "--pid $bad" \
		"heaptrace record: --pid takes a process id, not '$bad'"
done

[ $status -eq 0 ] && echo "ok: record --pid on KnownHeap: attached, dumped, stopped, checked"
exit $status
