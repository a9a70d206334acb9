#!/bin/sh
# test-all.sh - builds heaptrace and runs the whole test suite twice: once
# as built for use (gcc, -Werror), once under AddressSanitizer and
# UndefinedBehaviorSanitizer (clang). Ends with one line "N passed, N failed,
# N skipped" counting every test of both runs.
set -u
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
status=0
passed=0 failed=0 skipped=0

# count BUILD_DIR: adds the results of the last `meson test` in BUILD_DIR.
count() {
	log=$1/meson-logs/testlog.json
	[ -f "$log" ] || return 0
	p=$(grep -c '"result": "OK"' "$log")
	f=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log")
	s=$(grep -c '"result": "SKIP"' "$log")
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

# suite NAME CC BUILD_DIR MESON_ARGS...: configure, build and test one way.
suite() {
	name=$1 compiler=$2 dir=$3
	shift 3
	echo "=== $name: configuring $dir"
	if [ ! -f "$dir/build.ninja" ]; then
		CC=$compiler meson setup "$dir" "$@" >"$dir.setup.log" 2>&1 ||
			{ cat "$dir.setup.log"; status=1; failed=$((failed + 1)); return; }
	fi
	echo "=== $name: building"
	ninja -C "$dir" || { status=1; failed=$((failed + 1)); return; }
	echo "=== $name: testing"
	meson test -C "$dir" --num-processes "$jobs" --print-errorlogs || status=1
	count "$dir"
}

suite "gcc" gcc build
suite "clang, ASan+UBSan" clang build-asan \
	-Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug

echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] || status=1
exit $status
