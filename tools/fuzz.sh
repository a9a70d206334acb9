#!/bin/sh
# fuzz.sh TARGET [SECONDS] - fuzzes one target of tests/fuzz (ht, yaml,
# replay) with libFuzzer for SECONDS (default 60), starting from its seed
# corpus. Builds the targets first in build-fuzz (clang, AddressSanitizer
# and UndefinedBehaviorSanitizer, -Dfuzzing=true, warnings as errors). The
# .ht targets (ht, replay) mutate with tests/fuzz/ht_mutator.c: it takes a
# .ht apart into chunks and events, makes them hostile, and writes lengths,
# CRCs and the index right, so the decoder, the replay and the analyses see
# it.
#
# What the run finds goes under build-fuzz/, never into the committed
# seeds: new inputs to fuzz-corpus/TARGET, a crashing input to
# fuzz-crashes/TARGET/ (then the script fails: reproduce it with
# build-fuzz/tests/fuzz/fuzz_TARGET FILE, fix it, and add the input to
# tests/fuzz/regressions/TARGET/). Ends with libFuzzer's figures: runs,
# coverage (cov: edges, ft: features), corpus size.
#
# Environment: FUZZ_BUILD (default build-fuzz), FUZZ_ARGS (more libFuzzer
# options, e.g. -jobs=2).
set -u
cd "$(dirname "$0")/.."
target=${1:?usage: tools/fuzz.sh TARGET [SECONDS]}
seconds=${2:-60}
build=${FUZZ_BUILD:-build-fuzz}
seeds=tests/fuzz/corpus/$target
[ -d "$seeds" ] || { echo "fuzz.sh: no target '$target' (no $seeds)" >&2; exit 2; }

# Runs of several targets at once (tools/test-all.sh) share the build:
# one sets it up and builds while the others wait for the lock.
{
	flock 9
	if [ ! -f "$build/build.ninja" ]; then
		CC=clang meson setup "$build" -Dfuzzing=true -Dtests=disabled \
			-Dwerror=true -Db_sanitize=address,undefined -Db_lundef=false \
			>"$build.setup.log" 2>&1 ||
			{ cat "$build.setup.log"; exit 1; }
	fi
	ninja -C "$build" "tests/fuzz/fuzz_$target" >/dev/null ||
		{ ninja -C "$build" "tests/fuzz/fuzz_$target"; exit 1; }
} 9>"$build.lock"

work=$build/fuzz-corpus/$target
crashes=$build/fuzz-crashes/$target
mkdir -p "$work" "$crashes"
dict=
[ -f "tests/fuzz/$target.dict" ] && dict=-dict=tests/fuzz/$target.dict

# UBSan findings stop the run like a crash; leaks are findings too.
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
# shellcheck disable=SC2086
"$build/tests/fuzz/fuzz_$target" "$work" "$seeds" $dict \
	-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
	-max_len=65536 -print_final_stats=1 \
	-artifact_prefix="$crashes/" ${FUZZ_ARGS:-} \
	>"$build/fuzz-$target.log" 2>&1
status=$?
grep -E '^(#[0-9]+.*DONE|stat::)|SUMMARY|CHECK FAILED|ERROR:' \
	"$build/fuzz-$target.log" | tail -20
if [ $status != 0 ]; then
	echo "fuzz.sh: $target failed (status $status): see $build/fuzz-$target.log" \
		"and $crashes/" >&2
	exit 1
fi
echo "fuzz.sh: $target: ${seconds}s, no crash"
