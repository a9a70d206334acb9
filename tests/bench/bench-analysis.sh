#!/bin/sh
# bench-analysis.sh - what the analyses cost as the heap grows. For heaps of
# 1M, 5M and 10M objects (made once by ht-genheap and kept in CACHE_DIR),
# runs each heaptrace COMMAND on the trace and prints its wall time, CPU
# time (user + system) and peak RSS, per object, and how each grows from
# one size to the next: an analysis that is linear grows as the objects do
# (x5, then x2). Beside each run, the load average as it started: other
# work on the machine inflates the wall time more than the CPU time.
#
# usage: bench-analysis.sh HEAPTRACE GENHEAP MEASURE CACHE_DIR COMMAND...
#
# A COMMAND is a heaptrace command with its options, as one argument
# ("top -n 20"); one that this heaptrace does not have yet is skipped, so
# the list may name commands still being written. The trace is the last
# argument of each run. HT_BENCH_SIZES replaces the sizes (objects, by
# spaces); HT_BENCH_REFS the references per object (default 3);
# HT_BENCH_LABEL names the results file (CACHE_DIR/results-LABEL.txt,
# default "analysis"), so that benchmarks sharing the cache of traces keep
# their own.
set -eu

if [ $# -lt 5 ]; then
	echo "usage: $0 HEAPTRACE GENHEAP MEASURE CACHE_DIR COMMAND..." >&2
	exit 2
fi
heaptrace=$1 genheap=$2 measure=$3 cache=$4
shift 4
sizes=${HT_BENCH_SIZES:-1000000 5000000 10000000}
refs=${HT_BENCH_REFS:-3}
seed=1

mkdir -p "$cache"
label=${HT_BENCH_LABEL:-analysis}
results=$cache/results-$label.txt
log=$cache/last-run.log
: >"$results"

file_bytes() {
	wc -c <"$1" | tr -d ' '
}

# The trace for N objects: reused while it is newer than the generator.
heap_for() {
	heap=$cache/heap-$1-r$refs-s$seed.ht
	if [ ! -f "$heap" ] || [ -n "$(find "$genheap" -newer "$heap")" ]; then
		"$measure" "$cache/gen.cost" "$genheap" -n "$1" -r "$refs" \
			-s "$seed" -o "$heap.tmp" 2>"$log" || {
			cat "$log" >&2
			echo "$0: ht-genheap -n $1 failed" >&2
			exit 1
		}
		mv "$heap.tmp" "$heap"
		read -r secs kib status _ <"$cache/gen.cost"
		echo "generated $heap in $secs s, peak RSS $((kib / 1024)) MiB:"
		sed 's/^/  /' "$log"
	fi
}

# A command this heaptrace has answers `heaptrace CMD --help` with 0.
have_command() {
	"$heaptrace" "$1" --help >/dev/null 2>&1
}

# The commands this heaptrace has, one a line.
commands=
for cmd in "$@"; do
	# A command and its options, split on purpose:
	# shellcheck disable=SC2086
	set -- $cmd
	if have_command "$1"; then
		commands="$commands$cmd
"
	else
		echo "skipping '$cmd': this heaptrace has no '$1' command yet"
	fi
done
[ -n "$commands" ] || { echo "$0: no command to measure" >&2; exit 1; }

# The load average over the last minute.
load_now() {
	cut -d ' ' -f 1 /proc/loadavg 2>/dev/null || echo '-'
}

# One run: a line of results, tab-separated.
measure_run() {
	cmd=$1 n=$2
	load=$(load_now)
	# shellcheck disable=SC2086
	if ! "$measure" "$cache/run.cost" "$heaptrace" $cmd "$heap" \
		>/dev/null 2>"$log"; then
		echo "'heaptrace $cmd' on $n objects failed:" >&2
		tail -n 20 "$log" >&2
	fi
	read -r secs kib status cpu <"$cache/run.cost"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cmd" "$n" \
		"$(file_bytes "$heap")" "$secs" "$kib" "$status" "$cpu" \
		"$load" >>"$results"
}

# Not a pipe: the loop must run in this shell, so that heap_for can stop it.
while IFS= read -r cmd; do
	[ -n "$cmd" ] || continue
	for n in $sizes; do
		heap_for "$n"
		measure_run "$cmd" "$n"
	done
done <<EOF
$commands
EOF

echo
echo "heaptrace analyses on ht-genheap heaps (-r $refs -s $seed, one dump);" \
	"x = growth from the previous size; CPU = user + system"
awk -F '\t' '
BEGIN {
	printf "%-14s %9s %8s %6s %8s %8s %7s %8s %9s %7s %6s %6s %6s %6s\n", \
		"command", "objects", "file MB", "B/obj", "wall s", "CPU s", \
		"CPU ns", "RSS MiB", "RSS B/obj", "load", "x objs", "x wall", \
		"x CPU", "x RSS"
	printf "%-14s %9s %8s %6s %8s %8s %7s %8s %9s %7s\n", "", "", "", \
		"", "", "", "/obj", "", "", "(1 min)"
}
function growth(now, before) {
	return before > 0 ? sprintf("%.2f", now / before) : "-"
}
{
	cmd = $1; n = $2; bytes = $3; secs = $4; kib = $5; status = $6
	cpu = $7; load = $8
	if (cmd != last)
		prev_n = 0
	last = cmd
	grow_n = grow_t = grow_c = grow_m = "-"
	if (prev_n > 0) {
		grow_n = sprintf("%.1f", n / prev_n)
		grow_t = growth(secs, prev_t)
		grow_c = growth(cpu, prev_c)
		grow_m = growth(kib, prev_k)
	}
	note = status == 0 ? "" : "  FAILED (exit " status ")"
	printf "%-14s %9d %8.1f %6.2f %8.2f %8.2f %7.0f %8.1f %9.1f %7s %6s %6s %6s %6s%s\n", \
		cmd, n, bytes / 1e6, bytes / n, secs, cpu, cpu * 1e9 / n, \
		kib / 1024, kib * 1024 / n, load, grow_n, grow_t, grow_c, \
		grow_m, note
	prev_n = n; prev_t = secs; prev_c = cpu; prev_k = kib
}' "$results"

# Any run that failed fails the benchmark.
awk -F '\t' '$6 != 0 { bad = 1 } END { exit bad }' "$results"
