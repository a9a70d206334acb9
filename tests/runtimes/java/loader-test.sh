#!/bin/sh
# loader-test.sh - what a class loader retains, on a real JVM.
#
# Runs LoaderHeap (LoaderHeap.java), whose own loader defines Kept,
# Dropped1 and Dropped2 from a directory of their own and keeps an
# instance of Kept only, and dumps it at the point where it waits: with
# jcmd GC.heap_dump, and, where the JVMTI agent is built, with
# `heaptrace record`. check-loader.py then counts by hand, from the
# objects and sizes of each dump, what the loader alone keeps (the class
# objects of Dropped1 and Dropped2 and their static arrays, its classes
# list and its own parts, not Kept's class), and checks heaptrace's
# retained size against it, and that every class object whose instance
# is reachable is reachable. The .hprof's figures and the trace's must be
# those of one program: the same objects, at the same sizes.
#
# usage: loader-test.sh HEAPTRACE SOURCE_DIR WORK_DIR [AGENT]
# AGENT is "agent" when the JVMTI agent is built. Exits 77 (skipped)
# without java, javac, jcmd or python3.
set -u

if [ $# -lt 3 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR WORK_DIR [agent]" >&2
	exit 2
fi
heaptrace=$1 src=$2 work=$3 agent=${4:-}
status=0

. "$(dirname "$0")/../../lib.sh"
need_tools java javac jcmd python3

. "$(dirname "$0")/java-wrapper.sh"
java_setup "$heaptrace" "$src" LoaderHeap.java
# the loaded classes in a directory of their own, out of the class path,
# so that the application class loader cannot find them first
javac -d "$work/loaded" "$src/Kept.java" "$src/Dropped.java" || {
	echo "FAIL: javac Kept.java Dropped.java" >&2
	exit 1
}

# the HPROF dump, taken by jcmd while LoaderHeap waits
mkfifo "$work/stdin" || exit 1
java -cp "$work/classes" LoaderHeap "$work/loaded" <"$work/stdin" \
	>"$work/hprof.out" 2>"$work/hprof.err" &
pid=$!
exec 3>"$work/stdin"
if wait_ready "$work/hprof.out"; then
	jcmd $pid GC.heap_dump "$work/loader.hprof" >"$work/jcmd.out" 2>&1 ||
		fail "jcmd GC.heap_dump: $(cat "$work/jcmd.out")"
else
	fail "LoaderHeap did not get ready: $(cat "$work/hprof.err")"
fi
echo go >&3
exec 3>&-
wait $pid || fail "LoaderHeap exited $?: $(cat "$work/hprof.err")"
if [ -s "$work/loader.hprof" ]; then
	python3 "$src/check-loader.py" "$heaptrace" "$work/loader.hprof" ||
		fail "loader.hprof"
fi

# the same program under the JVMTI agent, dumped as it exits
if [ "$agent" = agent ]; then
	echo go | "$heaptrace" record -q -o "$work/loader.ht" \
		--dump-on exit -- "$java" -cp "$work/classes" LoaderHeap \
		"$work/loaded" >"$work/record.out" 2>"$work/record.err" ||
		fail "heaptrace record LoaderHeap: $(cat "$work/record.err")"
	python3 "$src/check-loader.py" "$heaptrace" "$work/loader.ht" ||
		fail "loader.ht"
fi

[ $status -eq 0 ] && echo "ok: what LoaderHeap's loader retains, by hand"
exit $status
