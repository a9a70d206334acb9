#!/bin/sh
# bench-java-dumps.sh - the JVMTI agent's heap dumps against the JVM's own
# (jcmd PID GC.heap_dump, HPROF) at the same dump points.
#
# DumpPoints (DumpPoints.java) stops POINTS times, its heap grown by the
# same amount each time, and waits while the heap is dumped:
#   - no dump: the program alone, the points passed at once;
#   - heaptrace: the agent loaded (-agentpath, dump-on=exit, verbose: what
#     heaptrace record loads, with a line per dump), each point dumped by
#     jcmd PID JVMTI.data_dump, which returns once the dump is in the
#     trace; and the dump at exit that every recording ends with;
#   - HPROF: no agent, each point dumped by jcmd PID GC.heap_dump FILE
#     (which collects first, and dumps the live objects: the agent's walk
#     also sees only what is reachable).
# For each, the median over RUNS runs of: the program's wall time from
# start to exit; the pause per dump as the dumper itself reports it (the
# agent's "t ms" line, the JVM's "in X secs"), mean over the points; the
# wait for jcmd per dump (jcmd's own start included, the same for both);
# and the bytes written (the trace; the HPROF files together).
#
# usage: bench-java-dumps.sh HEAPTRACE AGENT SOURCE_DIR WORK_DIR RESULT [sanitized]
# HT_BENCH_POINTS (default 5), HT_BENCH_NODES (nodes added per point,
# default 200000), HT_BENCH_GARBAGE (default 2000000), HT_BENCH_RUNS
# (default 3) change the sizes. Exits 77 without a JDK or under a
# sanitizer.
set -u

if [ $# -lt 5 ]; then
	echo "usage: $0 HEAPTRACE AGENT SOURCE_DIR WORK_DIR RESULT [sanitized]" >&2
	exit 2
fi
heaptrace=$1 agent=$2 src=$3 work=$4 result=$5
[ "${6:-}" = sanitized ] && { echo "SKIP: timings under a sanitizer mean nothing"; exit 77; }
points=${HT_BENCH_POINTS:-5}
nodes=${HT_BENCH_NODES:-200000}
garbage=${HT_BENCH_GARBAGE:-2000000}
runs=${HT_BENCH_RUNS:-3}

. "$src/../lib.sh"
need_tools java javac jcmd awk
[ -f "$agent" ] || { echo "SKIP: the JVMTI agent was not built"; exit 77; }

rm -rf "$work"
mkdir -p "$work/classes" || exit 1
javac -d "$work/classes" "$src/DumpPoints.java" || exit 1

now() {
	date +%s.%N
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'
}

mean() {
	awk '{ s += $1; n++ } END { if (n) printf "%.1f\n", s / n; else print "-" }'
}

# waits up to 300 s for a line $2 in file $1
wait_line() {
	tries=0
	while ! grep -qx "$2" "$1" 2>/dev/null; do
		tries=$((tries + 1))
		[ $tries -le 6000 ] || return 1
		sleep 0.05
	done
}

# one_run MODE: one run of DumpPoints; appends its wall time to
# $work/MODE.wall, its pauses (ms) to MODE.pause, its jcmd waits (s) to
# MODE.wait; leaves its bytes in MODE.bytes.
one_run() {
	mode=$1
	rm -f "$work/in" "$work"/*.hprof "$work/t.ht"
	mkfifo "$work/in" || return 1
	set -- java -Xmx2g -cp "$work/classes"
	[ "$mode" = heaptrace ] &&
		set -- "$@" "-agentpath:$agent=dump-on=exit,verbose,output=$work/t.ht"
	t0=$(now)
	"$@" DumpPoints "$points" "$nodes" "$garbage" <"$work/in" \
		>"$work/out" 2>"$work/err" &
	jvm=$!
	exec 3>"$work/in"
	p=0
	while [ $p -lt "$points" ]; do
		wait_line "$work/out" "point $p" || {
			echo "DumpPoints did not reach point $p: $(cat "$work/err")" >&2
			kill $jvm
			return 1
		}
		w0=$(now)
		case $mode in
		heaptrace)
			jcmd $jvm JVMTI.data_dump >"$work/jcmd.out" 2>&1 ;;
		hprof)
			jcmd $jvm GC.heap_dump "$work/p$p.hprof" >"$work/jcmd.out" 2>&1
			sed -n 's/.*Heap dump file created \[[0-9]* bytes in \([0-9.]*\) secs\].*/\1/p' \
				"$work/jcmd.out" | awk '{ printf "%.1f\n", $1 * 1000 }' \
				>>"$work/$mode.pause" ;;
		esac || { echo "jcmd failed: $(cat "$work/jcmd.out")" >&2; return 1; }
		[ "$mode" = none ] ||
			echo "$w0 $(now)" | awk '{ printf "%.3f\n", $2 - $1 }' >>"$work/$mode.wait"
		echo go >&3
		p=$((p + 1))
	done
	exec 3>&-
	wait $jvm || { echo "DumpPoints failed: $(cat "$work/err")" >&2; return 1; }
	echo "$t0 $(now)" | awk '{ printf "%.3f\n", $2 - $1 }' >>"$work/$mode.wall"
	case $mode in
	heaptrace)
		# the requested dumps' pauses; the one at exit apart
		sed -n 's/^heaptrace: java recorder: dump [0-9]* (requested): .*, \([0-9.]*\) ms (walk.*/\1/p' \
			"$work/err" >>"$work/$mode.pause"
		sed -n 's/^heaptrace: java recorder: dump [0-9]* (at exit): .*, \([0-9.]*\) ms (walk.*/\1/p' \
			"$work/err" >>"$work/$mode.exitpause"
		wc -c <"$work/t.ht" | tr -d ' ' >"$work/$mode.bytes"
		grep -c '^heaptrace: java recorder: dump ' "$work/err" >"$work/$mode.dumps" ;;
	hprof)
		cat "$work"/p*.hprof | wc -c | tr -d ' ' >"$work/$mode.bytes"
		ls "$work"/p*.hprof | wc -l | tr -d ' ' >"$work/$mode.dumps" ;;
	*)
		echo 0 >"$work/$mode.bytes"
		echo 0 >"$work/$mode.dumps" ;;
	esac
}

# config LABEL MODE: RUNS runs, one line of results.
config() {
	: >"$work/$2.wall"
	: >"$work/$2.pause"
	: >"$work/$2.wait"
	: >"$work/$2.exitpause"
	run=0
	while [ $run -lt "$runs" ]; do
		run=$((run + 1))
		one_run "$2" || return 1
	done
	printf '%-34s %7s %10s %9s %12s %5s\n' "$1" \
		"$(median <"$work/$2.wall")" "$(mean <"$work/$2.pause")" \
		"$(mean <"$work/$2.wait")" "$(cat "$work/$2.bytes")" \
		"$(cat "$work/$2.dumps")"
}

{
	echo "DumpPoints: $points points, +$nodes nodes (x2 objects) and $garbage scraps each; $runs runs, medians of wall time, means of the rest; $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
	printf '%-34s %7s %10s %9s %12s %5s\n' configuration "wall s" \
		"pause ms" "jcmd s" bytes dumps
	config "no dump" none || exit 1
	config "heaptrace agent, JVMTI.data_dump" heaptrace || exit 1
	config "no agent, GC.heap_dump (HPROF)" hprof || exit 1
	echo "heaptrace's dump at exit (not counted above): $(mean <"$work/heaptrace.exitpause") ms"
	echo "pause ms: the dump's own time, as the agent and the JVM report it;" \
		"jcmd s: the wait for jcmd, its start included"
} >"$result"
status=$?
cat "$result"
exit $status
