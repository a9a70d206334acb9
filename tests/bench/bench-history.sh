#!/bin/sh
# bench-history.sh - what `heaptrace history` costs on a long trace: one
# object followed through 10,000 GCs of a heap of 10,000 to 20,000 objects
# that every GC compacts (made once by genhistory and kept in CACHE_DIR).
# Prints the wall time and peak RSS of `history`, in text and in json,
# and checks that the object's history has one move per GC.
#
# usage: bench-history.sh HEAPTRACE GENHISTORY MEASURE CACHE_DIR
# HT_BENCH_GCS replaces the number of GCs.
set -eu

if [ $# -ne 4 ]; then
	echo "usage: $0 HEAPTRACE GENHISTORY MEASURE CACHE_DIR" >&2
	exit 2
fi
heaptrace=$1 genhistory=$2 measure=$3 cache=$4
gcs=${HT_BENCH_GCS:-10000}
trace=$cache/history-$gcs.ht
mkdir -p "$cache"

# The trace is reused while it is newer than its generator, which prints
# the id to ask about.
if [ ! -f "$trace" ] || [ -n "$(find "$genhistory" -newer "$trace")" ]; then
	"$measure" "$cache/gen.cost" "$genhistory" -g "$gcs" -o "$trace.tmp" \
		>/dev/null
	mv "$trace.tmp" "$trace"
	read -r secs kib status _ <"$cache/gen.cost"
	echo "generated $trace ($(wc -c <"$trace" | tr -d ' ') bytes) in $secs s"
fi
id=$("$genhistory" -g 0 -o "$cache/empty.ht")

run() {
	what=$1
	shift
	"$measure" "$cache/run.cost" "$heaptrace" "$@" >"$cache/out" 2>&1 || {
		echo "'heaptrace $*' failed:" >&2
		tail -n 20 "$cache/out" >&2
		exit 1
	}
	read -r secs kib status _ <"$cache/run.cost"
	printf '%-24s %8.2f s %8.1f MiB peak RSS %8s lines\n' "$what" "$secs" \
		"$(echo "$kib" | awk '{ print $1 / 1024 }')" \
		"$(wc -l <"$cache/out" | tr -d ' ')"
}

echo "heaptrace history on $gcs GCs ($trace), object $id"
run "history (text)" history "$trace" "$id"
moves=$(grep -c ' moved ' "$cache/out" || true)
run "history --format json" history --format json "$trace" "$id"
if [ "$moves" != "$gcs" ]; then
	echo "$0: expected $gcs moves in the history, got $moves" >&2
	exit 1
fi
