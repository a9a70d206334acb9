#!/bin/sh
# cutoff-test.sh HEAPTRACE MODULE SRCDIR BUILDDIR [SANITIZER_RUNTIME] - a
# recording of .NET killed with SIGKILL in the middle of a dump: the
# classes the cut-off dump meets are named (the recorder names a class when
# it loads, and the classes of a walk beside it), not raw ids (?0x...).
# Builds CutOff.cs with the SDK (offline, HOME inside BUILDDIR), records
# it with --dump-on signal, asks for the run's first dump (SIGUSR1 to
# record, which passes it on) and kills the program once that dump reaches
# the file; `check` must say the trace is cut off inside the dump (exit
# 4), and `stats` and `top` must name every class of the dump. A kill that
# lands after the dump's end is tried again. Exits 77 (skipped) where
# dotnet or the module is missing. In a sanitizer build, dotnet runs with
# SANITIZER_RUNTIME preloaded, as in clr-test.sh.
set -u
heaptrace=$1 module=$2 src=$3 build=$4 sanitizer=${5:-}
command -v dotnet >/dev/null || { echo "SKIP: dotnet is not installed"; exit 77; }
[ -f "$module" ] || { echo "SKIP: the CLR recorder was not built"; exit 77; }

N=1000000
unset HEAPTRACE_RECORDER_DIR
dotnet_dir=$build
. "$src/dotnet-env.sh"
program_build CutOff "$src" "$build" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "$sanitizer" ]; then
	sanitized_dotnet "$sanitizer" "$work"
	N=300000
fi
trace=$work/cut.ht

size() { stat -c %s "$trace" 2>/dev/null || echo 0; }

# one recording, killed once its first dump has begun to reach the file:
# 0 when check says it was cut off inside the dump
attempt() {
	rm -f "$trace" "$work/out"
	"$heaptrace" record -q --dump-on signal -o "$trace" -- \
		dotnet "$build/out/CutOff.dll" $N >"$work/out" 2>"$work/err" &
	rec=$!
	i=0
	while ! grep -q ready "$work/out" 2>/dev/null; do
		i=$((i + 1))
		[ $i -lt 600 ] || { echo "CutOff did not start"; cat "$work/err"; kill -9 "$(pgrep -P $rec)" 2>/dev/null; wait $rec; return 1; }
		sleep 0.05
	done
	prog=$(pgrep -P $rec)
	before=$(size)
	kill -USR1 $rec
	# a chunk or two of the dump's objects, then the kill
	i=0
	while [ "$(size)" -lt $((before + ${1:-40000})) ] && [ $i -lt 2000 ]; do
		i=$((i + 1))
		sleep 0.005
	done
	kill -9 "$prog"
	wait $rec
	st=$?
	[ $st = 137 ] || { echo "FAIL: record exited $st, not 137"; cat "$work/err"; exit 1; }
	"$heaptrace" check "$trace" >"$work/check" 2>&1
	st=$?
	[ $st = 4 ] && grep -q "dump" "$work/check" &&
		"$heaptrace" stats "$trace" 2>&1 | grep -q "incomplete (the trace ends inside it)"
}

cut=false
for grow in 40000 20000 80000 10000 160000; do
	if attempt $grow; then
		cut=true
		break
	fi
	echo "note: the kill after $grow bytes did not land inside the dump:"
	tail -2 "$work/check"
done
$cut || { echo "FAIL: no kill landed inside the dump"; exit 1; }
echo "ok: killed inside the dump ($(tail -1 "$work/check"))"

failures=0
"$heaptrace" stats "$trace" >"$work/stats" 2>&1
"$heaptrace" top --classes -n 1000 "$trace" >"$work/top" 2>&1
for f in stats top; do
	if grep -q '?0x' "$work/$f"; then
		echo "FAIL: $f names a class of the cut-off dump by its id:"
		grep '?0x' "$work/$f" | head -5
		failures=$((failures + 1))
	fi
	for c in CutOff.Node CutOff.Payload; do
		grep -q " $c\$" "$work/$f" ||
			{ echo "FAIL: $f does not name $c"; failures=$((failures + 1)); }
	done
done
grep -E ' CutOff\.(Node|Payload)$' "$work/stats"
[ $failures = 0 ] && echo "ok: the cut-off dump's classes are named"
[ $failures = 0 ]
