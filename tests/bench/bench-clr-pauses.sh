#!/bin/sh
# bench-clr-pauses.sh - what the CoreCLR recorder adds to the pause of a
# GC it does not dump, against the bare runtime and against the floor the
# runtime itself imposes once a profiler asks for the GC events. Each
# workload runs, interleaved, several times in each configuration:
#   bare      no profiler;
#   nobgc     no profiler, background GC off (DOTNET_gcConcurrent=0): the
#             part of the floor that is the schedule of blocking GCs alone;
#   floor     the recorder loaded with the recorder's event mask but
#             recording nothing (HEAPTRACE_CLR_FLOOR=1, src/recorders/clr/
#             mask.c): background GC off, the movement events of every
#             GC taken and dropped;
#   recorder  `heaptrace record --dump-on signal`: every GC recorded (its
#             moves and survivors, from the movement events), none dumped
#             until the exit;
#   floor-callbacks, recorder-callbacks  the same with the moves from
#             COR_PRF_MONITOR_GC's callbacks (HEAPTRACE_CLR_MOVES=callbacks),
#             as the recorder took them before: the runtime's walks at
#             every GC;
#   eventpipe the runtime's own movement events instead (dotnet-trace with
#             the GCHeapSurvivalAndMovement keyword, which leaves background
#             GC on), where dotnet-trace is installed;
#   eventpipe-nobgc  the same with background GC off, to be read against
#             nobgc: the movement events where every GC stops the program.
# The pauses are the runtime's own: a startup hook (GcPauses.cs) counts
# the GCs and GC.GetTotalPauseDuration() at the program's end, and each
# GC's pause from the runtime's GC events; the exit dump comes after.
# Workloads: GcChurn (many small GCs over a changing graph), ClrChurn (a
# live heap of 300,000 items; also under server GC, a heap per core, whose
# GC threads walk and report the moves at once), Roslyn's csc.dll from the SDK compiling 60
# sources (the project's C# programs, ten copies each), and the SDK's
# ASP.NET Core `webapi` template (no OpenAPI: it needs no package) serving
# 20,500 loopback requests on 8 connections (http-load.py), then ended by
# SIGTERM, which the host answers with an orderly shutdown.
#
# usage: bench-clr-pauses.sh HEAPTRACE PROFILER SOURCE_DIR WORK_DIR RESULT_FILE [sanitized]
#
# HT_BENCH_CLR_RUNS runs per configuration (default 3, medians shown);
# HT_BENCH_CLR_CONFIGS and HT_BENCH_CLR_WORKLOADS choose among them (all
# by default).
# Exits 77 without dotnet, and under sanitizers.
set -u
heaptrace=$1 profiler=$2 src=$3 work=$4 result=$5
[ "${6:-}" = sanitized ] && { echo "SKIP: sanitizer build"; exit 77; }
for p in dotnet timeout awk; do
	command -v $p >/dev/null || { echo "SKIP: no $p"; exit 77; }
done
runs=${HT_BENCH_CLR_RUNS:-3}
rm -rf "$work"
mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd -P)
dotnet_dir=$work
. "$src/../runtimes/clr/dotnet-env.sh"

# build NAME SOURCE KIND: SOURCE built as NAME.dll into $work/NAME
build() {
	mkdir -p "$work/$1-src"
	cp "$2" "$work/$1-src/"
	sed -e "s/KnownHeap/$1/g" -e "s/<OutputType>Exe</<OutputType>$3</" \
		"$src/../runtimes/clr/KnownHeap.csproj" >"$work/$1-src/$1.csproj"
	dotnet_build "$work/$1-src" "$work/$1" >"$work/$1.log" 2>&1 ||
		{ cat "$work/$1.log"; echo "cannot build $2"; exit 1; }
}
build GcPauses "$src/GcPauses.cs" Library
build GcChurn "$src/GcChurn.cs" Exe
build ClrChurn "$src/ClrChurn.cs" Exe

# Roslyn: the SDK's own compiler, its sources ten copies of each C#
# program of the project, each copy in a namespace of its own.
sdk=$(dotnet --list-sdks | awk 'END { v = $1; gsub(/[][]/, "", $2); print $2 "/" v }')
csc=$sdk/Roslyn/bincore/csc.dll
runtime=$(dotnet --list-runtimes | awk '/NETCore/ { v = $2 } END { print v }')
refdir=$(dirname "$(dirname "$sdk")")/packs/Microsoft.NETCore.App.Ref/$runtime/ref/net${runtime%.*}
mkdir -p "$work/roslyn-src"
i=0
while [ $i -lt 10 ]; do
	i=$((i + 1))
	# a fixed set, so that the workload stays the same as tests are added
	for f in "$src"/ClrChurn.cs "$src"/GcChurn.cs \
		"$src"/../runtimes/clr/KnownHeap.cs "$src"/../runtimes/clr/Shapes.cs \
		"$src"/../runtimes/ends/Churn.cs "$src"/../runtimes/mono/KnownHeap.cs; do
		d=$(basename "$(dirname "$f")")
		{ echo "namespace Copy${i}_$d {"; cat "$f"; echo "}"; } \
			>"$work/roslyn-src/$d-$(basename "$f" .cs)-$i.cs"
	done
done
# the webapi template, made and built offline from the SDK's templates
webapi_ok=yes
( cd "$work" && dotnet new webapi --no-openapi -o webapi-src -n webapi ) \
	>"$work/webapi.log" 2>&1 &&
	dotnet_build "$work/webapi-src" "$work/webapi" >>"$work/webapi.log" 2>&1 ||
	webapi_ok=no
# a free loopback port for it
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

csc_args="-nologo -t:library -unsafe -nowarn:CS0649,CS0169,CS0414,CS0168,CS0219,CS8981 -out:$work/roslyn.dll"
for r in "$refdir"/*.dll; do csc_args="$csc_args -r:$r"; done
roslyn_ok=yes
[ -f "$csc" ] && [ -d "$refdir" ] || roslyn_ok=no

trace_tool=$(dotnet_tool dotnet-trace)
guid='{9d3f4b7e-2c61-4a8e-b5d0-7e1a6c2f8b43}'

# run_once WORKLOAD CONFIG: one run, its line of figures appended to
# $work/WORKLOAD.CONFIG
run_once() {
	out=$work/$1.$2
	case $1 in
	gcchurn) set -- "$1" "$2" dotnet "$work/GcChurn/GcChurn.dll" 40 100000 ;;
	clrchurn|clrchurn-server) set -- "$1" "$2" dotnet "$work/ClrChurn/ClrChurn.dll" 300000 10 ;;
	# shellcheck disable=SC2086
	roslyn) set -- "$1" "$2" dotnet "$csc" $csc_args "$work"/roslyn-src/*.cs ;;
	webapi) set -- "$1" "$2" dotnet "$work/webapi/webapi.dll" ;;
	esac
	workload=$1 config=$2
	shift 2
	rm -f "$work/trace.ht" "$work/trace.nettrace"
	export DOTNET_STARTUP_HOOKS="$work/GcPauses/GcPauses.dll" \
		HT_GC_PAUSES="$out" ASPNETCORE_URLS="http://127.0.0.1:$port" \
		ASPNETCORE_CONTENTROOT="$work/webapi"
	case $config in
	*-nobgc) export DOTNET_gcConcurrent=0 ;;
	*-callbacks) export HEAPTRACE_CLR_MOVES=callbacks ;;
	esac
	case $workload in
	*-server) export DOTNET_gcServer=1 ;;
	esac
	if [ "$workload" = webapi ]; then
		config_run "$config" "$@" &
		pid=$!
		python3 "$src/../runtimes/http-load.py" "$port" /weatherforecast 20500 8 \
			>>"$work/load.$config" 2>&1 || echo failed >>"$out"
		pkill -TERM -f "^dotnet $work/webapi/webapi.dll" ||
			echo failed >>"$out"
		wait $pid || echo failed >>"$out"
	else
		config_run "$config" "$@" || echo failed >>"$out"
	fi
	unset DOTNET_STARTUP_HOOKS HT_GC_PAUSES ASPNETCORE_URLS ASPNETCORE_CONTENTROOT \
		DOTNET_gcConcurrent HEAPTRACE_CLR_MOVES DOTNET_gcServer
}

# config_run CONFIG COMMAND...: the command run in that configuration
config_run() {
	config=$1
	shift
	case $config in
	bare|nobgc) timeout -k 5 600 "$@" ;;
	floor*) CORECLR_ENABLE_PROFILING=1 CORECLR_PROFILER=$guid \
		CORECLR_PROFILER_PATH=$profiler HEAPTRACE_CLR_FLOOR=1 \
		timeout -k 5 600 "$@" ;;
	recorder*) timeout -k 5 600 "$heaptrace" record -q --dump-on signal \
		-o "$work/trace.ht" -- "$@" ;;
	# the hook for the program alone: dotnet-trace is a .NET program too
	eventpipe*) env -u DOTNET_STARTUP_HOOKS -u HT_GC_PAUSES \
		timeout -k 5 600 "$trace_tool" collect --show-child-io \
		-o "$work/trace.nettrace" \
		--providers Microsoft-Windows-DotNETRuntime:0x400000:5 -- \
		env DOTNET_STARTUP_HOOKS="$DOTNET_STARTUP_HOOKS" \
		HT_GC_PAUSES="$HT_GC_PAUSES" "$@" ;;
	esac >"$work/stdout.$config" 2>"$work/stderr.$config"
}

workloads="gcchurn clrchurn clrchurn-server"
[ $roslyn_ok = yes ] && workloads="$workloads roslyn"
[ $webapi_ok = yes ] && workloads="$workloads webapi"
configs="bare nobgc floor recorder floor-callbacks recorder-callbacks"
[ -n "$trace_tool" ] && configs="$configs eventpipe eventpipe-nobgc"
configs=${HT_BENCH_CLR_CONFIGS:-$configs}
workloads=${HT_BENCH_CLR_WORKLOADS:-$workloads}

i=0
while [ $i -lt "$runs" ]; do
	i=$((i + 1))
	for w in $workloads; do
		for c in $configs; do
			run_once $w $c
		done
	done
done

# median FIELD FILE: the median of a field of the lines "gcs N pause_ms ..."
median() {
	awk -v f="$1" '$1 == "gcs" { for (i = 1; i < NF; i += 2) if ($i == f) print $(i + 1) }' "$2" |
		sort -n | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)]; else print "-" }'
}

{
	echo "GC pauses of GCs not dumped, .NET $runtime, $runs runs each (interleaved), medians;"
	echo "$(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg) at the end"
	echo "pause: GC.GetTotalPauseDuration() at the program's end, ms; p50..max: per GC, ms,"
	echo "from the runtime's GC events; x bare, x floor: total pause against bare (nobgc for"
	echo "a -nobgc configuration) and floor (floor-callbacks for a -callbacks one);"
	echo "goal: the total pause at most 1.3 x bare's plus 1 ms a GC, p50 and p90 at most"
	echo "1.3 x bare's plus 1 ms"
	printf '%-9s %-18s %5s %9s %7s %7s %7s %7s %7s %7s %4s %s\n' workload config GCs \
		"pause ms" p50 p90 p99 max "x bare" "x floor" goal failed
	for w in $workloads; do
		for c in $configs; do
			case $c in
			*-nobgc) b=nobgc ;;
			*) b=bare ;;
			esac
			case $c in
			*-callbacks) fl=floor-callbacks ;;
			*) fl=floor ;;
			esac
			f=$work/$w.$c
			pause=$(median pause_ms "$f")
			gcs=$(median gcs "$f")
			bare=$(median pause_ms "$work/$w.$b" 2>/dev/null)
			floor=$(median pause_ms "$work/$w.$fl" 2>/dev/null)
			goal=$(echo "$pause $bare $gcs $(median p50 "$f") $(median p50 "$work/$w.$b") $(median p90 "$f") $(median p90 "$work/$w.$b")" |
				awk 'NF == 7 && $2 != "-" { print ($1 <= 1.3 * $2 + $3 && $4 <= 1.3 * $5 + 1 && $6 <= 1.3 * $7 + 1) ? "yes" : "no" }' 2>/dev/null)
			printf '%-9s %-18s %5s %9s %7s %7s %7s %7s %7s %7s %4s %s\n' $w $c \
				"$gcs" "$pause" "$(median p50 "$f")" \
				"$(median p90 "$f")" "$(median p99 "$f")" \
				"$(median max "$f")" \
				"$(echo "$pause $bare" | awk '$2 > 0 { printf "%.2f", $1 / $2 }')" \
				"$(echo "$pause $floor" | awk '$2 > 0 { printf "%.2f", $1 / $2 }')" \
				"${goal:--}" \
				"$(awk '/^failed/ { n++ } END { print n + 0 }' "$f" 2>/dev/null)"
		done
	done
	[ -n "$trace_tool" ] ||
		echo "eventpipe: dotnet-trace not installed (sh tools/install-deps.sh --tests)"
} | tee "$result"
