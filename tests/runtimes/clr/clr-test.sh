#!/bin/sh
# clr-test.sh HEAPTRACE MODULE SRCDIR BUILDDIR [SANITIZER_RUNTIME] -
# `heaptrace record` on a real
# .NET runtime: builds Shapes.cs with the SDK (offline: no NuGet package,
# HOME and the CLI's home inside BUILDDIR), records it in each dump mode,
# and checks that the traces are clean, that classes carry the names a .NET
# developer writes (generic, nested and array forms), that no reference
# dangles (string literals live outside the GC heap), that a
# ConditionalWeakTable value is held by its key, that the program's exit
# status passes through, and that a child process is not profiled.
# Exits 77 (skipped) where dotnet, the module or jq is missing.
#
# In a sanitizer build the module is instrumented and dotnet is not:
# SANITIZER_RUNTIME (the ASan shared library) is then preloaded into every
# dotnet the test records, through a `dotnet` wrapper first on PATH (the
# SDK builds Shapes.cs unwrapped), and the module runs checked.
set -u
heaptrace=$1 module=$2 src=$3 build=$4 sanitizer=${5:-}
command -v dotnet >/dev/null || { echo "SKIP: dotnet is not installed"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
[ -f "$module" ] || { echo "SKIP: the CLR recorder was not built"; exit 77; }

N=500
unset HEAPTRACE_RECORDER_DIR
dotnet_dir=$build
. "$src/dotnet-env.sh"
program_build Shapes "$src" "$build" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "$sanitizer" ]; then
	sanitized_dotnet "$sanitizer" "$work"
	echo "note: dotnet runs with $sanitizer preloaded"
fi
app=$build/out/Shapes.dll
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

ok() {
	echo "ok: $*"
}

# record TRACE STATUS RECORD_OPTIONS... -- PROGRAM ARGS...: records, checks
# the exit status and that the trace is clean.
record() {
	trace=$1 expect=$2
	shift 2
	"$heaptrace" record -q -o "$trace" "$@" >"$work/out" 2>"$work/err"
	st=$?
	[ "$st" = "$expect" ] ||
		{ fail "record $*: exit status $st, not $expect"; cat "$work/err"; }
	"$heaptrace" check "$trace" >"$work/check" ||
		{ fail "record $*: the trace is not clean"; tail -5 "$work/check"; }
}

# count TRACE CLASS: instances of CLASS in the last dump.
count() {
	"$heaptrace" stats --format json "$1" |
		jq --arg c "$2" '.dumps[-1] | [.classes[] | select(.name == $c) | .count] | add // 0'
}

# --- dump at major collections (GC.Collect), and at exit
t=$work/major.ht
record "$t" 7 -- dotnet "$app" $N 7
dumps=$("$heaptrace" stats --format json "$t" | jq '.dump_count')
[ "$dumps" -ge 2 ] && ok "major: $dumps dumps (GC.Collect and exit)" ||
	fail "major: $dumps dumps, not at least 2"
for c in "Outer+Inner:$N" \
	"System.Collections.Generic.List<Outer+Inner>:1" \
	"System.Collections.Generic.List<System.String>:1" \
	"System.Collections.Generic.Dictionary<System.String, System.Int32>:1" \
	"System.Int32[,]:1" "System.String[][]:1" "CwtValue:1" \
	"System.Runtime.CompilerServices.ConditionalWeakTable<CwtKey, CwtValue>:1"; do
	name=${c%:*} want=${c##*:}
	got=$(count "$t" "$name")
	[ "$got" -ge "$want" ] && ok "class $name: $got" ||
		fail "class $name: $got instances, not at least $want"
done
[ "$(count "$t" "System.Int32[]")" -ge 1 ] && ok "class System.Int32[]" ||
	fail "no System.Int32[]"
# text folds the arguments' namespaces (heaptrace(1), Long class names)
"$heaptrace" top --classes -n 100000 "$t" | grep -q 'System.Collections.Generic.Dictionary<String, Int32>+Entry\[\]' &&
	ok "top names Dictionary<String, Int32>+Entry[]" || fail "top lacks Dictionary<String, Int32>+Entry[]"
# the field each reference was read from: a boxed struct's at their offset
# past the MethodTable pointer, a type parameter's as its argument, an
# embedded struct's by the chain of fields to it, none for a dependent
# handle's (../check-fields.py)
python3 "$src/../check-fields.py" --label "major, fields" \
	--fields Pair=A,B --fields "Box<Item>=Other,Value" \
	--fields "Box<System.Int64>=Other" --fields Holder=Inner.A,Inner.B,Tail \
	--fields CwtKey=- --fields CwtValue=Note \
	--fields "System.Collections.Generic.List<Outer+Inner>=_items" \
	"$heaptrace" "$t" || fail "major: the references' fields"
dangling=$("$heaptrace" stats --format json "$t" | jq '[.dumps[].dangling_references] | add')
[ "$dangling" = 0 ] && ok "no dangling reference (literals included)" ||
	fail "$dangling dangling references"
literal=$("$heaptrace" cat "$t" | grep -c 'class: ' || true)
[ "$literal" -gt 0 ] || fail "no class events"
# the value is reachable only through its key's dependent handle
value=$("$heaptrace" top -n 100000 --format json "$t" |
	jq -r '[.objects[] | select(.class == "CwtValue")][0].id')
if [ -n "$value" ] && [ "$value" != null ]; then
	"$heaptrace" object --format json "$t" "$value" >"$work/value.json"
	[ "$(jq -r '.unreachable' "$work/value.json")" = false ] &&
	[ "$(jq -r '.referrers[0].class' "$work/value.json")" = CwtKey ] &&
		ok "CwtValue held by its CwtKey" ||
		{ fail "CwtValue not held by its key"; cat "$work/value.json"; }
else
	fail "no CwtValue object in the last dump"
fi
"$heaptrace" cat "$t" | head -8 | grep -q '^runtime: clr' ||
	fail "the header does not say runtime: clr"
"$heaptrace" cat "$t" | grep -q '^reports_survivors: true' ||
	fail "the header does not say reports_survivors: true"

# --- values: each string's text (Shapes' Texts), Latin-1 and not, whole
# and as a prefix with its hash, on the GC heap and a literal outside it,
# in the dump at GC.Collect() and the one at exit (../check-strings.py)
latin=$(printf 'caf\303\251 au lait %s' $N)
wide=$(printf 'Gr\303\274\303\237e aus \346\235\261\344\272\254 %s \342\234\223' $N)
long=$(printf '0123456789%.0s' $(seq 30))$N
wide_long=$(printf '\316\273%.0s' $(seq 200))$N
# texts LABEL TRACE [--dump N]
texts() {
	label=$1 trace=$2
	shift 2
	python3 "$src/../check-strings.py" --label "$label" "$@" \
		"$heaptrace" "$trace" Texts "Latin=$latin" "Wide=$wide" \
		"Long=$long" "WideLong=$wide_long" \
		"Literal=a literal, never collected"
}
t=$work/values.ht
record "$t" 0 --values -- dotnet "$app" $N 0
texts "values, at GC.Collect()" "$t" --dump 0 ||
	fail "values: the strings' text in the dump at GC.Collect()"
texts "values, at exit" "$t" || fail "values: the strings' text at exit"
# server GC: the walk's objects come from the GC's threads at once
export DOTNET_gcServer=1 DOTNET_GCHeapCount=2
record "$work/values-server.ht" 0 --values -- dotnet "$app" $N 0
unset DOTNET_gcServer DOTNET_GCHeapCount
texts "values, server GC" "$work/values-server.ht" ||
	fail "values: the strings' text under server GC"
"$heaptrace" cat "$t" | head -20 | grep -q '^  values: fields' &&
	ok "values: the header says values: fields" ||
	fail "values: the header does not say values: fields"
# without --values (major.ht): no string keeps a text, no event an array
python3 "$src/../check-strings.py" --label "no values" --none \
	"$heaptrace" "$work/major.ht" Texts || fail "no values: a text is kept"
"$heaptrace" cat "$work/major.ht" | grep -q ' array: {\|^  values: ' &&
	fail "no values: the trace holds values" || ok "no values: none in the trace"
echo "note: Shapes $N: $(wc -c <"$work/major.ht") bytes without values," \
	"$(wc -c <"$t") with"

# --- every GC, and the exit dump
t=$work/every.ht
record "$t" 0 --dump-on every-gc -- dotnet "$app" $N 0
"$heaptrace" stats --format json "$t" >"$work/s.json"
[ "$(jq '.dump_count' "$work/s.json")" = "$(jq '.gc_count' "$work/s.json")" ] &&
	ok "every-gc: a dump per GC" || fail "every-gc: dumps and GCs differ"
# every GC carries its time: pauses present and plausible
python3 "$src/../check-pauses.py" --label "every-gc" "$work/s.json" ||
	fail "every-gc: the GC pauses"

# --- exit only: one dump, forced at exit
t=$work/exit.ht
record "$t" 0 --dump-on exit -- dotnet "$app" $N 0
[ "$("$heaptrace" stats --format json "$t" | jq '.dump_count')" = 1 ] &&
	ok "exit: one dump" || fail "exit: not one dump"
[ "$(count "$t" "Outer+Inner")" = $N ] && ok "exit: $N Outer+Inner at exit" ||
	fail "exit: $(count "$t" "Outer+Inner") Outer+Inner, not $N"
# after a full collection every object is reachable: the non-GC heap's
# objects are roots
unreachable=$("$heaptrace" stats --format json "$t" | jq '.dumps[-1].unreachable_objects')
[ "$unreachable" = 0 ] && ok "exit: no unreachable object after a full GC" ||
	fail "exit: $unreachable unreachable objects after a full GC"

# --- signal: a dump per SIGUSR1, and one at exit
t=$work/signal.ht
"$heaptrace" record -q -o "$t" --dump-on signal -- dotnet "$app" $N 0 wait 2000 \
	>"$work/out" 2>"$work/err" &
pid=$!
# the program says when it waits: SIGUSR1 before the runtime has loaded
# the recorder would kill it
for i in $(seq 100); do
	grep -q waiting "$work/out" 2>/dev/null && break
	sleep 0.1
done
kill -USR1 $pid
wait $pid || fail "signal: record failed: $(cat "$work/err")"
"$heaptrace" check "$t" >/dev/null || fail "signal: the trace is not clean"
[ "$("$heaptrace" stats --format json "$t" | jq '.dump_count')" = 2 ] &&
	ok "signal: a dump on SIGUSR1 and one at exit" ||
	fail "signal: $("$heaptrace" stats --format json "$t" | jq '.dump_count') dumps, not 2"

# --- allocations: an object followed from its birth
t=$work/alloc.ht
record "$t" 0 --allocations -- dotnet "$app" $N 0
allocated=$("$heaptrace" cat "$t" | grep -c 'object_allocated' || true)
[ "$allocated" -ge $N ] && ok "allocations: $allocated object_allocated" ||
	fail "allocations: $allocated object_allocated"
inner=$("$heaptrace" top -n 100000 --format json "$t" |
	jq -r '[.objects[] | select(.class == "Outer+Inner")][0].id')
"$heaptrace" history --format json "$t" "$inner" |
	jq -e '[.timeline[].event] | index("allocated")' >/dev/null &&
	ok "allocations: history from allocation" ||
	fail "allocations: no allocation in the history of $inner"

# --- a published app (apphost), and a child that is not profiled
# (not in a sanitizer build: the app host would need the preload that
# the dotnet wrapper gives)
if [ -x "$build/out/Shapes" ] && [ -z "$sanitizer" ]; then
	t=$work/apphost.ht
	record "$t" 3 -- "$build/out/Shapes" $N 3 child
	grep -q "child sees no profiler" "$work/out" &&
		ok "apphost: the child process is not profiled" ||
		{ fail "the child sees the profiler"; cat "$work/out"; }
fi

# --- what record says when the recorder cannot be found
HEAPTRACE_RECORDER_DIR=$work "$heaptrace" record -o "$work/x.ht" -- dotnet "$app" 1 0 \
	>/dev/null 2>"$work/err"
st=$?
[ $st = 3 ] && grep -q "cannot record dotnet: HEAPTRACE_RECORDER_DIR is $work, which holds no readable libheaptrace-clr.so" "$work/err" &&
	ok "a missing recorder is reported" ||
	{ fail "missing recorder: status $st"; cat "$work/err"; }

[ $failures = 0 ] || { echo "$failures failures"; exit 1; }
echo "all passed"
