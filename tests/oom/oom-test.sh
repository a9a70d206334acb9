#!/bin/sh
# oom-test.sh FAILMALLOC NAME -- HEAPTRACE-ARGS... - one command run again
# and again with memory running out at each of its allocations in turn
# (failmalloc.c: from the Nth call of malloc and the like on, every one
# fails). At every point the command must either give exactly the answer
# it gives with memory to spare (exit 0, the same standard output and the
# same output file), or stop with exit status 3 and a message that says
# memory ran out. Never a crash, a hang, another status, or a different
# answer passed off as the right one.
#
# Runs in testdata/; $TMP in the arguments is a scratch directory, $OUT the
# file the command may write (compared with the one written with memory to
# spare). Environment: HEAPTRACE (the binary), HT_TESTDATA. A command with
# more than OOM_POINTS allocations is tried at the first 100 and then at
# points spread evenly over the rest.
set -u
failmalloc=$1 name=$2
shift 3 # FAILMALLOC NAME --
: "${HEAPTRACE:?}" "${HT_TESTDATA:?}"
max_points=${OOM_POINTS:-400}

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
OUT=$TMP/out
cd "$HT_TESTDATA" || exit 99

# the arguments with $TMP and $OUT in them filled in
expand() {
	for a in "$@"; do
		a=$(printf '%s' "$a" | sed "s|\\\$TMP|$TMP|g; s|\\\$OUT|$OUT|g")
		printf '%s\n' "$a"
	done
}
args=$(expand "$@")

# run ENV... : the command, its standard output to $TMP/stdout, standard
# error to $TMP/stderr; returns its exit status
run() {
	rm -f "$OUT"
	(
		IFS='
'
		# shellcheck disable=SC2086
		env "$@" LD_PRELOAD="$failmalloc" "$HEAPTRACE" $args
	) >"$TMP/stdout" 2>"$TMP/stderr"
}

# Prepared inputs: the .ht forms of the YAML test traces, as $TMP/NAME.ht,
# those the command reads.
for y in analysis/cli-shop.yaml relocation.yaml diff/run1.yaml diff/run2.yaml; do
	ht=$TMP/$(basename "$y" .yaml).ht
	case $args in *"$ht"*) ;; *) continue ;; esac
	"$HEAPTRACE" convert "$y" -o "$ht" ||
		{ echo "$name: cannot prepare $y"; exit 99; }
done

run HT_COUNT_ALLOC="$TMP/count"
status=$?
if [ "$status" != 0 ]; then
	echo "$name: exit $status with memory to spare:"
	cat "$TMP/stderr"
	exit 1
fi
mv "$TMP/stdout" "$TMP/want-stdout"
[ -f "$OUT" ] && mv "$OUT" "$TMP/want-out"
points=$(cat "$TMP/count")

# the points tried: every one, or the first 100 and then evenly spread
if [ "$points" -le "$max_points" ]; then
	tried=$(seq 1 "$points")
else
	step=$(( (points - 100) / (max_points - 100) + 1 ))
	tried=$( (seq 1 100; seq 101 "$step" "$points"; echo "$points") | uniq)
fi

failed=0 answered=0 refused=0
for n in $tried; do
	run HT_FAIL_ALLOC="$n"
	status=$?
	case $status in
	0)
		if ! cmp -s "$TMP/stdout" "$TMP/want-stdout"; then
			echo "$name: allocation $n failed: exit 0 with another answer"
			diff "$TMP/want-stdout" "$TMP/stdout" | head -10
			failed=$((failed + 1))
		elif [ -f "$TMP/want-out" ] && ! cmp -s "$OUT" "$TMP/want-out"; then
			echo "$name: allocation $n failed: exit 0, another output file"
			failed=$((failed + 1))
		else
			answered=$((answered + 1))
		fi
		;;
	3)
		if grep -q -e 'out of memory' -e 'Cannot allocate memory' \
			-e 'not enough memory' \
			"$TMP/stderr"; then
			refused=$((refused + 1))
		else
			echo "$name: allocation $n failed: exit 3 without saying memory ran out:"
			head -5 "$TMP/stderr"
			failed=$((failed + 1))
		fi
		;;
	*)
		echo "$name: allocation $n failed: exit $status"
		head -5 "$TMP/stderr"
		failed=$((failed + 1))
		;;
	esac
done
echo "$name: $points allocations; $(echo "$tried" | wc -l) tried:" \
	"$answered answered right, $refused refused (out of memory), $failed wrong"
[ "$failed" = 0 ]
