#!/bin/sh
# sites-test.sh HEAPTRACE SITESHEAP_EXE MODULE [SANITIZER_RUNTIME]
# - `heaptrace record --sites` on a real Mono: records SitesHeap.exe (four
# allocation sites the test knows: one that keeps, one that churns, one
# whose objects survive several GCs and then die, one that churns on two
# threads at once) and checks the stacks
# the trace gives them (check-sites.py):
#   - --sites=all: the allocations whose innermost frame is each site's
#     method, at the site's line, are exactly those the program made; the
#     kept ones are in the exit dump, and a few of each site are followed
#     by `history` from their allocation across the GCs to the dump or
#     their death; Mono's log profiler, on the same program, gives each
#     site the same bytes;
#   - --sites=16384 with --allocations: one event per object, and each
#     site's estimate from the samples within 4 standard deviations;
#   - --sites (the default interval, 512 KiB): the header says so, and the
#     estimates are within 4 standard deviations.
# Exits 77 (skipped) where Mono, the module, python3 or jq is missing. Under
# a sanitizer, mono runs with its runtime preloaded (as in mono-test.sh).
set -u
heaptrace=$1 exe=$2 module=$3 sanitizer=${4:-}
here=$(dirname "$0")
command -v mono >/dev/null || { echo "SKIP: mono is not installed"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
[ -f "$exe" ] || { echo "SKIP: $exe was not built (no mcs)"; exit 77; }
[ -f "$module" ] || { echo "SKIP: the Mono recorder was not built"; exit 77; }

KEEP=20000 CHURN=40000 AGING=5000
# byte[1000], byte[100], byte[500]: 32 bytes of header, rounded to 8
KEEP_SIZE=1032 CHURN_SIZE=136 AGING_SIZE=536
# byte[200] on two threads, CHURN / 4 each
SPREAD_SIZE=232
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
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

# record TRACE CHURN RECORD_OPTIONS...: records SitesHeap, checked clean.
record() {
	trace=$1 churn=$2
	shift 2
	"$heaptrace" record -q -o "$trace" "$@" -- mono "$exe" \
		$KEEP "$churn" $AGING >"$work/out" 2>"$work/err" ||
		{ fail "record $*: exit status $?"; cat "$work/err"; }
	"$heaptrace" check --format json --max 1000000 "$trace" >"$work/check.json"
	jq -e '.clean' "$work/check.json" >/dev/null ||
		{ fail "record $*: the trace is not clean"; "$heaptrace" check "$trace" | tail -5; }
}

# sites YAML LABEL CHURN [OPTIONS]: check-sites.py on the three sites
sites() {
	yaml=$1 label=$2 churn=$3
	shift 3
	python3 "$here/check-sites.py" --label "$label" "$@" "$yaml" \
		"$here/SitesHeap.cs" \
		Keep=SitesHeap.Keep:$KEEP:$KEEP_SIZE \
		Churn=SitesHeap.Churn:$churn:$CHURN_SIZE \
		Age=SitesHeap.Age:$AGING:$AGING_SIZE \
		Spread=SitesHeap.Spread:$((churn / 4 * 2)):$SPREAD_SIZE ||
		failures=$((failures + 1))
}

# ---- --sites=all: exact --------------------------------------------------
t=$work/all.ht
record "$t" $CHURN --sites=all
"$heaptrace" cat "$t" >"$work/all.yaml"
sites "$work/all.yaml" "sites=all" $CHURN --ids "$work/ids"

# The kept arrays are all in the exit dump (nothing else of the program
# is an array of that size).
"$heaptrace" top -n 0 --by self --format json "$t" >"$work/top.json"
kept=$(jq --argjson s $KEEP_SIZE '[.objects[] | select(.class == "System.Byte[]" and .size == $s)] | length' "$work/top.json")
[ "$kept" = $KEEP ] || fail "sites=all: the exit dump has $kept byte[1000], not $KEEP"

# history SITE SIZE FATE MIN_SURVIVED: five objects of SITE, spread over
# its allocations, followed from their allocation: FATE, and at least
# MIN_SURVIVED GCs survived or dumps seen. An address is used again once
# the GC has moved or freed what was there: of the objects that had the
# id, those of the site's size are the site's (the nursery's addresses
# come round at each minor GC). One of the site's objects looked at may
# be claimed dead while it lives, which the next dump shows as first seen
# (the checks of the trace stay clean): sgen pins an object a stale stack
# slot points at (the array a loop made last before a GC) without
# reporting a root for it (doc/design.md, section 1, Mono), and the moves
# of a GC.Collect() that Mono reports only in the next GC of the same
# pause are missed by the first, which proves dead what it did not see
# move (a few tens of objects in a GC that moves thousands, seen here).
history() {
	grep "^$1 " "$work/ids" | cut -d' ' -f2 >"$work/site-ids"
	n=$(wc -l <"$work/site-ids")
	good=0 bad=0
	for k in 1 2 3 4 5; do
		id=$(sed -n "$(( n * k / 6 ))p" "$work/site-ids")
		"$heaptrace" history --format json "$t" "$id" >"$work/h.json"
		jq -r --argjson s "$2" --arg f "$3" --argjson m "$4" '
			. as $h | .objects[] | select(.size == $s) |
			.fate == $f and
				(.object as $o | [$h.timeline[] | select(.object == $o)] |
				 .[0].event == "allocated" and
				 ([.[] | select(.event == "survived" or
					.event == "seen_in_dump")] | length) >= $m)' \
			"$work/h.json" >"$work/verdicts"
		good=$((good + $(grep -c true "$work/verdicts")))
		bad=$((bad + $(grep -c false "$work/verdicts")))
		grep -q false "$work/verdicts" &&
			echo "note: $1 object $id: $(jq -c '[.objects, [.timeline[] | [.object, .event]]]' "$work/h.json")"
	done
	if [ $good -ge 5 ] && [ $bad -le 1 ]; then
		ok "sites=all: $1: $good objects followed from their allocation, $3 ($bad not)"
	else
		fail "sites=all: $1: $good objects followed from their allocation, $3, $bad not"
	fi
}
# the aging ones live through three GC.Collect() (each a dump) and die
# at the fourth; the kept ones are in every dump
history Keep $KEEP_SIZE alive 5
history Age $AGING_SIZE died 3
history Churn $CHURN_SIZE died 0

# Mono's log profiler, on the same program, gives each site the same
# bytes (it reports the sizes rounded as the trace does), from backtraces
# deep enough to reach the thread's site. It may hang at
# shutdown: a run gets 30 s.
mlpd=$work/log.mlpd
if timeout 30 mono --profile=log:alloc,maxframes=32,output="$mlpd" "$exe" $KEEP $CHURN \
	$AGING >/dev/null 2>&1 &&
	mprof-report --reports=alloc --traces --maxframes=32 "$mlpd" >"$work/report" 2>&1; then
	# an allocation's backtraces: "N bytes from:", then its frames
	awk '/^ +[0-9]+ +[0-9]+ +[0-9]+ / { cls = $4 }
	     /bytes from:/ { n = $1; next }
	     cls == "System.Byte[]" && /SitesHeap:(Keep|Churn|Age|Spread) / {
		split($1, a, ":"); m = a[2]; sub(/ .*/, "", m); b[m] += n }
	     END { for (m in b) print m, b[m] }' "$work/report" |
		sort >"$work/log-bytes"
	printf '%s\n' "Age $((AGING * AGING_SIZE))" \
		"Churn $((CHURN * CHURN_SIZE))" "Keep $((KEEP * KEEP_SIZE))" \
		"Spread $((CHURN / 4 * 2 * SPREAD_SIZE))" >"$work/our-bytes"
	if diff -u "$work/log-bytes" "$work/our-bytes"; then
		ok "Mono's log profiler gives each site the same bytes: $(tr '\n' ' ' <"$work/log-bytes")"
	else
		fail "the sites' bytes differ from Mono's log profiler's (above)"
	fi
else
	echo "note: Mono's log profiler failed or hung; cross-check not made"
fi

# ---- --allocations --sites=16384: one event per object, estimates --------
t=$work/alloc.ht
record "$t" $CHURN --allocations --sites=16384
"$heaptrace" cat "$t" >"$work/alloc.yaml"
sites "$work/alloc.yaml" "alloc, sites=16384" $CHURN --alloc

# ---- --sites: the default interval ---------------------------------------
# enough churn for about a thousand samples of it
t=$work/default.ht
record "$t" 4000000 --sites
"$heaptrace" cat "$t" >"$work/default.yaml"
sites "$work/default.yaml" "sites (512 KiB)" 4000000
grep -qx '  sites: "\{0,1\}524288"\{0,1\}' "$work/default.yaml" ||
	fail "sites: the header does not say 524288"

[ $failures = 0 ] || { echo "$failures failures"; exit 1; }
echo "all Mono sites checks passed"
