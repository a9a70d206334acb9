#!/bin/sh
# values-test.sh - the values the JVM recorder records (record --values)
# against a program's known values and an HPROF dump of the same moment.
#
# Runs KnownValues (see KnownValues.java) under `heaptrace record
# --values` and, once it has built its object and printed what it holds,
# takes a dump with the JVM recorder (jcmd JVMTI.data_dump) and one with
# the JVM itself (jcmd GC.heap_dump) while it waits. The trace must check
# clean; check-values.py compares what `heaptrace object` shows of each
# dump (primitive fields instance and static, String texts of both
# coders, primitive arrays whole and cut to a prefix and a hash) with the
# program's own account and with each other, and the values of the whole
# heap between the two dumps. Also: a recording without --values carries
# none, and --values through --pid (an attached recording) carries them.
#
# usage: values-test.sh HEAPTRACE SOURCE_DIR WORK_DIR
# Exits 77 (skipped) without java, javac, jcmd or python3. Under
# AddressSanitizer the JVM runs through a wrapper (java-wrapper.sh).
set -u

if [ $# -ne 3 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR WORK_DIR" >&2
	exit 2
fi
heaptrace=$1 src=$2 work=$3
status=0

. "$(dirname "$0")/../../lib.sh"
need_tools java javac jcmd python3

. "$(dirname "$0")/java-wrapper.sh"
java_setup "$heaptrace" "$src" KnownValues.java

# record NAME [RECORD_OPTIONS...]: KnownValues recorded into NAME.ht, with
# a recorder's dump (dump 0) and, for the first, jcmd's NAME.hprof taken
# while it waits
record() {
	name=$1
	shift
	rm -f "$work/stdin"
	mkfifo "$work/stdin" || exit 1
	"$heaptrace" record -q -o "$work/$name.ht" --dump-on exit "$@" -- \
		"$java" -Xmx256m -cp "$work/classes" KnownValues \
		<"$work/stdin" >"$work/$name.out" 2>"$work/$name.err" &
	rec=$!
	exec 3>"$work/stdin"
	if wait_ready "$work/$name.out" 1 $rec && pid=$(child_of $rec); then
		jcmd "$pid" JVMTI.data_dump >"$work/data_dump.txt" 2>&1 ||
			fail "jcmd JVMTI.data_dump: $(cat "$work/data_dump.txt")"
		[ "$name" != values ] ||
			jcmd "$pid" GC.heap_dump "$work/$name.hprof" \
				>"$work/heap_dump.txt" 2>&1 ||
			fail "jcmd GC.heap_dump: $(cat "$work/heap_dump.txt")"
	else
		fail "KnownValues ($name) did not get ready: $(cat "$work/$name.err")"
	fi
	echo go >&3
	exec 3>&-
	wait $rec || fail "heaptrace record ($name) exited $?: $(cat "$work/$name.err")"
	grep -q '^done' "$work/$name.out" || fail "KnownValues ($name) did not finish"
}

record values --values
"$heaptrace" check "$work/values.ht" >"$work/check.txt" 2>&1 ||
	fail "heaptrace check of the recording: $(cat "$work/check.txt")"
python3 "$src/check-values.py" "$heaptrace" "$work/values.ht" \
	"$work/values.hprof" "$work/values.out" ||
	fail "values of the recorder's and jcmd's dumps"

# without --values: no value, no primitive field, no array's contents
record plain
"$heaptrace" cat "$work/plain.ht" >"$work/plain.yaml" ||
	fail "heaptrace cat of the recording without values"
if grep -q 'values: \[\|array: {\|, type: ' "$work/plain.yaml"; then
	fail "a recording without --values carries values: $(grep -m1 \
		'values: \[\|array: {\|, type: ' "$work/plain.yaml")"
fi

# --values through --pid: the agent attached to a KnownValues that runs
# already, its dump (at detach) and jcmd's taken while it waits
rm -f "$work/attached.in"
mkfifo "$work/attached.in" || exit 1
"$java" -Xmx256m -cp "$work/classes" KnownValues <"$work/attached.in" \
	>"$work/attached.out" 2>"$work/attached.err" &
jvm=$!
exec 3>"$work/attached.in"
if wait_ready "$work/attached.out" 1 $jvm; then
	"$heaptrace" record -q --pid $jvm --duration 1 --values \
		-o "$work/attached.ht" 2>"$work/attach.err" ||
		fail "record --pid --values: $(cat "$work/attach.err")"
	jcmd $jvm GC.heap_dump "$work/attached.hprof" \
		>"$work/heap_dump.txt" 2>&1 ||
		fail "jcmd GC.heap_dump: $(cat "$work/heap_dump.txt")"
else
	fail "KnownValues (attached) did not get ready: $(cat "$work/attached.err")"
fi
echo go >&3
exec 3>&-
wait $jvm || fail "KnownValues (attached) exited $?"
python3 "$src/check-values.py" "$heaptrace" "$work/attached.ht" \
	"$work/attached.hprof" "$work/attached.out" ||
	fail "values of the attached recorder's and jcmd's dumps"

# under UBSan the agent's undefined behaviour is only printed, by the JVM
if grep -l 'runtime error' "$work"/*.err >/dev/null 2>&1; then
	fail "undefined behaviour in the agent: $(grep -h 'runtime error' \
		"$work"/*.err | sort -u)"
fi

[ $status -eq 0 ] && echo "ok: values of KnownValues, recorded and dumped"
exit $status
