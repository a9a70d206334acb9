#!/bin/sh
# mono-test.sh HEAPTRACE KNOWNHEAP_EXE MODULE [SANITIZER_RUNTIME [GCCHURN_EXE]]
# - `heaptrace record` on a real Mono: records KnownHeap.exe (a heap the
# test knows exactly) in each dump mode and checks what the analyses say
# about it; follows the objects of GcChurn.exe (a GC-heavy workload)
# through their lifetimes; cross-checks the per-class counts with Mono's
# own log profiler;
# checks the exit status, and the failures `record` and the module must
# report, word for word (DIAGNOSTICS in heaptrace-record(1)).
# Exits 77 (skipped) where Mono, the module or jq is missing.
#
# In a sanitizer build the module is instrumented, and mono, which is not,
# does not start the sanitizer's runtime: SANITIZER_RUNTIME (the ASan
# shared library) is then preloaded into every mono the test starts,
# through a `mono` wrapper first on PATH, and the module runs checked. The
# test skips itself when that runtime cannot be found.
set -u
heaptrace=$1 exe=$2 module=$3 sanitizer=${4:-} churn=${5:-}
command -v mono >/dev/null || { echo "SKIP: mono is not installed"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }
[ -f "$exe" ] || { echo "SKIP: $exe was not built (no mcs)"; exit 77; }
[ -f "$module" ] || { echo "SKIP: the Mono recorder was not built"; exit 77; }

# The program's heap: N list nodes, a tree of 2^DEPTH - 1 nodes, LEAVES
# shared leaves, GARBAGE dropped objects (enough for minor collections).
N=1000 DEPTH=10 LEAVES=100 GARBAGE=300000
TREE=$(( (1 << DEPTH) - 1 ))
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# as record names it in messages, with no symbolic link on the way
work=$(cd "$work" && pwd -P)
unset HEAPTRACE_RECORDER_DIR

if [ -n "$sanitizer" ]; then
	. "$(dirname "$0")/mono-env.sh"
	sanitized_mono "$sanitizer" "$work"
fi
failures=0

fail() {
	echo "FAIL: $*"
	failures=$((failures + 1))
}

ok() {
	echo "ok: $*"
}

# record TRACE EXPECTED_STATUS RECORD_OPTIONS... : records KnownHeap.
record() {
	trace=$1 expect=$2
	shift 2
	"$heaptrace" record -q -o "$trace" "$@" -- mono "$exe" \
		$N $DEPTH $LEAVES $GARBAGE "$expect" >"$work/out" 2>"$work/err"
	st=$?
	[ "$st" = "$expect" ] ||
		{ fail "record $*: exit status $st, not $expect"; cat "$work/err"; }
	sound "$trace" || fail "record $*: the trace is not clean"
}

# sound TRACE: check finds nothing wrong, the relocation proof included:
# the walk reports each object with the size its allocation gave (not
# that of sgen's slot), and no death is claimed that a dump contradicts.
sound() {
	"$heaptrace" check --format json --max 1000000 "$1" >"$work/check.json"
	jq -e '.clean' "$work/check.json" >/dev/null ||
		{ "$heaptrace" check "$1" | tail -5; return 1; }
}

# count TRACE DUMP CLASS: instances of CLASS in dump DUMP (-1: the last).
count() {
	"$heaptrace" stats --format json "$1" |
		jq --argjson d "$2" --arg c "$3" \
		'.dumps[$d] | [.classes[] | select(.name == $c) | .count] | add // 0'
}

# exact TRACE DUMP WHAT: the dump holds exactly the program's objects. Of
# the garbage, sgen may keep one or two: it scans stacks and registers
# conservatively, so a stale word that still points at a dropped object
# pins it through GC.Collect() (seen once, the machine loaded); the walk
# then rightly reports it. More than that is the recorder's fault.
exact() {
	for pair in Node:$N TreeNode:$TREE Leaf:$LEAVES; do
		cls=KnownHeap.${pair%%:*} want=${pair#*:}
		got=$(count "$1" "$2" "$cls")
		[ "$got" = "$want" ] ||
			fail "$3: dump $2 has $got $cls, not $want"
	done
	got=$(count "$1" "$2" KnownHeap.Garbage)
	[ "$got" -le 2 ] ||
		fail "$3: dump $2 has $got KnownHeap.Garbage, not at most 2"
}

# ---- --dump-on major: a dump at GC.Collect() and one at exit ----------------
t=$work/major.ht
record "$t" 7 --dump-on major
dumps=$("$heaptrace" stats --format json "$t" | jq '.dumps | length')
[ "$dumps" -ge 2 ] || fail "major: $dumps dumps, not at least 2"
exact "$t" -1 "major, exit dump"
exact "$t" -2 "major, dump at GC.Collect()"
ok "major: exact counts in the last two of $dumps dumps, exit status 7"

# The list: its head retains N nodes, its tail is reached from the static
# field of KnownHeap through the whole list.
"$heaptrace" top -n 100000 --format json "$t" >"$work/top.json"
head=$(jq -r '[.objects[] | select(.class == "KnownHeap.Node")][0].id' "$work/top.json")
tail=$(jq -r '[.objects[] | select(.class == "KnownHeap.Node" and .retained == .size)][0].id' "$work/top.json")
node_size=$(jq -r '[.objects[] | select(.class == "KnownHeap.Node")][0].size' "$work/top.json")
retained=$(jq -r --arg h "$head" '.objects[] | select(.id == $h) | .retained' "$work/top.json")
[ "$retained" = $((N * node_size)) ] ||
	fail "retained size of the head $head is $retained, not $N x $node_size"
ok "retained size of the list head: $retained = $N x $node_size"

class_id=$("$heaptrace" cat "$t" | sed -n 's/.*class: {id: \(0x[0-9a-f]*\), name: KnownHeap}.*/\1/p' | head -1)
"$heaptrace" paths --to "$tail" -n 1 --format json "$t" >"$work/paths.json" ||
	fail "paths --to $tail"
kind=$(jq -r '.paths[0].root.kind' "$work/paths.json")
root_id=$(jq -r '.paths[0].root.root_id' "$work/paths.json")
first=$(jq -r '.paths[0].objects[0].id' "$work/paths.json")
length=$(jq -r '.paths[0].objects | length' "$work/paths.json")
[ "$kind" = other ] && [ "$root_id" = "$class_id" ] ||
	fail "the tail's path starts at a $kind root $root_id, not at the statics of KnownHeap ($class_id)"
[ "$first" = "$head" ] && [ "$length" = $N ] ||
	fail "the tail's path has $length objects from $first, not $N from $head"
ok "paths --to the tail: $length nodes from the static root of KnownHeap"

# Each reference carries the field it was read from: a node's next (which
# it inherits from KnownHeap.Link), a tree node's left, right and leaf
# (alone in a bottom node: no shift), and the list's head is the static
# field KnownHeap.head (check-fields.py).
if command -v python3 >/dev/null; then
	python3 "$(dirname "$0")/../check-fields.py" --label "major, fields" \
		--list KnownHeap.Node --link KnownHeap.Link \
		--tree KnownHeap.TreeNode \
		--leaf KnownHeap.Leaf --static-root KnownHeap.head \
		"$heaptrace" "$t" $N $DEPTH || fail "major: the references' fields"
	# a boxed struct's references at their offsets, an embedded one's
	# without a field, a type parameter's as its argument
	python3 "$(dirname "$0")/../check-fields.py" --label "major, fields" \
		--fields KnownHeap.Pair=a,b --fields KnownHeap.Holder=-,-,tail \
		--fields "KnownHeap.Box<KnownHeap.Leaf>=value" \
		"$heaptrace" "$t" || fail "major: the fields of struct and generic shapes"
else
	echo "note: no python3: the references' fields are not checked"
fi

# ---- --dump-on exit, every-gc ----------------------------------------------
t=$work/exit.ht
record "$t" 0 --dump-on exit
exact "$t" -1 "exit"
ok "exit: exact counts"
# the one dump: every class's fields laid out in its pause
if command -v python3 >/dev/null; then
	python3 "$(dirname "$0")/../check-fields.py" --label "exit, fields" \
		--list KnownHeap.Node --link KnownHeap.Link \
		--tree KnownHeap.TreeNode \
		--leaf KnownHeap.Leaf --static-root KnownHeap.head \
		"$heaptrace" "$t" $N $DEPTH || fail "exit: the references' fields"
fi

# ---- --values: each string's text (KnownHeap.Texts) -------------------------
# Latin-1 and not, whole and as a prefix with its hash, made at run time
# and a literal, in the dump at GC.Collect() and the one at exit
# (../check-strings.py); a recording without --values keeps none.
if command -v python3 >/dev/null; then
	latin=$(printf 'caf\303\251 au lait %s' $N)
	wide=$(printf 'Gr\303\274\303\237e aus \346\235\261\344\272\254 %s \342\234\223' $N)
	long=$(printf '0123456789%.0s' $(seq 30))$N
	wide_long=$(printf '\316\273%.0s' $(seq 200))$N
	t=$work/values.ht
	record "$t" 0 --values --dump-on major
	dumps=$("$heaptrace" stats --format json "$t" | jq '.dumps | length')
	for d in $((dumps - 2)) $((dumps - 1)); do
		python3 "$(dirname "$0")/../check-strings.py" \
			--label "values, dump $d" --dump $d "$heaptrace" "$t" \
			KnownHeap.Texts "Latin=$latin" "Wide=$wide" \
			"Long=$long" "WideLong=$wide_long" \
			"Literal=a literal, never collected" ||
			fail "values: the strings' text in dump $d"
	done
	"$heaptrace" cat "$t" | head -20 | grep -q '^  values: strings' ||
		fail "values: the header does not say values: strings"
	python3 "$(dirname "$0")/../check-strings.py" --label "no values" \
		--none "$heaptrace" "$work/exit.ht" KnownHeap.Texts ||
		fail "no values: a text is kept"
	"$heaptrace" cat "$work/exit.ht" | grep -q ' array: {\|^  values: ' &&
		fail "no values: the trace holds values"
	ok "values: the strings' text"
	echo "note: KnownHeap $N: $(wc -c <"$work/major.ht") bytes without" \
		"values, $(wc -c <"$t") with"
fi

# ---- two runs of one program: diff by path finds nothing new --------------
# KnownHeap again, and mcs compiling KnownHeap.cs twice (a real program of
# some 70000 objects), once as mono mcs.exe and once through the mcs
# script that starts it: objects are matched by their path of field names,
# so two runs show no growth; the tail's path reads as the static field
# KnownHeap.head, then Link.next steps (check-same-run.py).
if command -v python3 >/dev/null; then
	record "$work/exit2.ht" 0 --dump-on exit
	python3 "$(dirname "$0")/../check-same-run.py" --label "two runs" \
		--list KnownHeap.Node --n $N --root "static KnownHeap.head" \
		--step KnownHeap.Link.next "$heaptrace" "$t" "$work/exit2.ht" ||
		fail "two runs of KnownHeap differ"
	mcs_exe=$(sed -n 's/^exec .*mono .* \(\/[^ ]*mcs\.exe\) .*/\1/p' \
		"$(command -v mcs 2>/dev/null)" 2>/dev/null)
	if [ -f "$mcs_exe" ]; then
		"$heaptrace" record -q -o "$work/mcs1.ht" --dump-on exit -- \
			mono "$mcs_exe" -nologo -out:"$work/k.exe" \
			"$(dirname "$0")/KnownHeap.cs" ||
			fail "record mono mcs.exe: exit status $?"
		# the second run goes through Debian's wrapper script, as a
		# user types it; a sanitizer build needs the test's own mono
		# first on PATH, which the script's /usr/bin/mono passes by
		mcs_cmd=mcs
		[ -n "$sanitizer" ] && mcs_cmd="mono $mcs_exe"
		"$heaptrace" record -q -o "$work/mcs2.ht" --dump-on exit -- \
			$mcs_cmd -nologo -out:"$work/k.exe" \
			"$(dirname "$0")/KnownHeap.cs" ||
			fail "record $mcs_cmd: exit status $?"
		python3 "$(dirname "$0")/../check-same-run.py" \
			--label "two runs of mcs" "$heaptrace" \
			"$work/mcs1.ht" "$work/mcs2.ht" || fail "two runs of mcs differ"
	else
		echo "note: no mcs.exe: two runs of mcs are not compared"
	fi
fi

t=$work/every.ht
record "$t" 0 --dump-on every-gc
dumps=$("$heaptrace" stats --format json "$t" | jq '.dumps | length')
gcs=$("$heaptrace" stats --format json "$t" | jq '.gcs | length')
# A minor collection asks for a dump that the finalizer thread forces
# later; the program's GC.Collect() may come first and serve it.
[ "$dumps" -ge 2 ] || fail "every-gc: only $dumps dumps for $gcs GCs"
exact "$t" -1 "every-gc"
ok "every-gc: $dumps dumps for $gcs GCs, exact counts at the end"
# Every GC and dump carries its time: pauses present and plausible
# (check-pauses.py), the GARBAGE allocations make minor GCs
if command -v python3 >/dev/null; then
	"$heaptrace" stats --format json "$t" >"$work/every.json"
	python3 "$(dirname "$0")/../check-pauses.py" --label "every-gc" \
		--min-gcs 2 "$work/every.json" || fail "every-gc: GC pauses"
else
	echo "note: no python3: the GC pauses are not checked"
fi

# ---- --dump-on signal: SIGUSR1 to heaptrace, passed on, makes a dump ------------
t=$work/signal.ht
# emptied first: the background job truncates it only once it runs, and
# the "ready" the last program printed there would send the signal early
: >"$work/out"
"$heaptrace" record -q -o "$t" --dump-on signal -- mono "$exe" \
	$N $DEPTH $LEAVES $GARBAGE 0 3000 >"$work/out" 2>"$work/err" &
pid=$!
i=0
while ! grep -q ready "$work/out" 2>/dev/null && [ $i -lt 200 ]; do
	sleep 0.1
	i=$((i + 1))
done
kill -USR1 $pid
wait $pid
st=$?
[ $st = 0 ] || { fail "record --dump-on signal: exit status $st"; cat "$work/err"; }
dumps=$("$heaptrace" stats --format json "$t" | jq '.dumps | length')
[ "$dumps" = 2 ] || fail "signal: $dumps dumps, not 2 (the signal's, the exit's)"
exact "$t" 0 "signal, the signal's dump"
ok "signal: a dump on SIGUSR1 and one at exit, exact counts"

# ---- allocations: an object promoted by a minor GC shows its move -----------
t=$work/alloc.ht
record "$t" 0 --allocations
if "$heaptrace" history --help >/dev/null 2>&1; then
	"$heaptrace" top -n 100000 --format json "$t" >"$work/top.json"
	head=$(jq -r '[.objects[] | select(.class == "KnownHeap.Node")][0].id' "$work/top.json")
	"$heaptrace" history --format json "$t" "$head" >"$work/history.json" ||
		fail "history $head"
	moved=$(jq '[.timeline[] | select(.event == "moved")] | length' "$work/history.json")
	allocated=$(jq '[.timeline[] | select(.event == "allocated")] | length' "$work/history.json")
	[ "$allocated" -ge 1 ] && [ "$moved" -ge 1 ] ||
		{ fail "history of the list head: $allocated allocations, $moved moves"; cat "$work/history.json"; }
	# the move that promoted it is a minor GC's: generation 0 only
	gc=$(jq '[.timeline[] | select(.event == "moved")][0].gc' "$work/history.json")
	gens=$("$heaptrace" stats --format json "$t" |
		jq -c --argjson g "$gc" '[.gcs[] | select(.index == $g)][0].generations')
	[ "$gens" = "[0]" ] ||
		fail "the list head moved in GC $gc, which collected $gens, not [0]"
	ok "history of the list head: allocated, then moved by GC $gc, a minor one"
else
	echo "SKIP: this heaptrace has no history command"
fi

# ---- lifetimes: GcChurn followed from allocation to death ------------------
# A long-lived table that keeps changing and much short-lived garbage, with
# every allocation and a dump after every GC: the nursery's bounds and its
# pinned survivors let each minor GC promote what it moves and prove the
# rest dead; a walked major GC proves the old generation's dead.
if [ -n "$churn" ] && [ -f "$churn" ]; then
	t=$work/churn.ht
	"$heaptrace" record -q -o "$t" --allocations --dump-on every-gc -- \
		mono "$churn" 8 30000 >"$work/out" 2>"$work/err" ||
		{ fail "record GcChurn: exit status $?"; cat "$work/err"; }
	sound "$t" || fail "GcChurn: the trace is not clean"
	"$heaptrace" stats --format json "$t" >"$work/churn.json"
	# fewer than 1% of the tracked objects lost (their fate unknown)
	jq -e '.tracking | .lost_objects * 100 < .objects' "$work/churn.json" \
		>/dev/null || fail "GcChurn: $(jq -c .tracking "$work/churn.json"): 1% or more lost"
	# every object's fate is counted once: alive, dead or lost; every
	# death is a GC's or a dump's
	jq -e '.tracking.objects == .tracking.alive_objects +
		.tracking.died_objects + .tracking.lost_objects and
		.tracking.died_objects == ([.gcs[].died_objects] | add) +
			([.dumps[].died_objects] | add)' "$work/churn.json" \
		>/dev/null || fail "GcChurn: the GCs' and dumps' deaths do not add up to $(jq -c .tracking "$work/churn.json")"
	# the dumps are walked major GCs, which prove the old generation's
	# dead themselves: no death is left for a dump to find by absence
	jq -e '([.gcs[] | select(.generations != [0]) | .died_objects] |
		add) > 0 and ([.dumps[].died_objects] | add) == 0' \
		"$work/churn.json" >/dev/null ||
		fail "GcChurn: deaths in major GCs $(jq -c '[.gcs[] | select(.generations != [0]) | .died_objects]' "$work/churn.json"), in dumps $(jq -c '[.dumps[].died_objects]' "$work/churn.json")"
	# minor GCs: what they move out of the nursery is promoted, the rest
	# of it dies but for the objects pinned there
	minors=$(jq '[.gcs[] | select(.generations == [0])]' "$work/churn.json")
	echo "$minors" | jq -e 'length > 0 and
		all(.[]; .moved_objects == .promoted_objects) and
		([.[].promoted_objects] | add) > 0 and
		([.[].died_objects] | add) > 0 and
		([.[].survived_objects] | add) > 0' >/dev/null ||
		fail "GcChurn: minor GCs: $(echo "$minors" | jq -c '[.[] | {gc, moved_objects, promoted_objects, died_objects, survived_objects}]')"
	# the objects of the last dump carry their allocation's size: each
	# sampled one is followed from its allocation to the dump, alive.
	# Three of each class, the first, middle and last; one under a
	# sanitizer, where each history of this trace takes half a minute
	# and runs the same code.
	samples='.[0, length / 2, -1]'
	[ -z "$sanitizer" ] || samples='.[length / 2]'
	"$heaptrace" top -n 0 --by self --format json "$t" >"$work/top.json"
	for cls in GcChurn.Record System.String 'System.Int32[]'; do
		jq -r --arg c "$cls" '[.objects[] | select(.class == $c)] | '"$samples"' |
			"\(.id) \(.size)"' "$work/top.json" |
		while read -r id size; do
			"$heaptrace" history --format json "$t" "$id" >"$work/h.json"
			jq -e --argjson s "$size" '(.objects | length) == 1 and
				.objects[0].fate == "alive" and
				.objects[0].size == $s and
				.timeline[0].event == "allocated"' "$work/h.json" \
				>/dev/null ||
				fail "GcChurn: $cls $id of $size bytes: $(jq -c '.objects' "$work/h.json")"
		done
	done
	ok "GcChurn: $(jq -r '.tracking | "\(.objects) objects tracked, \(.lost_objects) lost, \(.died_objects) died"' "$work/churn.json"), minor GCs promote what they move, allocations and dumps agree on sizes"
else
	echo "note: no GcChurn.exe: lifetimes are not checked"
fi

# ---- Mono's log profiler sees the same classes ------------------------------
# It may hang at shutdown: a run gets 30 s, and up to three runs.
mlpd=$work/log.mlpd
tries=0
while [ $tries -lt 3 ]; do
	tries=$((tries + 1))
	rm -f "$mlpd"
	timeout 30 mono --profile=log:heapshot,output="$mlpd" "$exe" \
		$N $DEPTH $LEAVES $GARBAGE >/dev/null 2>&1 && break
	echo "note: Mono's log profiler failed or hung (run $tries)"
done
if [ -s "$mlpd" ] && mprof-report --reports=heapshot "$mlpd" >"$work/report" 2>&1; then
	# the last heap shot's table: BYTES COUNT AVERAGE CLASS
	awk '/Heap shot [0-9]+ at/ { delete n } $4 ~ /^KnownHeap\./ { n[$4] = $2 }
	     END { for (c in n) print c, n[c] }' "$work/report" | sort >"$work/log-counts"
	"$heaptrace" stats --format json "$work/exit.ht" |
		jq -r '.dumps[-1].classes[] | select(.name | test("^KnownHeap\\.(Node|TreeNode|Leaf|Garbage)$")) | "\(.name) \(.count)"' |
		sort >"$work/our-counts"
	grep -E '^KnownHeap\.(Node|TreeNode|Leaf|Garbage) ' "$work/log-counts" >"$work/log-ours" || true
	if diff -u "$work/log-ours" "$work/our-counts"; then
		ok "the log profiler's last heap shot agrees: $(tr '\n' ' ' <"$work/our-counts")"
	else
		fail "per-class counts differ from Mono's log profiler (above)"
	fi
else
	echo "note: no heap shot from Mono's log profiler in $tries runs; cross-check not made"
fi

# ---- what record must refuse or report --------------------------------------
# Word for word, as DIAGNOSTICS in heaptrace-record(1) catalogs them.

# same FILE WHAT EXPECTED_LINE...: FILE holds exactly the lines given.
same() {
	file=$1 what=$2
	shift 2
	printf '%s\n' "$@" >"$work/want"
	diff -u "$work/want" "$file" >"$work/diff" ||
		{ fail "$what: standard error differs (- expected, + actual)"; cat "$work/diff"; }
}

# has FILE WHAT LINE: FILE has LINE among its lines.
has() {
	grep -qxF -- "$3" "$1" ||
		{ fail "$2: no line '$3' in:"; cat "$1"; }
}

moddir=$(dirname "$module")
"$heaptrace" record -q -o "$work/x.ht" -- ls >/dev/null 2>&1
[ $? = 2 ] || fail "record -- ls: not a usage error"
mkdir "$work/broken"
echo "not a shared object" >"$work/broken/libmono-profiler-heaptrace.so"
HEAPTRACE_RECORDER_DIR=$work/broken "$heaptrace" record -q -o "$work/x.ht" \
	-- mono "$exe" 10 2 2 10 >/dev/null 2>"$work/err"
st=$?
[ $st = 3 ] || fail "a recorder that cannot load: exit status $st, not 3"
same "$work/err" "a recorder that cannot load" \
	"heaptrace: the mono recorder did not record: no trace at $work/x.ht (the program exited with status 0)" \
	"heaptrace: Mono runs the program even when it cannot load the profiler module: see FILES in heaptrace(1)"
HEAPTRACE_RECORDER_DIR=$work/none "$heaptrace" record -q -o "$work/x.ht" \
	-- mono "$exe" 10 2 2 10 >/dev/null 2>"$work/err"
st=$?
[ $st = 3 ] || fail "no recorder in HEAPTRACE_RECORDER_DIR: exit status $st, not 3"
same "$work/err" "no recorder in HEAPTRACE_RECORDER_DIR" \
	"heaptrace: cannot record mono: HEAPTRACE_RECORDER_DIR is $work/none, which holds no readable libmono-profiler-heaptrace.so"

# A heaptrace outside a build tree, with no recorder installed where it
# looks: every place is named.
mkdir "$work/solo"
cp "$heaptrace" "$work/solo/heaptrace"
"$work/solo/heaptrace" record -q -o "$work/x.ht" -- mono "$exe" \
	>/dev/null 2>"$work/err"
st=$?
lib=libmono-profiler-heaptrace.so
if [ $st = 0 ]; then
	echo "note: a Mono recorder is installed where heaptrace looks: not-found check not made"
else
	[ $st = 3 ] || fail "no recorder found: exit status $st, not 3"
	case $(cat "$work/err") in
	"heaptrace: cannot record mono: cannot find $lib: looked in $work/solo/../recorders/mono/$lib, $work/solo/../"*"/$lib, /"*"/$lib (set HEAPTRACE_RECORDER_DIR to its directory)") ;;
	*) fail "no recorder found: the message is:"; cat "$work/err" ;;
	esac
fi

# A program that cannot be run: 127 when it is not there, 126 when it
# cannot be executed.
mkdir "$work/bin2"
HEAPTRACE_RECORDER_DIR=$moddir "$heaptrace" record -q -o "$work/x.ht" \
	-- "$work/bin2/mono" "$exe" >/dev/null 2>"$work/err"
st=$?
[ $st = 127 ] || fail "a mono that is not there: exit status $st, not 127"
same "$work/err" "a mono that is not there" \
	"heaptrace: cannot run '$work/bin2/mono': No such file or directory"
: >"$work/bin2/mono"
chmod 644 "$work/bin2/mono"
HEAPTRACE_RECORDER_DIR=$moddir "$heaptrace" record -q -o "$work/x.ht" \
	-- "$work/bin2/mono" "$exe" >/dev/null 2>"$work/err"
st=$?
[ $st = 126 ] || fail "a mono that cannot be executed: exit status $st, not 126"
same "$work/err" "a mono that cannot be executed" \
	"heaptrace: cannot run '$work/bin2/mono': Permission denied"
ok "record reports a recorder that does not load or cannot be found, a command it does not know, a program it cannot run"

# ---- what the module itself says, on the program's standard error ----------
# It is loaded by hand here, as heaptrace-record(1) shows, with arguments
# record would never give.

# module OUTFILE ARGS [N]: runs KnownHeap (N list nodes) with the module,
# its standard error in OUTFILE.
module() {
	(cd "$work" && LD_LIBRARY_PATH=$moddir MONO_ENV_OPTIONS="--profile=heaptrace:$2" \
		mono "$exe" "${3:-10}" 2 2 10 >/dev/null 2>"$1")
}

# refused ARGS MESSAGE: the module refuses ARGS with MESSAGE, and the
# program runs on, unrecorded.
refused() {
	rm -f "$work/heaptrace.ht"
	module "$work/err" "$1" ||
		fail "arguments '$1': the program failed"
	same "$work/err" "arguments '$1'" "heaptrace: mono recorder: $2; not recording"
	[ ! -e "$work/heaptrace.ht" ] || fail "arguments '$1': a trace was written"
}
refused dump=minor "dump= takes major, every-gc, exit or signal, not 'minor'"
refused every=0 "every= takes a number from 1 to 1000000000, not '0'"
refused every=1000000001 "every= takes a number from 1 to 1000000000, not '1000000001'"
refused dump=exit,verbose "unknown option 'verbose' (options: dump=WHEN, every=N, alloc, values, sites[=BYTES|all], output=FILE last)"
refused sites=0 "sites= takes a number of bytes from 1 to 1099511627776 or all, not '0'"
refused output= "output= needs a file name"

module "$work/err" "output=$work/no/such/dir/t.ht"
same "$work/err" "an output in no directory" \
	"heaptrace: mono recorder: cannot record: $work/no/such/dir/t.ht: cannot open for writing: No such file or directory"
module "$work/err" "output=/dev/full"
same "$work/err" "an output on a full disk" \
	"heaptrace: mono recorder: cannot record: /dev/full: cannot write the header: No space left on device"

# another module than the one record meant to load
: >"$work/other.so"
real_module=$(cd "$moddir" && pwd -P)/libmono-profiler-heaptrace.so
real_other=$work/other.so
(export HEAPTRACE_MODULE="$work/other.so"; module "$work/err" "output=$work/m.ht")
same "$work/err" "another module loaded" \
	"heaptrace: mono recorder: loaded $real_module rather than $real_other: Mono found that copy first"

# a write that fails on the way: the file-size limit, in bytes as this
# shell counts its blocks, stops the trace there
(trap '' XFSZ; ulimit -f 40; head -c 100000 /dev/zero >"$work/limit") 2>/dev/null
limit=$(($(wc -c <"$work/limit")))
(trap '' XFSZ; ulimit -f 40; module "$work/err" "output=$work/cut.ht" 100000)
same "$work/err" "a write that fails" \
	"heaptrace: mono recorder: $work/cut.ht: byte $limit: cannot write: File too large"

# HEAPTRACE_VERBOSE: the count of what was recorded
(export HEAPTRACE_VERBOSE=1; module "$work/err" "output=$work/v.ht")
grep -qxE "heaptrace: mono recorder: $work/v.ht: [0-9]+ events?, [0-9]+ GCs?, [0-9]+ bytes \([0-9]+ before compression\), [0-9]+ waits? for a buffer, [0-9]+ events? dropped, [0-9]+ root updates? dropped, [0-9]+ class(es)? without a field table, [0-9]+ strings? with their text" "$work/err" ||
	{ fail "HEAPTRACE_VERBOSE: no count of what was recorded"; cat "$work/err"; }
ok "the module's messages: bad arguments, outputs it cannot write, another module, a failed write, HEAPTRACE_VERBOSE"

[ $failures = 0 ] || { echo "$failures failures"; exit 1; }
echo "all Mono recorder checks passed"
