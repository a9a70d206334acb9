#!/bin/sh
# bench-clr.sh - what recording a .NET program costs: ClrChurn (ClrChurn.cs,
# an allocation-heavy workload over a live heap of 233 MB in 2.34
# million objects) with no recorder, under `heaptrace record` in each mode
# (--dump-on major, every-gc, exit, and major with --allocations), and with
# one heap dump taken by dotnet-gcdump at the end of its work. For each:
# wall and CPU time, peak RSS, the GCs and their total pause as the runtime
# itself counts them (GC.CollectionCount, GC.GetTotalPauseDuration()), the
# pause added per GC against the bare run, and the trace's (or .gcdump's)
# bytes, dumps, and bytes per object dumped (per event with --allocations).
#
# usage: bench-clr.sh HEAPTRACE MEASURE SOURCE_DIR WORK_DIR RESULT_FILE [sanitized]
#
# HT_BENCH_CLR_RUNS runs per configuration (default 3, medians shown),
# HT_BENCH_CLR_ARGS the workload's items and rounds ("1000000 20").
# Exits 77 without dotnet, and under sanitizers.
set -u
heaptrace=$1 measure=$2 src=$3 work=$4 result=$5
[ "${6:-}" = sanitized ] && { echo "SKIP: sanitizer build"; exit 77; }
for p in dotnet python3 timeout; do
	command -v $p >/dev/null || { echo "SKIP: no $p"; exit 77; }
done
runs=${HT_BENCH_CLR_RUNS:-3}
args=${HT_BENCH_CLR_ARGS:-1000000 20}
rm -rf "$work"
mkdir -p "$work/src" || exit 1
work=$(cd "$work" && pwd -P)
dotnet_dir=$work
. "$src/../runtimes/clr/dotnet-env.sh"
cp "$src/ClrChurn.cs" "$work/src/"
sed -e 's/KnownHeap/ClrChurn/g' "$src/../runtimes/clr/KnownHeap.csproj" \
	>"$work/src/ClrChurn.csproj"
dotnet_build "$work/src" "$work/app" >"$work/build.log" 2>&1 ||
	{ cat "$work/build.log"; echo "cannot build ClrChurn.cs"; exit 1; }
dll=$work/app/ClrChurn.dll
gcdump=$(dotnet_tool dotnet-gcdump)

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

# objects OUTPUT: "DUMPS OBJECTS EVENTS" of a trace (objects summed over
# its dumps), or of a .gcdump (its report's object count).
objects() {
	case $1 in
	*.gcdump)
		"$gcdump" report "$1" 2>/dev/null | awk '
			/GC Heap objects/ { gsub(",", "", $1); print 1, $1, "-"; exit }' ;;
	*)
		timeout 600 "$heaptrace" stats --format json "$1" 2>/dev/null |
			python3 -c 'import json, sys
s = json.load(sys.stdin)
print(len(s["dumps"]), sum(d["objects"] for d in s["dumps"]), "-")' \
			2>/dev/null || echo "- - -"
		events=$("$heaptrace" check --format json "$1" 2>/dev/null |
			python3 -c 'import json, sys; print(json.load(sys.stdin)["events"])' \
			2>/dev/null)
		echo "events ${events:--}" ;;
	esac
}

bare_per_gc= bare_pause= bare_least=

# run_once KEY NAME OUTPUT KIND COMMAND...: one run, its figures added to
# $work/KEY.*. KIND: plain, or gcdump (the program waits at its end while
# dotnet-gcdump collects a dump into OUTPUT).
run_once() {
	key=$1 out=$3 kind=$4
	shift 4
	[ "$out" = - ] || rm -f "$out"
	child_cpu >"$work/before"
	if [ "$kind" = gcdump ]; then
		rm -f "$work/fifo"; mkfifo "$work/fifo"
		# shellcheck disable=SC2086
		timeout -k 5 600 "$measure" "$work/cost" "$@" $args wait \
			<"$work/fifo" >"$work/stdout" 2>"$work/stderr" &
		prog=$!
		exec 3>"$work/fifo"
		while ! grep -q '^ready' "$work/stdout" && kill -0 $prog 2>/dev/null; do
			sleep 0.1
		done
		pid=$(awk '/^ready/ { print $2 }' "$work/stdout")
		"$measure" "$work/gcdump-cost" "$gcdump" collect -p "$pid" \
			-o "$out" >/dev/null 2>&1 || echo >>"$work/$key.failed"
		read -r gwall _ <"$work/gcdump-cost"
		echo go >&3
		exec 3>&-
		wait $prog || echo >>"$work/$key.failed"
		echo "$gwall" >>"$work/gcdump-wall"
	else
		# shellcheck disable=SC2086
		timeout -k 5 900 "$measure" "$work/cost" "$@" $args \
			>"$work/stdout" 2>"$work/stderr" || echo >>"$work/$key.failed"
	fi
	child_cpu >"$work/after"
	read -r wall rss _ <"$work/cost" 2>/dev/null || { wall=- rss=-; }
	echo "$wall" >>"$work/$key.wall"
	echo $((rss / 1024)) >>"$work/$key.rss"
	paste "$work/after" "$work/before" |
		awk '{ printf "%.3f\n", $1 - $2 }' >>"$work/$key.cpu"
	awk '/^done/ { print $2; exit }' "$work/stdout" >>"$work/$key.gcs"
	awk '/^done/ { print $5; exit }' "$work/stdout" >>"$work/$key.pause"
	[ "$out" = - ] || [ ! -f "$out" ] || mv "$out" "$work/$key.last"
}

# report KEY NAME OUTPUT ...: the line of results of configuration KEY,
# medians of its runs; the sizes are those of its last run's output.
report() {
	key=$1 name=$2 out=$3
	gcs=$(median <"$work/$key.gcs") pause=$(median <"$work/$key.pause")
	per_gc=$(echo "$pause $gcs" | awk '$2 > 0 { printf "%.2f", $1 / $2 }')
	least=$(sort -n "$work/$key.pause" | head -1)
	[ -n "$bare_per_gc" ] || bare_per_gc=$per_gc bare_pause=$pause \
		bare_least=$least
	more=$(echo "$pause $bare_pause" | awk '$1 != "-" { printf "%+.0f", $1 - $2 }')
	more_least=$(echo "$least $bare_least" | awk '$1 != "" { printf "%+.0f", $1 - $2 }')
	added=$(echo "$per_gc $bare_per_gc" | awk 'NF == 2 { printf "%+.2f", $1 - $2 }')
	bytes=- dumps=- perobj=-
	last=$work/$key.last
	if [ "$out" != - ] && [ -s "$last" ]; then
		bytes=$(file_bytes "$last")
		case $out in *.gcdump) mv "$last" "$last.gcdump"; last=$last.gcdump ;; esac
		objects "$last" >"$work/objects"
		read -r dumps objs _ <"$work/objects"
		events=$(awk '/^events/ { print $2 }' "$work/objects")
		case $name in
		*allocations*) n=$events; unit=event ;;
		*) n=$objs; unit=object ;;
		esac
		perobj=$(echo "$bytes ${n:--}" | awk '$2 > 0 { printf "%.2f/%s", $1 / $2, u }' u="$unit")
		bytes=$(echo "$bytes" | awk '{ printf "%.1f", $1 / 1048576 }')
	fi
	failed=$(cat "$work/$key.failed" 2>/dev/null | wc -l)
	printf '%-30s %7s %7s %8s %5s %9s %7s %7s %7s %7s %9s %5s %s\n' "$name" \
		"$(median <"$work/$key.wall")" "$(median <"$work/$key.cpu")" \
		"$(median <"$work/$key.rss")" "$gcs" "$pause" "${more:--}" \
		"${more_least:--}" \
		"${per_gc:--}" "${added:--}" \
		"$bytes" "$dumps" "${perobj:--}$([ "$failed" = 0 ] || echo " ($failed failed)")"
}

# each_config ACTION: ACTION KEY NAME OUTPUT KIND COMMAND... for each
# configuration, in the order of the table.
each_config() {
	$1 bare "no recorder" - plain dotnet "$dll"
	$1 major "record --dump-on major" "$trace" plain "$heaptrace" record -q \
		--dump-on major -o "$trace" -- dotnet "$dll"
	$1 every "record --dump-on every-gc" "$trace" plain "$heaptrace" record \
		-q --dump-on every-gc -o "$trace" -- dotnet "$dll"
	$1 exit "record --dump-on exit" "$trace" plain "$heaptrace" record -q \
		--dump-on exit -o "$trace" -- dotnet "$dll"
	$1 alloc "record --allocations (major)" "$trace" plain "$heaptrace" \
		record -q --dump-on major --allocations -o "$trace" -- dotnet "$dll"
	[ -z "$gcdump" ] ||
		$1 gcdump "dotnet-gcdump collect, once" "$work/heap.gcdump" gcdump \
			dotnet "$dll"
}

trace=$work/trace.ht
: >"$work/gcdump-wall"
# the runs of all configurations interleaved, so that a change of load on
# the machine falls on them all alike
i=0
while [ $i -lt "$runs" ]; do
	i=$((i + 1))
	each_config run_once
done
{
	echo "ClrChurn $args on .NET $(dotnet --list-runtimes | awk '/NETCore/ { v = $2 } END { print v }'), $runs runs each (interleaved), medians; $(nproc) CPUs, load $(cut -d' ' -f1 /proc/loadavg)"
	echo "pause: GC.GetTotalPauseDuration() when the program ends (a dump at exit comes after), ms;"
	echo "+pause, +ms/GC: against no recorder (+least: the least pause of the runs against the"
	echo "least of no recorder's, the one least touched by other load); bytes per object dumped"
	echo "(per event with --allocations)"
	printf '%-30s %7s %7s %8s %5s %9s %7s %7s %7s %7s %9s %5s %s\n' configuration \
		"wall s" "CPU s" "RSS MiB" GCs "pause ms" "+pause" "+least" "ms/GC" "+ms/GC" \
		"trace MiB" dumps "bytes per"
	each_config report
	if [ -n "$gcdump" ]; then
		echo "dotnet-gcdump collect alone: $(median <"$work/gcdump-wall") s wall (median)"
	else
		echo "dotnet-gcdump: not installed (sh tools/install-deps.sh --tests)"
	fi
} | tee "$result"
