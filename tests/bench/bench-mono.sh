#!/bin/sh
# bench-mono.sh - what recording a Mono program costs, against Mono's own
# log profiler doing the same: wall and CPU time of GcChurn.exe (a
# workload with minor and major collections) with no recorder, with
# `heaptrace record` dumping at majors and at every GC, and with
# `mono --profile=log:heapshot` in the same two modes; the size of each
# trace against the log profiler's .mlpd (for the same workload, and for
# KnownHeap, whose dumps are the same two in both); then many recordings in
# a row, each with a time limit, counting the runs that hang at shutdown.
#
# The dump points are the same rule in both: at each major collection
# (--dump-on major, heapshot), at every collection (--dump-on every-gc,
# heapshot=1gc); the GCs column says how many collections each run had,
# since a recorder changes them (heaptrace forces a serial major one where a
# dump is due after a minor or concurrent one, and one at exit). The
# overhead is against the bare run: wall time as a multiple of it, and the
# CPU time above it per dump taken.
#
# usage: bench-mono.sh HEAPTRACE MEASURE MODULE RESULT_FILE [sanitized]
#
# HT_BENCH_MONO_RUNS runs per configuration (default 5, medians shown),
# HT_BENCH_MONO_REPEAT recordings in a row (default 50),
# HT_BENCH_MONO_ARGS the workload's rounds and table size ("30 50000").
# Exits 77 where Mono or the recorder is missing, and under sanitizers.
set -u
heaptrace=$1 measure=$2 module=$3 result=$4
here=$(cd "$(dirname "$0")" && pwd)
[ "${5:-}" = sanitized ] && { echo "SKIP: sanitizer build"; exit 77; }
for p in mono mcs mprof-report timeout; do
	command -v $p >/dev/null || { echo "SKIP: no $p"; exit 77; }
done
[ -f "$module" ] || { echo "SKIP: the Mono recorder was not built"; exit 77; }
runs=${HT_BENCH_MONO_RUNS:-5}
repeat=${HT_BENCH_MONO_REPEAT:-50}
args=${HT_BENCH_MONO_ARGS:-30 50000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
unset HEAPTRACE_RECORDER_DIR
mcs -nologo -out:"$work/GcChurn.exe" "$here/GcChurn.cs" >/dev/null ||
	{ echo "cannot compile GcChurn.cs"; exit 1; }
mcs -nologo -out:"$work/KnownHeap.exe" "$here/../runtimes/mono/KnownHeap.cs" \
	>/dev/null || { echo "cannot compile KnownHeap.cs"; exit 1; }
exe=$work/GcChurn.exe

# The children's CPU seconds so far (user + system), from `times`, which
# must run in this shell: a subshell has no children of its own.
child_cpu() {
	times >"$work/times"
	awk 'NR == 2 {
		split($1, u, /[ms]/); split($2, s, /[ms]/)
		printf "%.3f\n", u[1] * 60 + u[2] + s[1] * 60 + s[2] }' "$work/times"
}

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'
}

file_bytes() {
	if [ -f "$1" ]; then wc -c <"$1" | tr -d ' '; else echo 0; fi
}

# The collections of a trace or an .mlpd.
gcs_in() {
	case $1 in
	*.mlpd)
		mprof-report --reports=gc "$1" 2>/dev/null |
			sed -n 's/.*Gen[0-9] collections: \([0-9]*\),.*/\1/p' |
			awk '{ n += $1 } END { print n + 0 }' ;;
	*)
		"$heaptrace" check --no-relocation "$1" 2>/dev/null |
			sed -n 's/.*, \([0-9]*\) GCs*, .*/\1/p' ;;
	esac
}

# The heap dumps in a trace or heap shots in an .mlpd.
dumps_in() {
	case $1 in
	*.mlpd)
		mprof-report --reports=heapshot "$1" 2>/dev/null |
			grep -c 'Heap shot [0-9]* at' ;;
	*)
		"$heaptrace" check --no-relocation "$1" 2>/dev/null |
			sed -n 's/.*, \([0-9]*\) dumps*, .*/\1/p' ;;
	esac
}

# config NAME OUTPUT COMMAND...: runs it $runs times; one line of results.
config() {
	name=$1 out=$2
	shift 2
	: >"$work/wall" ; : >"$work/cpu" ; : >"$work/rss"
	failed=0
	i=0
	while [ $i -lt "$runs" ]; do
		i=$((i + 1))
		[ "$out" = - ] || rm -f "$out"
		child_cpu >"$work/before"
		# shellcheck disable=SC2086
		timeout -k 5 300 "$measure" "$work/cost" "$@" $args \
			>/dev/null 2>"$work/stderr" || failed=$((failed + 1))
		child_cpu >"$work/after"
		read -r wall rss _ <"$work/cost" 2>/dev/null || { wall=- rss=-; }
		echo "$wall" >>"$work/wall"
		echo "$rss" >>"$work/rss"
		paste "$work/after" "$work/before" |
			awk '{ printf "%.3f\n", $1 - $2 }' >>"$work/cpu"
	done
	bytes=- dumps=- gcs=-
	[ "$out" = - ] || { bytes=$(file_bytes "$out"); dumps=$(dumps_in "$out")
		gcs=$(gcs_in "$out"); }
	wall=$(median <"$work/wall") cpu=$(median <"$work/cpu")
	if [ "$out" = - ]; then
		bare_wall=$wall bare_cpu=$cpu
		over=- per_dump=-
	else
		over=$(echo "$wall $bare_wall" | awk '$2 > 0 { printf "x%.1f", $1 / $2 }')
		per_dump=$(echo "$cpu $bare_cpu $dumps" |
			awk '$3 > 0 { printf "%.0f", ($1 - $2) * 1000 / $3 }')
	fi
	printf '%-28s %8s %8s %9s %12s %6s %5s %6s %9s %s\n' "$name" \
		"$wall" "$cpu" "$(median <"$work/rss")" "$bytes" "$dumps" \
		"$gcs" "${over:--}" "${per_dump:--}" \
		"$([ $failed = 0 ] || echo "($failed failed)")"
}

# sizes ARGS...: one run of KnownHeap (a heap of its own size, dumped at
# its GC.Collect() and at exit by both) with each recorder: the sizes, and
# the .mlpd's once compressed too (it is written uncompressed).
sizes() {
	rm -f "$ours" "$mlpd"
	"$heaptrace" record -q --dump-on major -o "$ours" -- mono \
		"$work/KnownHeap.exe" "$@" >/dev/null 2>&1
	timeout -k 5 120 mono --profile=log:heapshot,output="$mlpd" \
		"$work/KnownHeap.exe" "$@" >/dev/null 2>&1
	a=$(file_bytes "$ours") da=$(dumps_in "$ours")
	b=$(file_bytes "$mlpd") db=$(dumps_in "$mlpd")
	c=$(gzip -1 -c "$mlpd" | wc -c | tr -d ' ')
	echo "KnownHeap $*: heaptrace $a B in $da dumps, log profiler $b B" \
		"in $db heap shots ($(echo "$b $a" |
		awk '$2 > 0 { printf "%.1f", $1 / $2 }')x), $c B through" \
		"gzip -1 ($(echo "$c $a" | awk '$2 > 0 { printf "%.1f", $1 / $2 }')x)"
}

ours=$work/trace.ht
mlpd=$work/log.mlpd
{
	echo "GcChurn.exe $args, $runs runs each, medians; $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
	printf '%-28s %8s %8s %9s %12s %6s %5s %6s %9s\n' "configuration" \
		"wall s" "CPU s" "peak KiB" "trace bytes" "dumps" "GCs" "wall" \
		"CPU ms/dump"
	config "no recorder" - mono "$exe"
	config "heaptrace, dumps at majors" "$ours" "$heaptrace" record -q \
		--dump-on major -o "$ours" -- mono "$exe"
	ours_major=$(file_bytes "$ours")
	config "heaptrace, dump every GC" "$ours" "$heaptrace" record -q \
		--dump-on every-gc -o "$ours" -- mono "$exe"
	config "log profiler, heapshot" "$mlpd" mono \
		--profile=log:heapshot,output="$mlpd" "$exe"
	log_major=$(file_bytes "$mlpd")
	config "log profiler, heapshot=1gc" "$mlpd" mono \
		--profile=log:heapshot=1gc,output="$mlpd" "$exe"
	echo "trace size at majors: heaptrace $ours_major B, log profiler" \
		"$log_major B ($(echo "$log_major $ours_major" |
		awk '$2 > 0 { printf "%.1f", $1 / $2 }')x)"
	sizes 1000 10 100 300000
	sizes 200000 16 1000 300000
} | tee "$result"

# ---- recordings in a row: does anything hang at shutdown? -----------------
# row NAME COMMAND...: $repeat runs of 60 s at most each, of a small
# GcChurn, then as many of KnownHeap (threads, Environment.Exit).
row() {
	what=$1
	shift
	row_of "$what, GcChurn" "$@" "$exe" 5 20000
	row_of "$what, KnownHeap" "$@" "$work/KnownHeap.exe" 1000 10 100 300000
}

row_of() {
	name=$1
	shift
	ok=0 hung=0 failed=0 i=0
	while [ $i -lt "$repeat" ]; do
		i=$((i + 1))
		timeout -k 5 60 "$@" >/dev/null 2>&1
		st=$?
		case $st in
		0) ok=$((ok + 1)) ;;
		124|137) hung=$((hung + 1)) ;;
		*) failed=$((failed + 1)) ;;
		esac
	done
	echo "$name: $repeat runs in a row: $ok finished, $hung hung (killed after 60 s), $failed failed"
}

{
	row "heaptrace record --dump-on major" "$heaptrace" record -q \
		--dump-on major -o "$ours" -- mono
	row "heaptrace record --dump-on every-gc" "$heaptrace" record -q \
		--dump-on every-gc -o "$ours" -- mono
	row "mono --profile=log:heapshot" mono \
		--profile=log:heapshot,output="$mlpd"
	row "mono --profile=log:heapshot=1gc" mono \
		--profile=log:heapshot=1gc,output="$mlpd"
} | tee -a "$result"
