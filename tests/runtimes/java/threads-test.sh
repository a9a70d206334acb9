#!/bin/sh
# threads-test.sh - `heaptrace threads` against a program's known stacks.
#
# Runs ParkedThreads (see ParkedThreads.java) under `heaptrace record`
# and, once its two threads are parked at known methods and lines with
# known locals, takes a dump with the JVM recorder (jcmd JVMTI.data_dump)
# and one with the JVM itself (jcmd GC.heap_dump). check-threads.py checks
# each: the threads in order of what they retain, each one's frames
# (method, file, line, a frame that holds nothing included) and the
# retained sizes of its locals. The two must name parked-1's frames alike,
# word for word: the recorder names frames as the HPROF reader does.
#
# usage: threads-test.sh HEAPTRACE SOURCE_DIR WORK_DIR
# Exits 77 (skipped) without java, javac, jcmd or python3. Under
# AddressSanitizer the JVM runs through a wrapper (java-wrapper.sh).
set -u

if [ $# -ne 3 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR WORK_DIR" >&2
	exit 2
fi
heaptrace=$1 src=$2 work=$3
big=4000000 small=2000000 chunks=500
status=0

. "$(dirname "$0")/../../lib.sh"
need_tools java javac jcmd python3

. "$(dirname "$0")/java-wrapper.sh"
java_setup "$heaptrace" "$src" ParkedThreads.java

trace=$work/parked.ht
mkfifo "$work/stdin" || exit 1
"$heaptrace" record -q -o "$trace" --dump-on exit -- "$java" -Xmx256m \
	-cp "$work/classes" ParkedThreads $big $small $chunks \
	<"$work/stdin" >"$work/parked.out" 2>"$work/parked.err" &
record=$!
exec 3>"$work/stdin"
if wait_ready "$work/parked.out" && pid=$(child_of $record); then
	jcmd "$pid" JVMTI.data_dump >"$work/data_dump.txt" 2>&1 ||
		fail "jcmd JVMTI.data_dump: $(cat "$work/data_dump.txt")"
	jcmd "$pid" GC.heap_dump "$work/parked.hprof" \
		>"$work/heap_dump.txt" 2>&1 ||
		fail "jcmd GC.heap_dump: $(cat "$work/heap_dump.txt")"
else
	fail "ParkedThreads did not get ready: $(cat "$work/parked.err")"
fi
echo go >&3
exec 3>&-
wait $record || fail "heaptrace record exited $?: $(cat "$work/parked.err")"
grep -q '^done' "$work/parked.out" || fail "ParkedThreads did not finish"

python3 "$src/check-threads.py" "$heaptrace" "$trace" 0 $big $small \
	$chunks "$work/frames-recorder.txt" ||
	fail "threads of the recorder's dump"
python3 "$src/check-threads.py" "$heaptrace" "$work/parked.hprof" 0 $big \
	$small $chunks "$work/frames-hprof.txt" ||
	fail "threads of the HPROF dump"
if [ -s "$work/frames-hprof.txt" ] && [ -s "$work/frames-recorder.txt" ]; then
	diff -u "$work/frames-hprof.txt" "$work/frames-recorder.txt" >&2 ||
		fail "the recorder names parked-1's frames otherwise than the HPROF dump"
else
	fail "no frames of parked-1 to compare"
fi

[ $status -eq 0 ] && echo "ok: threads of ParkedThreads, recorded and dumped"
exit $status
