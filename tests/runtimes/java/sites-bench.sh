#!/bin/sh
# sites-bench.sh - what allocation sites cost on the JVM, beside what the
# JVM's own sampler costs.
#
# AllocHeavy (AllocHeavy.java) allocates 5 objects a round for
# ROUNDS rounds. Its wall time and CPU time (user + system, the JVM's
# threads and the agent's writer together), the median of RUNS runs
# each: without a recorder; under `heaptrace record --dump-on exit`
# (the agent, a dump at exit); the same with --sites (JVMTI's default
# interval, 512 KiB); and under JFR with only its allocation samples
# (jdk.ObjectAllocationSample, at JFR's default throttle of 150 a
# second), written to a file. Prints each with its overhead against the
# bare run, in all and beyond its start (JFR's start alone takes seconds:
# each is also timed on one round), and the samples each recorder took.
#
# usage: sites-bench.sh HEAPTRACE SOURCE_DIR WORK_DIR
# HT_BENCH_ROUNDS (default 30000000) and HT_BENCH_RUNS (default 5)
# change the sizes. Exits 77 without a JDK or under a sanitizer.
set -u

if [ $# -ne 3 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR WORK_DIR" >&2
	exit 2
fi
heaptrace=$1 src=$2 work=$3
rounds=${HT_BENCH_ROUNDS:-30000000}
runs=${HT_BENCH_RUNS:-5}

. "$(dirname "$0")/../../lib.sh"
need_tools java javac
case ${HT_SANITIZE:-none} in
none) ;;
*) echo "SKIP: timings under a sanitizer mean nothing"; exit 77 ;;
esac

rm -rf "$work"
mkdir -p "$work/classes" || exit 1
javac -d "$work/classes" "$src/AllocHeavy.java" || exit 1
# JFR's allocation samples alone, as its default settings take them
cat >"$work/alloc-sample.jfc" <<'EOF'
<?xml version="1.0" encoding="UTF-8"?>
<configuration version="2.0" label="allocation samples">
  <event name="jdk.ObjectAllocationSample">
    <setting name="enabled">true</setting>
    <setting name="throttle">150/s</setting>
    <setting name="stackTrace">true</setting>
  </event>
</configuration>
EOF

# median of the numbers on standard input
median() {
	sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

# measure LABEL COMMAND...: RUNS runs; sets $wall and $cpu, the medians
measure() {
	label=$1
	shift
	: >"$work/$label.times"
	i=0
	while [ $i -lt "$runs" ]; do
		# start, end, and the children's user and system time as the
		# shell's times gives them (1m2.345s)
		sh -c '
			t=$1
			shift
			s=$(date +%s.%N)
			"$@" >/dev/null 2>&1 || exit 1
			e=$(date +%s.%N)
			times >"$t"
			echo "$s $e $(tail -n 1 "$t")"
		' sh "$work/times" "$@" >>"$work/$label.times" ||
			{ echo "FAIL: $label: $*" >&2; exit 1; }
		i=$((i + 1))
	done
	wall=$(awk '{ printf "%.3f\n", $2 - $1 }' "$work/$label.times" | median)
	cpu=$(awk 'function sec(t, p) {
		split(t, p, "m")
		return p[1] * 60 + substr(p[2], 1, length(p[2]) - 1)
	}
	{ printf "%.3f\n", sec($3) + sec($4) }' "$work/$label.times" | median)
}

# report LABEL: the figures of LABEL against the bare run's, in all and
# beyond each one's start (the same run of a single round: JFR's own start
# takes seconds)
report() {
	awk -v l="$1" -v w="$wall" -v c="$cpu" -v bw="$bare_wall" \
	    -v bc="$bare_cpu" -v w1="$start_wall" -v bw1="$bare_start_wall" '
	BEGIN {
		printf "%-22s wall %6.2f s (%+6.1f%%)  cpu %6.2f s (%+6.1f%%)  " \
		       "wall beyond its start %+6.1f%%\n", l, w,
		       100 * (w - bw) / bw, c, 100 * (c - bc) / bc,
		       100 * ((w - w1) - (bw - bw1)) / (bw - bw1)
	}'
}

# bench LABEL COMMAND...: measures COMMAND with ROUNDS and with 1 round
# (COMMAND ends with the program's arguments, given here)
bench() {
	b_label=$1
	shift
	measure "$b_label-start" "$@" 1 100000
	start_wall=$wall
	measure "$b_label" "$@" "$rounds" 100000
}

program="java -Xmx512m -cp $work/classes AllocHeavy"
bench bare $program
bare_wall=$wall bare_cpu=$cpu bare_start_wall=$start_wall
report "bare"
bench record "$heaptrace" record -q -o "$work/record.ht" \
	--dump-on exit -- $program
report "record"
bench sites "$heaptrace" record -q -o "$work/sites.ht" \
	--dump-on exit --sites -- $program
report "record --sites"
bench jfr java -XX:StartFlightRecording:filename="$work/alloc.jfr",settings="$work/alloc-sample.jfc" \
	-Xmx512m -cp "$work/classes" AllocHeavy
report "JFR allocation samples"

samples=$("$heaptrace" cat "$work/sites.ht" | grep -c 'object_allocated:.*stack:')
jfr_samples=$(jfr summary "$work/alloc.jfr" 2>/dev/null |
	awk '$1 == "jdk.ObjectAllocationSample" { print $2 }')
echo "samples: heaptrace $samples (last run), JFR ${jfr_samples:-?} (last run)"
echo "traces: $(wc -c <"$work/record.ht") bytes without sites," \
	"$(wc -c <"$work/sites.ht") with"
