#!/bin/sh
# bench-analysis.sh - what the analyses cost as the heap grows. For heaps of
# 1M, 5M and 10M objects (made once by ht-genheap and kept in CACHE_DIR),
# runs each heaptrace COMMAND on the trace and prints its wall time and
# peak RSS, per object, and how both grow from one size to the next: an
# analysis that is linear grows as the objects do (x5, then x2).
#
# usage: bench-analysis.sh HEAPTRACE GENHEAP MEASURE CACHE_DIR COMMAND...
#
# A COMMAND is a heaptrace command with its options, as one argument
# ("top -n 20"); one that this heaptrace does not have yet is skipped, so
# the list may name commands still being written. The trace is the last
# argument of each run. HT_BENCH_SIZES replaces the sizes (objects, by
# spaces); HT_BENCH_REFS the references per object (default 3).
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
results=$cache/results.txt
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

# One run: a line of results, tab-separated.
measure_run() {
	cmd=$1 n=$2
	# shellcheck disable=SC2086
	if ! "$measure" "$cache/run.cost" "$heaptrace" $cmd "$heap" \
		>/dev/null 2>"$log"; then
		echo "'heaptrace $cmd' on $n objects failed:" >&2
		tail -n 20 "$log" >&2
	fi
	read -r secs kib status cpu <"$cache/run.cost"
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$cmd" "$n" \
		"$(file_bytes "$heap")" "$secs" "$kib" "$status" "$cpu" \
		>>"$results"
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
	"x = growth from the previous size; CPU s above wall s: a second core" \
	"worked"
awk -F '\t' '
BEGIN {
	printf "%-14s %9s %8s %6s %8s %8s %8s %9s %6s %6s %6s\n", \
		"command", "objects", "file MB", "B/obj", "wall s", "CPU s", \
		"RSS MiB", "RSS B/obj", "x objs", "x wall", "x RSS"
}
{
	cmd = $1; n = $2; bytes = $3; secs = $4; kib = $5; status = $6
	cpu = $7
	if (cmd != last)
		prev_n = 0
	last = cmd
	grow_n = grow_t = grow_m = "-"
	if (prev_n > 0) {
		grow_n = sprintf("%.1f", n / prev_n)
		if (prev_t > 0)
			grow_t = sprintf("%.2f", secs / prev_t)
		if (prev_k > 0)
			grow_m = sprintf("%.2f", kib / prev_k)
	}
	note = status == 0 ? "" : "  FAILED (exit " status ")"
	printf "%-14s %9d %8.1f %6.2f %8.2f %8.2f %8.1f %9.1f %6s %6s %6s%s\n", \
		cmd, n, bytes / 1e6, bytes / n, secs, cpu, kib / 1024, \
		kib * 1024 / n, grow_n, grow_t, grow_m, note
	prev_n = n; prev_t = secs; prev_k = kib
}' "$results"

# Any run that failed fails the benchmark.
awk -F '\t' '$6 != 0 { bad = 1 } END { exit bad }' "$results"
