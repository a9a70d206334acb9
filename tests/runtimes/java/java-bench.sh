#!/bin/sh
# java-bench.sh - what recording a Java program with the JVMTI agent costs,
# and that a recording never hangs.
#
# 1. Wall time of KnownHeap with a list of N nodes (default 2,000,000; a
#    tree of 2^16 - 1 nodes, 1,000,000 garbage objects), from start to exit
#    (released at once): without a recorder, and under `heaptrace record`
#    with dumps at major GCs only, at every GC, and at exit only; the
#    median of RUNS runs each, with the trace's size, GCs and dumps.
# 2. REPEAT recordings in a row of a small KnownHeap (dumps at every GC),
#    each limited to 120 s: how many finished cleanly, failed, or hung.
#
# usage: java-bench.sh HEAPTRACE SOURCE_DIR WORK_DIR
# HT_BENCH_JAVA_N, HT_BENCH_RUNS (default 3), HT_BENCH_REPEAT (default 50)
# change the sizes. Exits 77 without a JDK or under a sanitizer.
set -u

if [ $# -ne 3 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR WORK_DIR" >&2
	exit 2
fi
heaptrace=$1 src=$2 work=$3
n=${HT_BENCH_JAVA_N:-2000000}
runs=${HT_BENCH_RUNS:-3}
repeat=${HT_BENCH_REPEAT:-50}

. "$(dirname "$0")/../../lib.sh"
need_tools java javac timeout
case ${HT_SANITIZE:-none} in
none) ;;
*) echo "SKIP: timings under a sanitizer mean nothing"; exit 77 ;;
esac

rm -rf "$work"
mkdir -p "$work/classes" || exit 1
javac -d "$work/classes" "$src/KnownHeap.java" || exit 1
program="java -Xmx1g -cp $work/classes KnownHeap $n 16 64 1000000"

now() {
	date +%s.%N
}

# median of the numbers on standard input
median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# time_run LABEL [heaptrace record options]: RUNS runs, prints the median
time_run() {
	label=$1
	shift
	: >"$work/times"
	for i in $(seq "$runs"); do
		t0=$(now)
		if [ "$label" = "no recorder" ]; then
			# shellcheck disable=SC2086
			echo go | $program >/dev/null 2>"$work/err" || {
				cat "$work/err"
				return 1
			}
		else
			# shellcheck disable=SC2086
			echo go | "$heaptrace" record -q -o "$work/bench.ht" "$@" \
				-- $program >/dev/null 2>"$work/err" || {
				cat "$work/err"
				return 1
			}
		fi
		t1=$(now)
		echo "$t0 $t1" | awk '{ printf "%.3f\n", $2 - $1 }' >>"$work/times"
	done
	secs=$(median <"$work/times")
	if [ "$label" = "no recorder" ]; then
		base=$secs
		printf '%-22s %8.2f s\n' "$label" "$secs"
		return 0
	fi
	info=$("$heaptrace" stats --format json "$work/bench.ht" | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(len(s["gcs"]), len(s["dumps"]))' 2>/dev/null)
	bytes=$(wc -c <"$work/bench.ht" | tr -d ' ')
	set -- $info
	printf '%-22s %8.2f s  x%-6s trace %s bytes, %s GCs, %s dumps\n' \
		"$label" "$secs" "$(echo "$secs $base" | awk '{ printf "%.1f", $1 / $2 }')" \
		"$bytes" "${1:-?}" "${2:-?}"
}

echo "KnownHeap: $n list nodes, 65535 tree nodes, 1000000 garbage; median of $runs"
time_run "no recorder" || exit 1
time_run "dumps at majors" --dump-on major || exit 1
time_run "dumps at every GC" --dump-on every-gc || exit 1
time_run "dump at exit only" --dump-on exit || exit 1

ok=0 failed=0 hung=0
i=0
while [ $i -lt "$repeat" ]; do
	i=$((i + 1))
	echo go | timeout -k 5 120 "$heaptrace" record -q -o "$work/repeat.ht" \
		--dump-on every-gc -- java -Xmx64m -cp "$work/classes" KnownHeap \
		20000 10 8 300000 >/dev/null 2>"$work/err"
	rc=$?
	if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
		hung=$((hung + 1))
		echo "run $i hung" >&2
	elif [ $rc -ne 0 ] || ! "$heaptrace" check "$work/repeat.ht" >/dev/null 2>&1; then
		failed=$((failed + 1))
		echo "run $i failed ($rc):" >&2
		cat "$work/err" >&2
	else
		ok=$((ok + 1))
	fi
done
echo "$repeat recordings in a row: $ok clean, $failed failed, $hung hung"
[ $failed -eq 0 ] && [ $hung -eq 0 ]
