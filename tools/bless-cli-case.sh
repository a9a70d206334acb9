#!/bin/sh
# bless-cli-case.sh BUILD_DIR CASE... - writes the expected stdout, stderr
# and status of command-level cases from what the build does now. Review
# the diff (git diff tests/cli/cases) before committing: a blessed answer is
# only as right as the eyes that read it.
set -eu
build=$1
shift
root=$(cd "$(dirname "$0")/.." && pwd)
for c in "$@"; do
	dir=$root/tests/cli/cases/$(basename "$c")
	TMP=$(mktemp -d)
	export TMP
	mkdir "$TMP/bin"
	ln -s "$(cd "$build" && pwd)/src/cli/heaptrace" "$TMP/bin/heaptrace"
	(cd "$root/testdata" && PATH="$TMP/bin:$PATH" sh -e "$dir/cmd" \
		>"$dir/stdout" 2>"$dir/stderr") && status=0 || status=$?
	rm -rf "$TMP"
	if [ "$status" = 0 ]; then rm -f "$dir/status"; else echo "$status" >"$dir/status"; fi
	# stderr is compared only where the case says something on it
	[ -s "$dir/stderr" ] || rm -f "$dir/stderr"
done
