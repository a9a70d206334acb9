#!/bin/sh
# compare-outputs.sh OLD NEW - runs every analysis, in every output form, on
# every trace of testdata/ with two heaptrace binaries and reports each run
# whose standard output, standard error or exit status differ. For changes
# that must not change an answer (a refactoring, a speed-up): build the
# commit before the change in a second tree and compare. Exits 1 if any
# run differs.
set -u
old=$1 new=$2
td=$(cd "$(dirname "$0")/../testdata" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs=0 differ=0

run() {
	runs=$((runs + 1))
	"$old" "$@" >"$tmp/old.out" 2>"$tmp/old.err"
	old_status=$?
	"$new" "$@" >"$tmp/new.out" 2>"$tmp/new.err"
	new_status=$?
	if ! cmp -s "$tmp/old.out" "$tmp/new.out" ||
	   ! cmp -s "$tmp/old.err" "$tmp/new.err" ||
	   [ "$old_status" != "$new_status" ]; then
		differ=$((differ + 1))
		echo "differs: heaptrace $* (exit $old_status, then $new_status)"
		diff "$tmp/old.out" "$tmp/new.out" | head -5
		diff "$tmp/old.err" "$tmp/new.err" | head -5
	fi
}

for f in $(find "$td" -type f \( -name '*.yaml' -o -name '*.ht' -o -name '*.hprof' \) | sort); do
	run check "$f"
	run cat "$f"
	for fmt in text yaml json; do
		run stats --format $fmt "$f"
		run stats --retained-by-class --format $fmt "$f"
		run top -n 20 --format $fmt "$f"
		run top --classes --format $fmt "$f"
		run top --by count --classes --format $fmt "$f"
	done
	run flame "$f"
	run flame --svg "$f"
	# object, paths and history of the three biggest retainers
	for id in $("$old" top -n 3 --format json "$f" 2>/dev/null |
		    grep -o '"id": *"0x[0-9a-f]*"' | grep -o '0x[0-9a-f]*'); do
		for fmt in text json; do
			run object --format $fmt "$f" "$id"
			run paths --format $fmt --to "$id" "$f"
			run history --format $fmt "$f" "$id"
		done
	done
done
for fmt in text yaml json markdown; do
	run diff --format $fmt "$td/diff/run1.yaml" "$td/diff/run2.yaml"
done
run diff "$td/diff/moved.yaml"
run diff "$td/genheap-20k.ht" "$td/genheap-20k.ht"
echo "$runs runs, $differ differ"
[ "$differ" = 0 ]
