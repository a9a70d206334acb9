#!/bin/sh
# hprof-bench.sh - heaptrace on a real Java heap dump of about 2 million
# objects, next to VisualVM's heap library on the same file.
#
# Makes the dump once (kept in CACHE_DIR, by knownheap-dump.sh): KnownHeap
# (see tests/runtimes/java/KnownHeap.java) with a list of 2 million nodes
# and a tree of 131071, at its paused point, with jcmd GC.heap_dump. Then
# times, with MEASURE (wall time and peak RSS), `heaptrace top` reading the
# dump and computing every retained size, and VisualVMRetained.java driving
# VisualVM's library (Debian's visualvm package) to its biggest objects by
# retained size; each the best of three runs. Prints both side by side,
# the goals (20 times faster than VisualVM, under 100 bytes of memory per
# object), what each found biggest, and how the .ht of the dump compares
# in size. VisualVM's part is skipped when the package is not installed.
#
# usage: hprof-bench.sh HEAPTRACE MEASURE JAVA_SRC_DIR BENCH_SRC_DIR CACHE_DIR
# HT_HPROF_BENCH_NODES replaces the list's length (default 2000000).
set -u

if [ $# -ne 5 ]; then
	echo "usage: $0 HEAPTRACE MEASURE JAVA_SRC_DIR BENCH_SRC_DIR CACHE_DIR" >&2
	exit 2
fi
heaptrace=$1 measure=$2 java_src=$3 bench_src=$4 cache=$5
n=${HT_HPROF_BENCH_NODES:-2000000}
runs=3

. "$(dirname "$0")/../lib.sh"
need_tools java javac jcmd python3
mkdir -p "$cache/classes" || exit 1

# ---- the dump ---------------------------------------------------------------

dump=$(sh "$bench_src/knownheap-dump.sh" "$java_src" "$cache" "$n") || exit 1

# ---- timing -------------------------------------------------------------------

# best OUT_PREFIX COMMAND...: runs COMMAND $runs times under measure; the
# run with the least wall time leaves "SECONDS KIB" in OUT_PREFIX.cost and
# its output in OUT_PREFIX.out.
best() {
	prefix=$1
	shift
	best_secs=
	for i in $(seq $runs); do
		rm -rf "$dump.hwcache"
		"$measure" "$prefix.run" "$@" >"$prefix.run.out" 2>"$prefix.err" || {
			echo "failed: $*" >&2
			cat "$prefix.err" >&2
			return 1
		}
		read -r secs kib status _ <"$prefix.run"
		if [ -z "$best_secs" ] ||
			awk "BEGIN { exit !($secs < $best_secs) }"; then
			best_secs=$secs
			echo "$secs $kib" >"$prefix.cost"
			mv "$prefix.run.out" "$prefix.out"
		fi
	done
}

objects=$("$heaptrace" stats --format json "$dump" | python3 -c \
	'import json, sys; print(json.load(sys.stdin)["dumps"][0]["objects"])')
hprof_bytes=$(wc -c <"$dump" | tr -d ' ')
"$heaptrace" convert "$dump" -o "$cache/knownheap.ht" || exit 1
ht_bytes=$(wc -c <"$cache/knownheap.ht" | tr -d ' ')

best "$cache/heaptrace" "$heaptrace" top -n 5 "$dump" || exit 1
read -r h_secs h_kib <"$cache/heaptrace.cost"

jar=$(find /usr/share/visualvm -name '*jfluid-heap*.jar' 2>/dev/null | head -1)
v_secs=
if [ -n "$jar" ] &&
	javac -cp "$jar" -d "$cache/classes" "$bench_src/VisualVMRetained.java"; then
	if best "$cache/visualvm" java -cp "$jar:$cache/classes" \
		VisualVMRetained "$dump" 5; then
		read -r v_secs v_kib <"$cache/visualvm.cost"
	fi
	rm -rf "$dump.hwcache"
fi

# ---- the report -----------------------------------------------------------------

echo "dump: $dump"
awk -v o="$objects" -v h="$hprof_bytes" -v t="$ht_bytes" 'BEGIN {
	printf "  %d objects, %.1f MiB as .hprof, %.2f MiB as .ht (%.0fx smaller)\n",
		o, h / 1048576, t / 1048576, h / t
}'
echo
printf "  %-34s %8s %14s %12s\n" "" "wall s" "peak RSS MiB" "RSS B/object"
row() {
	awk -v name="$1" -v s="$2" -v k="$3" -v o="$objects" 'BEGIN {
		printf "  %-34s %8.2f %14.0f %12.0f\n", name, s, k / 1024, k * 1024 / o
	}'
}
row "heaptrace top (read + retained)" "$h_secs" "$h_kib"
if [ -n "$v_secs" ]; then
	row "VisualVM heap library (retained)" "$v_secs" "$v_kib"
	awk -v h="$h_secs" -v v="$v_secs" -v hk="$h_kib" -v vk="$v_kib" 'BEGIN {
		printf "\n  heaptrace: %.1fx faster (goal: 20x), %.1fx less memory\n",
			v / h, vk / hk
	}'
else
	echo "  VisualVM heap library: not installed (Debian package visualvm)"
fi
awk -v k="$h_kib" -v o="$objects" 'BEGIN {
	printf "  heaptrace: %.0f bytes of peak memory per object (goal: under 100)\n",
		k * 1024 / o
}'
echo
echo "  biggest retainers, heaptrace:"
sed -n '3,$p' "$cache/heaptrace.out" | sed 's/^/    /'
if [ -n "$v_secs" ]; then
	echo "  biggest retainers, VisualVM (id class size retained):"
	sed 's/^/    /' "$cache/visualvm.out"
fi
