#!/bin/sh
# levels-test.sh - reachability levels on a real JVM's heap.
#
# Runs RefLevels (see RefLevels.java) with a young generation big enough
# that nothing is collected while it builds its heap, and at the point
# where it waits takes two HPROF dumps with jcmd: one with -all, which
# forces no GC, so every referent is still there (levels.hprof), then a
# live one after the full GC jcmd makes (live.hprof). check-levels.py
# holds heaptrace's levels on levels.hprof to what the program built;
# check-visualvm.py holds its retained sizes at the strong level on
# live.hprof to VisualVM's heap library (Debian's visualvm package; that
# part is skipped without it). VisualVM counts referrers no root reaches
# (the -all dump's garbage, such as the arrays an ArrayList outgrew): its
# figures are compared on the live dump. With `record` (where the JVMTI
# agent is built), the program runs again under heaptrace record, which
# dumps at exit, and the levels it reads must be those of the HPROF dump.
#
# usage: levels-test.sh HEAPTRACE SOURCE_DIR WORK_DIR [record]
# Exits 77 (skipped) without java, javac, jcmd or python3.
set -u

if [ $# -lt 3 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR WORK_DIR [record]" >&2
	exit 2
fi
heaptrace=$1 src=$2 work=$3 record=${4:-}
status=0
# no GC while the heap is built: 400 MB of young generation for 8 MB
jvm_options="-Xms512m -Xmx512m -Xmn400m -XX:+UseSerialGC"

. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/java-wrapper.sh"
. "$(dirname "$0")/visualvm.sh"
need_tools java javac jcmd python3

rm -rf "$work"
mkdir -p "$work/classes" || exit 1
# under AddressSanitizer the recorded JVM needs its runtime preloaded
java_for_tests "$heaptrace" "$work" || exit 1
javac -nowarn -d "$work/classes" "$src/RefLevels.java" 2>"$work/javac.err" || {
	echo "FAIL: javac RefLevels.java: $(cat "$work/javac.err")" >&2
	exit 1
}

rm -f "$work/stdin"
mkfifo "$work/stdin" || exit 1
# shellcheck disable=SC2086 # the options are words
java $jvm_options -cp "$work/classes" RefLevels <"$work/stdin" \
	>"$work/levels.out" 2>"$work/levels.err" &
pid=$!
exec 3>"$work/stdin"
if wait_ready "$work/levels.out"; then
	jcmd $pid GC.heap_dump -all "$work/levels.hprof" >"$work/jcmd.out" 2>&1 ||
		fail "jcmd GC.heap_dump -all: $(cat "$work/jcmd.out")"
	jcmd $pid GC.heap_dump "$work/live.hprof" >"$work/jcmd.out" 2>&1 ||
		fail "jcmd GC.heap_dump: $(cat "$work/jcmd.out")"
else
	fail "RefLevels did not get ready: $(cat "$work/levels.err")"
fi
echo go >&3
exec 3>&-
wait $pid || fail "RefLevels exited $?: $(cat "$work/levels.err")"
[ -s "$work/levels.hprof" ] && [ -s "$work/live.hprof" ] || {
	fail "no heap dumps"
	exit 1
}

python3 "$src/check-levels.py" "$heaptrace" "$work/levels.hprof" \
	>"$work/levels.hprof.json" || fail "levels.hprof"
tail -1 "$work/levels.hprof.json" | sed 's/^/levels.hprof: /'

visualvm_retained "$work/live.hprof" "$work/visualvm.out" "$work/classes"
case $? in
0)
	python3 "$src/check-visualvm.py" "$heaptrace" "$work/live.hprof" \
		"$work/visualvm.out" || fail "live.hprof against VisualVM"
	;;
77) echo "VisualVM's heap library not installed (Debian package visualvm): not compared" ;;
*) fail "VisualVM's heap library could not read live.hprof" ;;
esac

if [ "$record" = record ]; then
	# shellcheck disable=SC2086
	echo go | "$heaptrace" record -q -o "$work/levels.ht" --dump-on exit -- \
		"$java" $jvm_options -cp "$work/classes" RefLevels \
		>"$work/record.out" 2>"$work/record.err" ||
		fail "heaptrace record: $(cat "$work/record.err")"
	python3 "$src/check-levels.py" "$heaptrace" "$work/levels.ht" \
		>"$work/levels.ht.json" || fail "levels.ht"
	tail -1 "$work/levels.ht.json" | sed 's/^/levels.ht: /'
	# the levels below strong are the program's: the same in both (the
	# JVM's own objects, strongly held or garbage, differ in number)
	python3 - "$work/levels.hprof.json" "$work/levels.ht.json" <<'PY' ||
import json, sys
a, b = (json.loads(open(p).read().splitlines()[-1]) for p in sys.argv[1:3])
weaker = ("soft", "weak", "finalizer", "phantom")
sys.exit(0 if all(a[l] == b[l] for l in weaker) else 1)
PY
		fail "the recorder's levels differ from the HPROF dump's"
fi

[ $status -eq 0 ] && echo "ok: RefLevels' references at each level"
exit $status
