#!/bin/sh
# ends-test.sh HEAPTRACE SOURCE_DIR WORK_DIR RUNTIME PART - the ends of a
# recorded run on a real runtime (mono, java or dotnet), with Churn (a
# GC-heavy program, Churn.cs and Churn.java) built into WORK_DIR:
#
#   disk-full  the trace goes to a small tmpfs that fills up during the
#              run: `record` must exit 3 and say the recorder's cause
#              (file, byte, "No space left on device") with how the
#              program ended, and print no "wrote" line. Needs root (to
#              mount the tmpfs): skipped (77) otherwise or when the mount
#              fails.
#   kill       the program is killed with SIGKILL at a random moment of
#              its churning, several times: `record` exits 137, and
#              `check` says the trace is cut off (exit 4) or clean (0),
#              never NOT clean; stats must mark the last GC of a cut off
#              trace cut off. With Mono and .NET at least one kill must
#              land inside a GC or dump as the trace shows it (their GCs
#              write moves and heap walks, which reach the file while the
#              GC runs). The Java agent writes two events a GC, which
#              reach the file when a buffer fills or a GC ends: a kill
#              inside a JVM GC usually leaves a trace that ends before it,
#              clean, so there the count is only reported.
#
# Exits 77 (skipped) when the runtime, its compiler, jq or what the part
# needs is missing, and in a sanitizer build (HT_SANITIZE names it): the
# runtimes are not instrumented, and this part's C code is covered there by
# the unit and command tests.
set -u
if [ $# -ne 5 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR WORK_DIR RUNTIME PART" >&2
	exit 2
fi
heaptrace=$1 src=$2 work=$3 runtime=$4 part=$5
status=0
. "$src/../../lib.sh"

case ${HT_SANITIZE:-none} in
*address*|*undefined*)
	echo "SKIP: sanitizer build: the runtimes are not instrumented"
	exit 77 ;;
esac
need_tools jq
rm -rf "$work"
mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd -P)
unset HEAPTRACE_RECORDER_DIR

# ---- Churn for the runtime: the command that runs it, in "$@" -------------

build_churn() {
	case $runtime in
	mono)
		need_tools mono mcs
		mcs -nologo -warnaserror -out:"$work/Churn.exe" "$src/Churn.cs" ||
			{ echo "FAIL: mcs Churn.cs"; exit 1; }
		churn="mono $work/Churn.exe" name=mono ;;
	java)
		need_tools java javac
		javac -d "$work/classes" "$src/Churn.java" ||
			{ echo "FAIL: javac Churn.java"; exit 1; }
		# a small young generation: a GC every few milliseconds
		churn="java -Xmx64m -Xmn4m -cp $work/classes Churn" name=java ;;
	dotnet)
		need_tools dotnet
		dotnet_dir=$work
		. "$src/../clr/dotnet-env.sh"
		mkdir -p "$work/src"
		cp "$src/Churn.cs" "$src/Churn.csproj" "$work/src/"
		dotnet_build "$work/src" "$work/app" >"$work/build.log" 2>&1 || {
			echo "SKIP: Churn did not build with the .NET SDK:"
			tail -5 "$work/build.log"
			exit 77
		}
		# a small gen0 budget: a GC every few milliseconds
		export DOTNET_GCgen0size=0x40000
		churn="dotnet $work/app/Churn.dll" name=dotnet ;;
	*)
		echo "usage: $0: RUNTIME is mono, java or dotnet" >&2
		exit 2 ;;
	esac
}

# ---- disk full -----------------------------------------------------------

disk_full() {
	[ "$(id -u)" = 0 ] || { echo "SKIP: not root: no tmpfs to fill"; exit 77; }
	mkdir "$work/full"
	# 16 KiB: the header and a chunk or two, then ENOSPC
	mount -t tmpfs -o size=16k tmpfs "$work/full" 2>"$work/mount.err" || {
		echo "SKIP: cannot mount a tmpfs: $(cat "$work/mount.err")"
		exit 77
	}
	trap 'umount "$work/full" 2>/dev/null; rm -rf "$work"' EXIT
	"$heaptrace" record -o "$work/full/t.ht" -- $churn churn 2 \
		>"$work/out" 2>"$work/err"
	st=$?
	[ "$st" = 3 ] || fail "disk full: record exited $st, not 3"
	grep -q "^heaptrace: the $name recorder could not write the trace: $work/full/t.ht: byte [0-9]*: cannot write: No space left on device (the program exited with status 0)\$" \
		"$work/err" ||
		fail "disk full: no message with the cause and the program's status"
	if grep -q "wrote $work/full/t.ht" "$work/err"; then
		fail "disk full: record still says it wrote the trace"
	fi
	[ $status = 0 ] || { echo "--- record's stderr:"; cat "$work/err"; }
	# what was written before the disk filled stays readable
	"$heaptrace" check "$work/full/t.ht" >"$work/check.out" 2>&1
	echo "note: check of the trace of a full disk exits $?:" \
		"$(tail -1 "$work/check.out")"
	[ $status = 0 ] && echo "ok: disk full: record exits 3 with the cause"
}

# ---- kill -9 -------------------------------------------------------------

# The pid of the program record runs (its only child), waiting for it.
child_of() {
	i=0
	while :; do
		c=$(pgrep -P "$1" | head -1)
		[ -n "$c" ] && { echo "$c"; return 0; }
		i=$((i + 1))
		[ $i -le 100 ] || return 1
		sleep 0.05
	done
}

kill_runs() {
	need_tools pgrep awk
	runs=6 cut=0 clean=0
	for i in $(seq 1 $runs); do
		trace=$work/kill$i.ht
		"$heaptrace" record -q -o "$trace" -- $churn churn 60 \
			>"$work/kill$i.out" 2>"$work/kill$i.err" &
		rec=$!
		pid=$(child_of $rec) || { fail "kill $i: no program started"; kill $rec; continue; }
		# 0.8 to 2.8 s in: after start-up, while it churns
		sleep "$(awk -v s="$i$$" 'BEGIN { srand(s); printf "%.2f", 0.8 + 2 * rand() }')"
		kill -9 "$pid"
		wait $rec
		st=$?
		[ "$st" = 137 ] || fail "kill $i: record exited $st, not 137"
		"$heaptrace" check --format json "$trace" >"$work/check$i.json" \
			2>"$work/check$i.err"
		st=$?
		case $st in
		4)
			cut=$((cut + 1))
			jq -e '.cut_off and (.clean | not) and .violation_count == 0
			       and (.cut_off_inside | length) > 0' \
				"$work/check$i.json" >/dev/null ||
				fail "kill $i: check exits 4 without a cut off report"
			"$heaptrace" stats --format json "$trace" \
				>"$work/stats$i.json" 2>/dev/null
			jq -e '.gcs[-1].cut_off and (.gcs[-1].finished | not) and
			       ([.gcs[:-1][] | select(.cut_off)] | length) == 0' \
				"$work/stats$i.json" >/dev/null ||
				fail "kill $i: stats does not mark the last GC, alone, cut off"
			;;
		0)
			clean=$((clean + 1)) ;;
		*)
			fail "kill $i: check exits $st (cut off is 4, clean 0)"
			"$heaptrace" check "$trace" | tail -5 ;;
		esac
		echo "note: kill $i: check exits $st:" \
			"$(jq -r '"\(.events) events, \(.gcs) GCs, cut off inside: \(.cut_off_inside)"' \
				"$work/check$i.json" 2>/dev/null)"
	done
	[ $cut -ge 1 ] || [ "$runtime" = java ] ||
		fail "no kill of $runs landed inside a GC: the program is not GC-heavy enough to test this"
	echo "note: $runs kills: $cut cut off inside a GC or dump, $clean between GCs"
	[ $status = 0 ] && echo "ok: kill -9: never NOT clean"
}

build_churn
case $part in
disk-full) disk_full ;;
kill) kill_runs ;;
*) echo "usage: $0: PART is disk-full or kill" >&2; exit 2 ;;
esac
exit $status
