#!/bin/sh
# java-test.sh - the JVMTI agent on a real JVM, through `heaptrace record`.
#
# Records KnownHeap (see KnownHeap.java) and, at the point where it waits,
# runs jcmd GC.class_histogram and then jcmd JVMTI.data_dump, which returns
# once the agent has taken its dump; check-knownheap.py then checks that
# dump against what the program built and against the histogram. Then
# records once in each other --dump-on mode and checks the traces, the
# exit status passed through, and the message when the agent cannot load.
#
# usage: java-test.sh HEAPTRACE SOURCE_DIR WORK_DIR
# Exits 77 (skipped) without java, javac, jcmd or python3. Under
# AddressSanitizer (HT_SANITIZE names it) the agent is instrumented: the
# JVM then runs with the sanitizer's runtime preloaded, through a `java`
# wrapper, since the runtime must come first in the process.
set -u

if [ $# -ne 3 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR WORK_DIR" >&2
	exit 2
fi
heaptrace=$1 src=$2 work=$3
n=5000 depth=6 leaves=8 garbage=200000
status=0

for tool in java javac jcmd python3; do
	command -v "$tool" >/dev/null 2>&1 || {
		echo "SKIP: no $tool"
		exit 77
	}
done

fail() {
	echo "FAIL: $*" >&2
	status=1
}

rm -rf "$work"
mkdir -p "$work/classes" "$work/bin" || exit 1
javac -d "$work/classes" "$src/KnownHeap.java" || {
	echo "FAIL: javac KnownHeap.java" >&2
	exit 1
}

# The sanitizer runtime the agent needs loaded first, if it needs one.
sanitizer_runtime() {
	case ${HT_SANITIZE:-none} in
	*address*) ;;
	*) return 0 ;;
	esac
	agent=$(dirname "$heaptrace")/../recorders/jvm/libheaptrace-jvmti.so
	lib=$(ldd "$agent" 2>/dev/null | awk '/libasan/ { print $3 }')
	[ -n "$lib" ] || lib=$(${HT_CC:-cc} -print-file-name=libclang_rt.asan-x86_64.so)
	echo "$lib"
}

java=java
runtime=$(sanitizer_runtime)
if [ -n "$runtime" ]; then
	# the JVM catches SIGSEGV and friends on purpose, and keeps what it
	# allocates until exit
	cat >"$work/bin/java" <<EOF
#!/bin/sh
LD_PRELOAD=$runtime \
ASAN_OPTIONS=\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:allow_user_segv_handler=1 \
exec $(command -v java) "\$@"
EOF
	chmod +x "$work/bin/java"
	java=$work/bin/java
fi

# The pid of the child of process $1 (the JVM that heaptrace record runs).
child_of() {
	for d in /proc/[0-9]*; do
		ppid=$(awk '/^PPid:/ { print $2 }' "$d/status" 2>/dev/null)
		if [ "$ppid" = "$1" ]; then
			basename "$d"
			return 0
		fi
	done
	return 1
}

# Waits up to 60 s for "ready" in file $1.
wait_ready() {
	i=0
	while ! grep -q '^ready' "$1" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le 600 ] || return 1
		sleep 0.1
	done
}

# ---- the paused-point dump, next to the JVM's own class histogram --------

trace=$work/known.ht
mkfifo "$work/stdin" || exit 1
"$heaptrace" record -o "$trace" --dump-on exit -- "$java" -Xmx256m \
	-cp "$work/classes" KnownHeap $n $depth $leaves $garbage \
	<"$work/stdin" >"$work/known.out" 2>"$work/known.err" &
record=$!
exec 3>"$work/stdin"
if wait_ready "$work/known.out" && pid=$(child_of $record); then
	jcmd "$pid" GC.class_histogram >"$work/histogram.txt" 2>&1 ||
		fail "jcmd GC.class_histogram: $(cat "$work/histogram.txt")"
	jcmd "$pid" JVMTI.data_dump >"$work/data_dump.txt" 2>&1 ||
		fail "jcmd JVMTI.data_dump: $(cat "$work/data_dump.txt")"
else
	fail "KnownHeap did not get ready under heaptrace record"
fi
echo go >&3
exec 3>&-
wait $record
rc=$?
[ $rc -eq 0 ] || fail "heaptrace record exited $rc: $(cat "$work/known.err")"
grep -q '^done' "$work/known.out" || fail "KnownHeap did not finish"

"$heaptrace" check "$trace" >"$work/check.txt" 2>&1 ||
	fail "heaptrace check: $(cat "$work/check.txt")"
dumps=$("$heaptrace" stats --format json "$trace" |
	python3 -c 'import json, sys; print(len(json.load(sys.stdin)["dumps"]))')
# the requested dump, then the one at exit
[ "$dumps" = 2 ] || fail "$dumps dumps, not the requested one and the last"
python3 "$src/check-knownheap.py" "$heaptrace" "$trace" 0 \
	"$work/histogram.txt" $n $depth $leaves || fail "the paused-point dump"

# ---- each mode gives a clean trace; the exit status passes through -------

# record_mode MODE EXPECTED_DUMPS_AT_LEAST: KnownHeap under --dump-on MODE
record_mode() {
	t=$work/mode-$1.ht
	echo go | "$heaptrace" record -q -o "$t" --dump-on "$1" -- "$java" \
		-cp "$work/classes" KnownHeap 1000 4 4 1000 \
		>"$work/mode.out" 2>"$work/mode.err" ||
		fail "--dump-on $1: exit $?: $(cat "$work/mode.err")"
	"$heaptrace" check "$t" >"$work/check.txt" 2>&1 ||
		fail "--dump-on $1: heaptrace check: $(cat "$work/check.txt")"
	got=$("$heaptrace" stats --format json "$t" | python3 -c '
import json, sys
s = json.load(sys.stdin)
print(len(s["dumps"]), min(
    [c["count"] for d in s["dumps"] for c in d["classes"]
     if c["name"] == "KnownHeap$Node"] or [0]))')
	set -- "$1" "$2" $got
	[ "$3" -ge "$2" ] || fail "--dump-on $1: $3 dumps, expected $2 or more"
	[ "$4" = 1000 ] || fail "--dump-on $1: a dump has $4 list nodes, not 1000"
}
# major: KnownHeap's System.gc() is one, and the exit
record_mode major 2
record_mode every-gc 2
record_mode signal 1

"$heaptrace" record -q -o "$work/exit3.ht" -- "$java" -cp "$work/classes" \
	NoSuchClass >/dev/null 2>&1
rc=$?
[ $rc -eq 1 ] || fail "the JVM's exit status 1 came back as $rc"

# an agent that cannot be loaded: the JVM refuses to start
mkdir -p "$work/empty"
: >"$work/empty/libheaptrace-jvmti.so"
HEAPTRACE_RECORDER_DIR=$work/empty "$heaptrace" record -o "$work/none.ht" \
	-- "$java" -version >"$work/none.out" 2>&1
rc=$?
[ $rc -ne 0 ] || fail "a broken agent was not reported"
grep -q "java recorder" "$work/none.out" ||
	fail "no clear message for a broken agent: $(cat "$work/none.out")"

[ $status -eq 0 ] && echo "ok: KnownHeap recorded and checked, $n nodes"
exit $status
