#!/bin/sh
# ends-test.sh HEAPTRACE SOURCE_DIR WORK_DIR RUNTIME PART - the ends of a
# recorded run on a real runtime (mono, java or dotnet), with Churn (a
# GC-heavy program, Churn.cs and Churn.java) built into WORK_DIR:
#
#   disk-full  the trace goes to a small tmpfs that fills up during the
#              run: `record` must exit 3 and say the recorder's cause
#              (file, byte, "No space left on device") with how the
#              program ended, and print no "wrote" line; also when the
#              program is then killed with SIGKILL. Needs root (to
#              mount the tmpfs): skipped (77) otherwise or when the mount
#              fails.
#   kill       the program is killed with SIGKILL at a random moment of
#              its churning, eight times (four under a sanitizer, where
#              each check of a killed trace takes ten times as long and
#              the code it runs is the same): `record` exits 137, and
#              `check` says the trace is cut off (exit 4) or clean (0),
#              never NOT clean; stats must mark the last GC of a cut off
#              trace cut off. With Mono and .NET at least one kill must
#              land inside a GC or dump as the trace shows it (their GCs
#              write moves and heap walks, which reach the file while the
#              GC runs). The Java agent writes two events a GC, which
#              reach the file when a buffer fills or a GC ends: a kill
#              inside a JVM GC usually leaves a trace that ends before it,
#              clean, so there the count is only reported.
#   signals    SIGTERM (to the program, then to record, which passes it
#              on), then SIGINT (as Ctrl-C sends it, to the program),
#              while Churn waits: record exits 128+N and the trace is
#              closed, clean, with the exit dump (--dump-on exit). Then an
#              unhandled exception: Mono and Java exit 1 with the exit
#              dump; .NET aborts (134) without one, its trace never broken.
#   wrapper    Churn run by a wrapper script of the test's, which sets
#              variables for the runtime (MONO_GC_PARAMS and more in
#              MONO_ENV_OPTIONS, JAVA_TOOL_OPTIONS, DOTNET_GCgen0size) and
#              execs it: recognized as it is (Mono) or with --runtime; the
#              program must see the wrapper's settings and none of
#              record's, and the trace must hold GCs and be clean. For Mono
#              also Debian's own wrapper, mcs, compiling Churn.cs; for .NET
#              also the published app's own executable (its apphost).
#
# check holds the relocation proof throughout: a trace that ends in any of
# these ways must still agree with the rules. Churn keeps Mono's old
# generation busy: concurrent majors free old objects unwalked, and the
# minor GCs after them promote into the freed slots (doc/design.md, "The
# relocation proof", on what a block may place).
#
# Exits 77 (skipped) when the runtime, its compiler, jq or what the part
# needs is missing. Under AddressSanitizer (HT_SANITIZE names it, HT_CC is
# the compiler) the recorders are instrumented and the runtimes are not:
# mono, java and dotnet are then run through scripts first on PATH that
# preload the sanitizer's runtime, and what starts a runtime by its full
# path (Debian's mcs, a .NET apphost) is not tried.
set -u
if [ $# -ne 5 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR WORK_DIR RUNTIME PART" >&2
	exit 2
fi
heaptrace=$1 src=$2 work=$3 runtime=$4 part=$5
status=0
. "$src/../../lib.sh"

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

	# the same, the program then killed outright: the recorder said the
	# cause after the GC that met it, long before
	rm -f "$work/full/t.ht"
	"$heaptrace" record -o "$work/full/t.ht" -- $churn wait 2 \
		>"$work/killed.out" 2>"$work/killed.err" &
	rec=$!
	i=0
	while ! grep -q '^ready' "$work/killed.out" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le 600 ] && kill -0 $rec 2>/dev/null ||
			{ fail "disk full, killed: the program did not get ready"; return; }
		sleep 0.1
	done
	kill -9 "$(pgrep -P $rec | head -1)"
	wait $rec
	st=$?
	[ "$st" = 3 ] || fail "disk full, killed: record exited $st, not 3"
	grep -q "^heaptrace: the $name recorder could not write the trace: $work/full/t.ht: byte [0-9]*: cannot write: No space left on device (the program was killed by signal 9)\$" \
		"$work/killed.err" ||
		{ fail "disk full, killed: no message with the cause"; cat "$work/killed.err"; }
	[ $status = 0 ] &&
		echo "ok: disk full, then kill -9: record exits 3 with the cause"
}

# ---- kill -9 -------------------------------------------------------------

kill_runs() {
	need_tools pgrep awk
	runs=8 cut=0 clean=0
	# the sanitizers check the same paths in fewer runs; the spread of
	# moments is the plain build's to give
	if $sanitized; then runs=4; fi
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
		"$heaptrace" check --format json "$trace" \
			>"$work/check$i.json" \
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

# ---- wrappers --------------------------------------------------------------

# recorded WHAT TRACE RECORD_ARGS... -- CMD...: record must exit 0 and the
# trace hold a GC and check clean.
recorded() {
	what=$1 trace=$2
	shift 2
	"$heaptrace" record -q -o "$trace" "$@" >"$work/w.out" 2>"$work/w.err"
	st=$?
	[ "$st" = 0 ] ||
		{ fail "$what: record exited $st"; cat "$work/w.err"; return 1; }
	"$heaptrace" check --format json "$trace" \
		>"$work/w.json" 2>&1
	jq -e '.clean and .gcs > 0' "$work/w.json" >/dev/null ||
		{ fail "$what: the trace holds no GC or is not clean"; cat "$work/w.json"; return 1; }
	echo "ok: $what: recorded, $(jq -r '"\(.gcs) GCs, \(.dumps) dumps"' "$work/w.json")"
}

# sees WHAT LINE: the program printed LINE (a variable as it saw it).
sees() {
	grep -qxF -- "$2" "$work/w.out" ||
		fail "$1: the program did not see '$2': $(tr '\n' ' ' <"$work/w.out")"
}

wrappers() {
	w=$work/wrapper
	case $runtime in
	mono)
		cat >"$w" <<EOF
#!/bin/sh
# a wrapper of the test's: Mono's GC set its way, then mono runs Churn
MONO_GC_PARAMS=nursery-size=1m
MONO_ENV_OPTIONS="\$MONO_ENV_OPTIONS --debug"
WRAPPED=yes
export MONO_GC_PARAMS MONO_ENV_OPTIONS WRAPPED
exec mono "$work/Churn.exe" "\$@"
EOF
		chmod +x "$w"
		vars="MONO_GC_PARAMS MONO_ENV_OPTIONS WRAPPED HEAPTRACE_REPORT_FD HEAPTRACE_OUTPUT LD_LIBRARY_PATH"
		unset MONO_ENV_OPTIONS LD_LIBRARY_PATH
		for how in "" "--runtime mono"; do
			recorded "mono wrapper ${how:-recognized}" "$work/w.ht" \
				$how -- "$w" churn 1 $vars || continue
			sees "mono wrapper" "MONO_GC_PARAMS=nursery-size=1m"
			# the recorder put its part back: the wrapper's is left
			sees "mono wrapper" "MONO_ENV_OPTIONS= --debug"
			sees "mono wrapper" "WRAPPED=yes"
			sees "mono wrapper" "HEAPTRACE_REPORT_FD unset"
			sees "mono wrapper" "HEAPTRACE_OUTPUT unset"
			sees "mono wrapper" "LD_LIBRARY_PATH unset"
		done
		# Debian's wrapper of the C# compiler, compiling Churn.cs
		if $sanitized; then
			echo "note: mcs runs /usr/bin/mono itself: not tried under a sanitizer"
		elif head -c 2 "$(command -v mcs)" | grep -q '#!'; then
			recorded "Debian's mcs wrapper" "$work/mcs.ht" -- \
				mcs -nologo -out:"$work/Churn2.exe" "$src/Churn.cs"
			[ -f "$work/Churn2.exe" ] || fail "mcs under record built nothing"
		else
			echo "note: mcs is no wrapper script here: not tried"
		fi
		;;
	java)
		cat >"$w" <<EOF
#!/bin/sh
# a wrapper of the test's: JVM options of its own, then java runs Churn
JAVA_TOOL_OPTIONS=-Dchurn.wrapper=yes
WRAPPED=yes
export JAVA_TOOL_OPTIONS WRAPPED
exec java -Xmn4m -cp "$work/classes" Churn "\$@"
EOF
		chmod +x "$w"
		unset JDK_JAVA_OPTIONS JAVA_TOOL_OPTIONS
		vars="-Dchurn.wrapper JAVA_TOOL_OPTIONS WRAPPED JDK_JAVA_OPTIONS HEAPTRACE_RESTORE"
		# not recognized without --runtime: a usage error that says
		# what to do
		"$heaptrace" record -q -o "$work/w.ht" -- "$w" churn 1 \
			>/dev/null 2>"$work/w.err"
		st=$?
		[ "$st" = 2 ] || fail "java wrapper without --runtime: exit $st, not 2"
		grep -q -- "--runtime says which one a command starts" "$work/w.err" ||
			fail "java wrapper without --runtime: no hint of --runtime"
		if recorded "java wrapper --runtime java" "$work/w.ht" \
			--runtime java -- "$w" churn 1 $vars; then
			sees "java wrapper" "-Dchurn.wrapper=yes"
			sees "java wrapper" "JAVA_TOOL_OPTIONS=-Dchurn.wrapper=yes"
			sees "java wrapper" "WRAPPED=yes"
			# the agent put JDK_JAVA_OPTIONS back: JVMs the program
			# starts do not record
			sees "java wrapper" "JDK_JAVA_OPTIONS unset"
			sees "java wrapper" "HEAPTRACE_RESTORE unset"
		fi
		;;
	dotnet)
		cat >"$w" <<EOF
#!/bin/sh
# a wrapper of the test's: the GC's budget set its way, then dotnet runs Churn
DOTNET_GCgen0size=0x80000
WRAPPED=yes
export DOTNET_GCgen0size WRAPPED
exec dotnet "$work/app/Churn.dll" "\$@"
EOF
		chmod +x "$w"
		vars="DOTNET_GCgen0size WRAPPED CORECLR_ENABLE_PROFILING HEAPTRACE_REPORT_FD"
		unset CORECLR_ENABLE_PROFILING
		if recorded "dotnet wrapper --runtime dotnet" "$work/w.ht" \
			--runtime dotnet -- "$w" churn 1 $vars; then
			sees "dotnet wrapper" "DOTNET_GCgen0size=0x80000"
			sees "dotnet wrapper" "WRAPPED=yes"
			sees "dotnet wrapper" "CORECLR_ENABLE_PROFILING unset"
			sees "dotnet wrapper" "HEAPTRACE_REPORT_FD unset"
		fi
		# the published app's own executable, recognized as it is
		if $sanitized; then
			echo "note: the apphost loads the runtime itself: not tried under a sanitizer"
		elif [ -x "$work/app/Churn" ]; then
			recorded "dotnet apphost" "$work/a.ht" -- \
				"$work/app/Churn" churn 1
		else
			fail "the .NET SDK built no apphost for Churn"
		fi
		;;
	esac
}

# ---- SIGTERM, Ctrl-C, an unhandled exception --------------------------------

# ended SIGNAL [record]: Churn (wait) recorded with --dump-on exit, sent
# SIGNAL once ready (to record, which passes it on, with "record"). record
# must exit 128+N, and the trace be closed and clean with the exit dump in
# it (the only one in this mode).
ended() {
	sig=$1 to=${2:-program}
	case $sig in
	TERM) n=15 ;;
	INT) n=2 ;;
	esac
	# files of this call alone: an older "ready" must not be read as
	# this program's
	out=$work/$sig-$to trace=$work/$sig-$to.ht
	"$heaptrace" record -q --dump-on exit -o "$trace" -- $churn wait 1 \
		>"$out.out" 2>"$out.err" &
	rec=$!
	i=0
	while ! grep -q '^ready' "$out.out" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le 600 ] && kill -0 $rec 2>/dev/null ||
			{ fail "$sig: the program did not get ready"; kill $rec; return; }
		sleep 0.1
	done
	pid=$(pgrep -P $rec | head -1)
	# as a terminal's Ctrl-C reaches the program: to it directly
	if [ "$to" = record ]; then
		kill -"$sig" $rec
	else
		kill -"$sig" "$pid"
	fi
	i=0
	while kill -0 $rec 2>/dev/null; do
		i=$((i + 1))
		if [ $i -gt 900 ]; then
			fail "$sig: the program did not end within 90 s"
			kill -9 "$pid"
			break
		fi
		sleep 0.1
	done
	wait $rec
	st=$?
	[ "$st" = $((128 + n)) ] ||
		{ fail "$sig: record exited $st, not $((128 + n))"; cat "$out.err"; return; }
	"$heaptrace" check --format json "$trace" \
		>"$out.json" 2>&1
	jq -e '.clean and .indexed and .dumps == 1' "$out.json" >/dev/null ||
		{ fail "$sig: the trace is not closed and clean with the exit dump"; cat "$out.json"; return; }
	echo "ok: $sig to the $to: exit dump taken, trace closed, status $st"
}

signals() {
	need_tools pgrep
	ended TERM
	ended TERM record
	ended INT
	# an unhandled exception: the status the runtime gives it, and the
	# exit dump where the runtime lets one be taken
	"$heaptrace" record -q --dump-on exit -o "$work/throw.ht" -- \
		$churn throw 0.5 >"$work/throw.out" 2>"$work/throw.err"
	st=$?
	"$heaptrace" check --format json "$work/throw.ht" \
		>"$work/throw.json" 2>&1
	case $runtime in
	mono|java)
		# Mono exits 1 after printing it, the JVM too (VM death)
		[ "$st" = 1 ] || fail "unhandled exception: record exited $st, not 1"
		jq -e '.clean and .indexed and .dumps == 1' "$work/throw.json" \
			>/dev/null ||
			fail "unhandled exception: no exit dump in a closed, clean trace"
		;;
	dotnet)
		# the runtime aborts (SIGABRT): no Shutdown, no exit dump; the
		# trace ends where it was, never broken
		[ "$st" = 134 ] || fail "unhandled exception: record exited $st, not 134"
		jq -e '(.clean or .cut_off) and .dumps == 0' "$work/throw.json" \
			>/dev/null ||
			fail "unhandled exception: the trace is broken, or has a dump"
		;;
	esac
	[ $status = 0 ] &&
		echo "ok: unhandled exception: exit $st, $(jq -r '"\(.dumps) dump, indexed \(.indexed)"' "$work/throw.json")"
}

# Under AddressSanitizer: each runtime through a script that preloads the
# sanitizer's runtime (the runtimes catch SIGSEGV and friends on purpose,
# and keep what they allocate until exit). After Churn is built: the
# compilers run as they are.
sanitized=false
preload_sanitizer() {
	case ${HT_SANITIZE:-none} in
	*address*)
		asan=$(${HT_CC:-cc} -print-file-name=libclang_rt.asan-x86_64.so)
		[ -f "$asan" ] || asan=$(${HT_CC:-cc} -print-file-name=libasan.so)
		[ -f "$asan" ] ||
			{ echo "SKIP: sanitizer build, no runtime '$asan' to preload"; exit 77; }
		mkdir -p "$work/bin"
		for rt in mono java dotnet; do
			real=$(command -v $rt) || continue
			cat >"$work/bin/$rt" <<EOF
#!/bin/sh
LD_PRELOAD=$asan\${LD_PRELOAD:+:\$LD_PRELOAD} \\
ASAN_OPTIONS=\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:allow_user_segv_handler=1 \\
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \\
exec $real "\$@"
EOF
			chmod +x "$work/bin/$rt"
		done
		PATH=$work/bin:$PATH
		sanitized=true
		echo "note: the runtimes run with $asan preloaded"
		;;
	esac
}

build_churn
preload_sanitizer
case $part in
disk-full) disk_full ;;
kill) kill_runs ;;
wrapper) wrappers ;;
signals) signals ;;
*) echo "usage: $0: PART is disk-full, kill, wrapper or signals" >&2; exit 2 ;;
esac
exit $status
