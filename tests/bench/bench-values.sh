#!/bin/sh
# bench-values.sh - what values (issue 18: primitive fields, array contents)
# cost on a Java heap dump of 10 million objects, per object, so that the
# next measurement has figures to compare with.
#
# The dump is KnownHeap's with a list of 10 million nodes, each with a long
# value (knownheap-dump.sh makes it once in CACHE_DIR): every node carries
# a value of its own, the worst case for the model's store of distinct
# value records. With MEASURE (wall and CPU time, peak RSS), the best of
# RUNS by CPU time:
#   - `convert` with values (the default) and with --no-values, and the
#     size of each .ht;
#   - `top -n 5`, and `object` on the list's head (its first node among
#     the five biggest retainers), on the dump and on each .ht: the model
#     keeps values only for a command that asks (object does; top and
#     paths only for the objects their labels read, reading the dump a
#     second time when one may have a label), so the table shows what
#     each command pays as it is;
#   - on the dump, `top --class java.lang.String -n 5` and `paths` to the
#     head, which read it twice for their labels' values.
# Fails when `object` says something else of the head from the .ht with
# values than from the dump, or shows values from the one without, or
# when heaptrace keeps another number of arrays whole in the small dump
# than values-threshold.py counts.
# Then, with values-threshold.py, what the threshold of whole arrays buys
# and costs on testdata/hprof/knownheap.hprof, this dump and the dumps in
# HT_VALUES_BENCH_DUMPS (paths separated by spaces, e.g. the Tomcat dump
# tests/runtimes/java/tomcat-test.sh makes). Prints the load average
# before and after: on a busy machine the wall times mean little, the CPU
# times less so.
#
# usage: bench-values.sh HEAPTRACE MEASURE JAVA_SRC_DIR BENCH_SRC_DIR
#                        SOURCE_ROOT CACHE_DIR
# HT_VALUES_BENCH_NODES replaces the list's length (default 10000000),
# HT_VALUES_BENCH_RUNS the runs of each command (default 1).
set -u

if [ $# -ne 6 ]; then
	echo "usage: $0 HEAPTRACE MEASURE JAVA_SRC_DIR BENCH_SRC_DIR" \
		"SOURCE_ROOT CACHE_DIR" >&2
	exit 2
fi
heaptrace=$1 measure=$2 java_src=$3 bench_src=$4 root=$5 cache=$6
n=${HT_VALUES_BENCH_NODES:-10000000}
runs=${HT_VALUES_BENCH_RUNS:-1}

. "$(dirname "$0")/../lib.sh"
need_tools java javac jcmd python3
mkdir -p "$cache" || exit 1
status=0

dump=$(sh "$bench_src/knownheap-dump.sh" "$java_src" "$cache" "$n") || exit 1
values_ht=$cache/values-$n.ht
plain_ht=$cache/plain-$n.ht
load_before=$(cut -d' ' -f1-3 /proc/loadavg)

# best NAME COMMAND...: runs COMMAND $runs times under measure; the run
# with the least CPU time (which others' work on the machine inflates less
# than the wall time) leaves "SECONDS KIB CPU_SECONDS" in $cache/NAME.cost
# and its output in $cache/NAME.out.
best() {
	name=$1
	shift
	best_cpu=
	for i in $(seq "$runs"); do
		"$measure" "$cache/$name.run" "$@" >"$cache/$name.run.out" \
			2>"$cache/$name.err" || {
			echo "failed: $*" >&2
			cat "$cache/$name.err" >&2
			exit 1
		}
		read -r secs kib st cpu _ <"$cache/$name.run"
		if [ -z "$best_cpu" ] ||
			awk "BEGIN { exit !($cpu < $best_cpu) }"; then
			best_cpu=$cpu
			echo "$secs $kib $cpu" >"$cache/$name.cost"
			mv "$cache/$name.run.out" "$cache/$name.out"
		fi
	done
}

objects=$("$heaptrace" stats --format json "$dump" | python3 -c \
	'import json, sys; print(json.load(sys.stdin)["dumps"][0]["objects"])')
[ -n "$objects" ] || exit 1

best convert-values "$heaptrace" convert "$dump" -o "$values_ht"
best convert-plain "$heaptrace" convert --no-values "$dump" -o "$plain_ht"
file_of() {
	case $1 in
	hprof) echo "$dump" ;;
	values) echo "$values_ht" ;;
	plain) echo "$plain_ht" ;;
	esac
}
# The default --max-memory is 64 times the input, at least 1 GiB: too
# little for the .ht files of this dump, which compress its alike nodes so
# well that `object` with values needs more than 64 times the file (about
# 1 GB for 16 MB; doc/design.md, values). A limit for all, then.
limit="--max-memory 8GiB"
for input in hprof values plain; do
	# shellcheck disable=SC2086 # $limit is two words
	best "top-$input" "$heaptrace" top $limit -n 5 "$(file_of $input)"
done
# the list's head: the first node among the biggest retainers
head=$(awk 'NR > 2 && $NF == "KnownHeap$Node" {
	for (i = 1; i <= NF; i++) if ($i ~ /^0x/) { print $i; exit } }' \
	"$cache/top-hprof.out")
[ -n "$head" ] || { echo "no KnownHeap\$Node in top -n 5" >&2; exit 1; }
for input in hprof values plain; do
	# shellcheck disable=SC2086
	best "object-$input" "$heaptrace" object $limit "$(file_of $input)" \
		"$head"
done
# shellcheck disable=SC2086
best top-strings "$heaptrace" top $limit -n 5 --class java.lang.String "$dump"
# shellcheck disable=SC2086
best paths-hprof "$heaptrace" paths $limit --to "$head" "$dump"
grep -q '"' "$cache/top-strings.out" ||
	fail "top --class java.lang.String labels no string"

# What object says of the head, bar its first line (the file's name):
# the same from the dump and from the .ht with values; no values from the
# .ht without.
for input in hprof values; do
	tail -n +2 "$cache/object-$input.out" >"$cache/object-$input.body"
done
diff "$cache/object-hprof.body" "$cache/object-values.body" >&2 ||
	fail "object $head: the .ht with values says something else than the dump"
grep -q '^values' "$cache/object-hprof.out" ||
	fail "object $head shows no values from the dump"
! grep -q '^values' "$cache/object-plain.out" ||
	fail "object $head shows values from the .ht without them"

# The arrays heaptrace keeps whole, as values-threshold.py counts them at
# the threshold trace.h gives, on the small dump: the script's reading and
# the reader's threshold agree.
known=$root/testdata/hprof/knownheap.hprof
whole_max=$(awk '$1 == "#define" && $2 == "HT_VALUES_WHOLE_MAX" { print $3 }' \
	"$root/include/heaptrace/trace.h")
ours=$("$heaptrace" cat "$known" | grep -o 'array: {[^}]*}' | grep -vc hash)
theirs=$(python3 "$bench_src/values-threshold.py" --whole "$whole_max" \
	"$known")
[ "$ours" = "$theirs" ] ||
	fail "$known: heaptrace keeps $ours arrays whole," \
		"values-threshold.py counts $theirs at $whole_max bytes"

# ---- the report -----------------------------------------------------------------

bytes() { wc -c <"$1" | tr -d ' '; }
hprof_bytes=$(bytes "$dump")
values_bytes=$(bytes "$values_ht")
plain_bytes=$(bytes "$plain_ht")

echo "dump: $dump ($objects objects)"
echo "load average: $load_before before, $(cut -d' ' -f1-3 /proc/loadavg) after"
echo
printf "  %-32s %12s %10s\n" "file" "MiB" "B/object"
size_row() {
	awk -v name="$1" -v b="$2" -v o="$objects" 'BEGIN {
		printf "  %-32s %12.2f %10.2f\n", name, b / 1048576, b / o
	}'
}
size_row "dump (.hprof)" "$hprof_bytes"
size_row ".ht with values" "$values_bytes"
size_row ".ht without (--no-values)" "$plain_bytes"
awk -v v="$values_bytes" -v p="$plain_bytes" -v o="$objects" 'BEGIN {
	printf "  values add %.2f bytes an object to the .ht (%+.0f%%)\n",
		(v - p) / o, 100 * (v - p) / p
}'
echo
printf "  %-28s %7s %7s %11s %13s %12s\n" "command (best of $runs)" \
	"wall s" "CPU s" "CPU ns/obj" "peak RSS MiB" "RSS B/object"
row() {
	read -r secs kib cpu <"$cache/$2.cost"
	awk -v name="$1" -v s="$secs" -v c="$cpu" -v k="$kib" \
		-v o="$objects" 'BEGIN {
		printf "  %-28s %7.2f %7.2f %11.0f %13.0f %12.1f\n", name, s,
			c, c * 1e9 / o, k / 1024, k * 1024 / o
	}'
}
row "convert (values)" convert-values
row "convert --no-values" convert-plain
row "top -n 5 dump" top-hprof
row "top -n 5 .ht with values" top-values
row "top -n 5 .ht without" top-plain
row "top --class String dump" top-strings
row "paths to the head, dump" paths-hprof
row "object dump (values)" object-hprof
row "object .ht with values" object-values
row "object .ht without" object-plain
echo
echo "  the threshold of whole arrays (HT_VALUES_WHOLE_MAX):"
# shellcheck disable=SC2086 # HT_VALUES_BENCH_DUMPS is a list of paths
python3 "$bench_src/values-threshold.py" "$known" "$dump" \
	${HT_VALUES_BENCH_DUMPS:-} | sed 's/^/  /' || status=1
exit $status
