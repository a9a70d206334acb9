#!/bin/sh
# rehash-test.sh - `heaptrace diff` across a HashMap's resize.
#
# Runs Rehash (see Rehash.java) on the machine's JDK: it fills a HashMap
# with N entries and waits, then puts MORE entries, which pass the map's
# threshold, so that it doubles its table and moves its entries to other
# slots and chains, and waits again. jcmd GC.heap_dump takes a dump at
# each wait, and check-rehash.py checks that diff of the two reports the
# real growth as new, within 5%, and the map's entries as one row. With
# RECORD (the JVM agent is built), the same with two recordings: a run
# that stops after N puts and one that goes on for MORE (two traces, so
# diff matches by path there too).
#
# usage: rehash-test.sh HEAPTRACE SOURCE_DIR WORK_DIR [RECORD]
# Exits 77 (skipped) without java, javac, jcmd or python3.
set -u

if [ $# -lt 3 ] || [ $# -gt 4 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR WORK_DIR [RECORD]" >&2
	exit 2
fi
heaptrace=$1 src=$2 work=$3 record=${4:-}
# a default HashMap holds 11,000 entries in 16,384 slots (threshold 12,288)
n=11000 more=2000
status=0

. "$(dirname "$0")/../../lib.sh"
need_tools java javac jcmd python3

. "$(dirname "$0")/java-wrapper.sh"
java_setup "$heaptrace" "$src" Rehash.java
# Rehash reads its map's table through reflection
opens="--add-opens java.base/java.util=ALL-UNNAMED"

# The capacity Rehash printed at its $2nd pause, in file $1.
capacity() {
	sed -n 's/^ready capacity //p' "$1" | sed -n "$2p"
}

# ---- two dumps of one process, taken with jcmd ---------------------------
mkfifo "$work/stdin" || exit 1
java $opens -cp "$work/classes" Rehash $n $more <"$work/stdin" \
	>"$work/rehash.out" 2>"$work/rehash.err" &
pid=$!
exec 3>"$work/stdin"
for k in 1 2; do
	if ! wait_ready "$work/rehash.out" $k; then
		fail "Rehash did not pause ($k): $(cat "$work/rehash.err")"
		break
	fi
	jcmd $pid GC.heap_dump "$work/rehash-$k.hprof" >"$work/jcmd.out" 2>&1 ||
		fail "jcmd GC.heap_dump: $(cat "$work/jcmd.out")"
	echo go >&3
done
exec 3>&-
wait $pid || fail "Rehash exited $?: $(cat "$work/rehash.err")"
before=$(capacity "$work/rehash.out" 1) after=$(capacity "$work/rehash.out" 2)
[ "${after:-0}" -eq $((2 * ${before:-0})) ] && [ "$before" -gt 0 ] ||
	fail "the map did not resize between the dumps (capacity $before, then $after)"
python3 "$src/check-rehash.py" --label "jcmd GC.heap_dump" "$heaptrace" \
	"$work/rehash-1.hprof" "$work/rehash-2.hprof" $n $more ||
	fail "diff across the resize, HPROF"

# ---- two recordings: one run stops after n puts, the other goes on -------
if [ -n "$record" ]; then
	for m in 0 $more; do
		printf 'go\ngo\n' | "$heaptrace" record -q -o "$work/run-$m.ht" \
			--dump-on exit -- "$java" $opens -cp "$work/classes" \
			Rehash $n $m >"$work/run-$m.out" 2>"$work/run-$m.err" ||
			fail "heaptrace record Rehash $n $m: exit $?: $(cat "$work/run-$m.err")"
	done
	[ "$(capacity "$work/run-$more.out" 2)" = "$after" ] ||
		fail "the recorded run did not resize its map"
	python3 "$src/check-rehash.py" --label "two recordings" "$heaptrace" \
		"$work/run-0.ht" "$work/run-$more.ht" $n $more ||
		fail "diff across the resize, two recordings"
fi

[ $status -eq 0 ] && echo "ok: diff across a HashMap's resize, $n + $more entries"
exit $status
