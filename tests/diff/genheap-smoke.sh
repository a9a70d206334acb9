#!/bin/sh
# genheap-smoke.sh - diff and flame over synthetic heaps of ht-genheap,
# larger than the hand-solved traces: two growing dumps of one trace
# (matched through the relocation history) and two traces of the same
# program (matched by path), checked with jq against what must hold of
# any answer; budgets both ways; the same bytes on a second run; the
# folded stacks adding up to what the roots retain. Exits 77 (skipped)
# without jq; tools/install-deps.sh installs it.
set -u
: "${HEAPTRACE:?HEAPTRACE must name the heaptrace binary}"
: "${GENHEAP:?GENHEAP must name ht-genheap}"
command -v jq >/dev/null || {
	echo "jq is not installed: skipped"
	exit 77
}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

fail() {
	echo "FAIL: $*"
	exit 1
}

# check FILE JQ-EXPRESSION: the expression is true of the JSON in FILE
check() {
	[ "$(jq "$2" "$1")" = true ] || fail "$1: not $2"
}

"$GENHEAP" -n 20000 --dumps 2 -o "$TMP/grow.ht" 2>/dev/null || fail "ht-genheap"
"$GENHEAP" -n 20000 -s 5 -o "$TMP/run1.ht" 2>/dev/null || fail "ht-genheap"
"$GENHEAP" -n 20000 -s 5 -o "$TMP/run2.ht" 2>/dev/null || fail "ht-genheap"

# one trace: dump 0 holds the first half of the objects, dump 1 all
"$HEAPTRACE" diff -n 0 --format json "$TMP/grow.ht" >"$TMP/grow.json" ||
	fail "heaptrace diff exited $?"
j=$TMP/grow.json
check "$j" '.matched_by == "id"'
check "$j" '.total.objects.before == 10000 and .total.objects.after == 20000'
check "$j" '.total.bytes.change == .total.bytes.after - .total.bytes.before'
check "$j" '([.classes[].count.change] | add) == .total.objects.change'
check "$j" '([.classes[].bytes.change] | add) == .total.bytes.change'
check "$j" '[.classes[].bytes.change] as $c | $c == ($c | sort | reverse)'
check "$j" '[.retainers[].retained.change] as $c | $c == ($c | sort | reverse)'
check "$j" 'all(.retainers[]; .retained.after > .retained.before)'
check "$j" '.new_objects > 0 and .new_bytes <= .total.retained.after'
check "$j" '(([.long_lived[].new_bytes] | add) + .new_unheld_bytes) == .new_bytes'
check "$j" '(([.long_lived[].new_objects] | add) + .new_unheld_objects) == .new_objects'
check "$j" 'all(.long_lived[]; .id_before != null)'

# the same answer, byte for byte, in every format
for format in text yaml json markdown; do
	"$HEAPTRACE" diff --format $format "$TMP/grow.ht" >"$TMP/a.$format"
	"$HEAPTRACE" diff --format $format "$TMP/grow.ht" >"$TMP/b.$format"
	cmp -s "$TMP/a.$format" "$TMP/b.$format" || fail "$format differs between runs"
done

# budgets: broken (exit 1, one line each), then kept (exit 0)
"$HEAPTRACE" diff -n 1 --fail-if 'total.count>+50%' \
	--fail-if 'total.bytes>+1%' "$TMP/grow.ht" >/dev/null 2>"$TMP/err"
[ $? = 1 ] || fail "broken budgets did not exit 1"
[ "$(grep -c '^heaptrace: budget broken: ' "$TMP/err")" = 2 ] ||
	fail "not two lines for two broken budgets: $(cat "$TMP/err")"
"$HEAPTRACE" diff -n 1 --fail-if 'total.count>+100%' "$TMP/grow.ht" \
	>/dev/null 2>"$TMP/err" || fail "a kept budget exited $?"
[ -s "$TMP/err" ] && fail "a kept budget said: $(cat "$TMP/err")"

# two traces of the same program: every path is there before, none grew
"$HEAPTRACE" diff --format json --fail-if 'total.bytes>+0' \
	"$TMP/run1.ht" "$TMP/run2.ht" >"$TMP/same.json" || fail "identical runs broke a budget"
j=$TMP/same.json
check "$j" '.matched_by == "path"'
check "$j" '.retainers == [] and .classes == [] and .new_objects == 0'
check "$j" '.budgets[0].broken == false'

# two traces of different sizes: by path
"$HEAPTRACE" diff --format json "$TMP/run1.ht" "$TMP/grow.ht" >"$TMP/two.json" ||
	fail "diff of two traces exited $?"
check "$TMP/two.json" '.before.dump == 0 and .after.dump == 1'
check "$TMP/two.json" 'all(.long_lived[]; .id_before == null)'

# flame: the folded stacks add up to what the roots retain
"$HEAPTRACE" flame "$TMP/grow.ht" >"$TMP/grow.folded" || fail "heaptrace flame"
sum=$(awk '{ s += $NF } END { printf "%d", s }' "$TMP/grow.folded")
[ "$sum" = "$(jq .total.retained.after "$TMP/grow.json")" ] ||
	fail "folded stacks add up to $sum"
"$HEAPTRACE" flame --svg -o "$TMP/grow.svg" "$TMP/grow.ht" || fail "flame --svg"
[ "$(head -c 5 "$TMP/grow.svg")" = "<?xml" ] || fail "no SVG"
echo "ok"
