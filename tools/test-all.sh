#!/bin/sh
# test-all.sh - builds heaptrace and runs the whole test suite twice: once
# as built for use (gcc; with it every command with memory running out at
# each allocation, tests/oom), once under AddressSanitizer and
# UndefinedBehaviorSanitizer (clang). Then the hardening runs: part of it
# under valgrind memcheck, the recording shim's thread stress test under
# ThreadSanitizer, and each fuzz target for a short while; and a release
# build as a packager makes it. Ends with each phase's wall time, then one
# line "N passed, N failed, N skipped" counting every test of every run.
#
# What runs where, and why (CI's budget is near ten minutes on 2 cores):
#   gcc        every test, with the full workloads: the build people use.
#   ASan+UBSan every test, with smaller workloads where a runtime test
#              takes a size (ends-test.sh's kills, mono-test.sh's
#              histories; they see HT_SANITIZE or the sanitizer's
#              runtime): the instrumented heaptrace reads each trace ten
#              times slower, and the code it runs is the same.
#   memcheck   on the gcc build: the unit tests in memcheck_units, the
#              fuzz corpora, the command-level tests that are not cases,
#              and those cases that between them run every line of src/
#              that the cases run (tests/cli/memcheck-skip.txt names the
#              others; tools/memcheck-cases.py chooses from a coverage
#              build).
#   TSan       the two thread stress programs alone.
#   libFuzzer  each target for FUZZ_SECONDS, two at a time (one core
#              each).
#   release    the build alone, for its warnings.
# The runtime tests run two at a time like the rest, each in its own
# directory with its own processes; the longest start first (meson's
# priority), so that no long test runs alone at the end.
#
# Every build here is made with -Dwerror=true: warnings are errors for
# the project's own builds and CI, where they are fixed, but not by
# default (meson.build), where a compiler newer than ours would stop
# someone building a release on a warning we have not seen.
# It needs what `sh tools/install-deps.sh --tests` installs; .ci/run runs
# the two, as the README's second command does.
set -u
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)
# UBSan reports and carries on unless told to stop: a report must fail its
# test, as an ASan report does.
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}"
status=0
passed=0 failed=0 skipped=0
times=

# timed NAME COMMAND...: runs COMMAND, prints its wall time and keeps it
# for the summary at the end.
timed() {
	what=$1
	shift
	start=$(date +%s)
	"$@"
	took=$(($(date +%s) - start))
	echo "=== $what: $took s"
	times="$times$(printf '  %-20s %5d s' "$what" "$took")
"
}

# count BUILD_DIR [LOG]: adds the results of the last `meson test` in
# BUILD_DIR (LOG: its log's name, testlog-WRAPPER.json under a wrapper).
count() {
	log=$1/meson-logs/${2:-testlog.json}
	[ -f "$log" ] || return 0
	p=$(grep -c '"result": "OK"' "$log")
	f=$(grep -c -E '"result": "(FAIL|TIMEOUT|ERROR|UNEXPECTEDPASS)"' "$log")
	s=$(grep -c '"result": "SKIP"' "$log")
	passed=$((passed + p)) failed=$((failed + f)) skipped=$((skipped + s))
}

# suite NAME CC BUILD_DIR MESON_ARGS...: configure, build and test one way.
# The tests are required (-Dtests=enabled), so that a missing Criterion
# fails here instead of leaving the unit tests out unseen; a build dir that
# exists is reconfigured with these options, since the README's first
# command sets up build/ without tests (-Dtests=disabled).
suite() {
	name=$1 compiler=$2 dir=$3
	shift 3
	echo "=== $name: configuring $dir"
	[ -f "$dir/build.ninja" ] && set -- --reconfigure "$@"
	CC=$compiler meson setup "$dir" -Dtests=enabled -Dwerror=true "$@" \
		>"$dir.setup.log" 2>&1 ||
		{ cat "$dir.setup.log"; status=1; failed=$((failed + 1)); return; }
	echo "=== $name: building"
	ninja -C "$dir" || { status=1; failed=$((failed + 1)); return; }
	echo "=== $name: testing"
	meson test -C "$dir" --num-processes "$jobs" --print-errorlogs || status=1
	count "$dir"
}

timed gcc suite "gcc" gcc build
timed ASan+UBSan suite "clang, ASan+UBSan" clang build-asan \
	-Db_sanitize=address,undefined -Db_lundef=false -Dbuildtype=debug

# valgrind memcheck on the gcc build: what ASan cannot see (reads of
# uninitialised memory). The command-level tests (heaptrace under memcheck,
# tools/valgrind-test.sh) but the cases that tests/cli/memcheck-skip.txt
# names, whose every line of src/ other cases run; the fuzz corpora; of
# the unit tests, those of
# the .ht reader, the limits and messages, the shim's failures and the
# analyses, and the thread stress test: about 2.5 minutes on 2 cores. Left
# out for time (memcheck runs a Criterion test about 40 times slower):
# protocol (no memory of its own), yaml (its reader runs under memcheck in
# the cli and fuzz suites), damage (the reader's paths again, at every
# byte), writer (forks and kills; ASan and TSan cover it), varint, chunk
# and replay (the fuzz corpora replay them).
# The longest first: meson starts the tests in the order named, and the
# short cases then fill both cores to the end.
memcheck_units="heap codec reader dominators paths messages limits failures
writer-threads"
memcheck() {
	echo "=== valgrind memcheck: testing (gcc build)"
	if ! command -v valgrind >/dev/null; then
		echo "valgrind is not installed"
		status=1 failed=$((failed + 1))
		return
	fi
	wrap="sh $(pwd)/tools/valgrind-test.sh"
	# shellcheck disable=SC2086
	meson test -C build --no-rebuild --wrapper "$wrap" --num-processes "$jobs" \
		--timeout-multiplier 10 --print-errorlogs \
		$memcheck_units $(memcheck_tests) || status=1
	count build testlog-sh.json
}

# memcheck_tests: the tests of the cli and fuzz suites that memcheck runs:
# all but the cases tests/cli/memcheck-skip.txt names.
memcheck_tests() {
	meson test -C build --no-rebuild --list 2>/dev/null |
		sed -n -E 's#^heaptrace:(cli|fuzz) / ##p' |
		grep -v -x -F -f tests/cli/memcheck-skip.txt
}

# ThreadSanitizer: only the stress programs (Criterion cannot start under
# TSan), built alone: the shim's writer threads and the .ht reader's
# read_ahead thread.
tsan() {
	dir=build-tsan
	echo "=== clang, TSan: configuring $dir"
	if [ ! -f "$dir/build.ninja" ]; then
		CC=clang meson setup "$dir" -Dwerror=true \
			-Db_sanitize=thread -Db_lundef=false \
			>"$dir.setup.log" 2>&1 ||
			{ cat "$dir.setup.log"; status=1; failed=$((failed + 1)); return; }
	fi
	echo "=== clang, TSan: building the stress tests"
	ninja -C "$dir" tests/stress_record tests/stress_read_ahead ||
		{ status=1; failed=$((failed + 1)); return; }
	echo "=== clang, TSan: testing"
	TSAN_OPTIONS=halt_on_error=1 meson test -C "$dir" --no-rebuild \
		--print-errorlogs writer-threads read-ahead-threads || status=1
	count "$dir"
}

# libFuzzer: each target for FUZZ_SECONDS (default 20) from its seeds; one
# test each, passed when nothing crashed (tools/fuzz.sh). A fuzzer keeps
# one core busy: two run at a time.
fuzz() {
	fuzz_pair ht yaml
	fuzz_pair replay hprof
}

# fuzz_pair TARGET TARGET: fuzzes the two side by side, then says how each
# went.
fuzz_pair() {
	mkdir -p build-fuzz
	for t in "$@"; do
		{
			FUZZ_BUILD=build-fuzz sh tools/fuzz.sh "$t" "${FUZZ_SECONDS:-20}"
			echo $? >"build-fuzz/fuzz-$t.status"
		} >"build-fuzz/fuzz-$t.out" 2>&1 &
	done
	wait
	for t in "$@"; do
		echo "=== libFuzzer: $t, ${FUZZ_SECONDS:-20} s"
		cat "build-fuzz/fuzz-$t.out"
		if [ "$(cat "build-fuzz/fuzz-$t.status")" = 0 ]; then
			passed=$((passed + 1))
		else
			status=1 failed=$((failed + 1))
		fi
	done
}

# A release build as a packager makes it (the README's build, with
# --buildtype=release: -O3, NDEBUG), which optimizes enough for gcc to warn
# of what the debugoptimized builds do not show: one test, passed when it
# builds without a warning.
release() {
	dir=build-release
	echo "=== gcc, release: configuring $dir"
	set --
	[ -f "$dir/build.ninja" ] && set -- --reconfigure
	if ! CC=gcc meson setup "$dir" "$@" --buildtype=release -Dwerror=true \
		-Dtests=disabled >"$dir.setup.log" 2>&1; then
		cat "$dir.setup.log"
		status=1 failed=$((failed + 1))
		return
	fi
	echo "=== gcc, release: building"
	if ninja -C "$dir"; then
		passed=$((passed + 1))
	else
		status=1 failed=$((failed + 1))
	fi
}

timed memcheck memcheck
timed TSan tsan
timed libFuzzer fuzz
timed release release

echo "=== wall time of each phase:"
printf '%s' "$times"
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" = 0 ] || status=1
exit $status
