#!/bin/sh
# sites-test.sh HEAPTRACE MODULE SRCDIR BUILDDIR [SANITIZER_RUNTIME] -
# allocation sites on a real .NET runtime: records Sites.cs (three sites
# of known counts and sizes: one keeps its arrays to the end, one churns,
# one's survive several GCs and then die) with --sites=all and with
# --sites (the runtime's own sampling, 100 KiB) and --sites=16384 (the
# recorder's own sampler), checks that each trace is clean, and checks
# with check-sites.py that --sites=all gives each site exactly the
# allocations the program made, at its line, followed to the exit dump
# or to their death, and that the sampled estimates are within their
# stated error of the truth.
# Exits 77 (skipped) where dotnet, the module or python3 is missing; in a
# sanitizer build dotnet runs with SANITIZER_RUNTIME preloaded, as in
# clr-test.sh.
set -u
heaptrace=$1 module=$2 src=$3 build=$4 sanitizer=${5:-}
command -v dotnet >/dev/null || { echo "SKIP: dotnet is not installed"; exit 77; }
command -v python3 >/dev/null || { echo "SKIP: python3 is not installed"; exit 77; }
[ -f "$module" ] || { echo "SKIP: the CLR recorder was not built"; exit 77; }

unset HEAPTRACE_RECORDER_DIR
dotnet_dir=$build
. "$src/dotnet-env.sh"
program_build Sites "$src" "$build" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "$sanitizer" ]; then
	sanitized_dotnet "$sanitizer" "$work"
fi
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

for mode in all default 16384; do
	t=$work/$mode.ht
	case $mode in
	default) sites=--sites ;;
	*) sites=--sites=$mode ;;
	esac
	HEAPTRACE_VERBOSE=1 "$heaptrace" record -q -o "$t" "$sites" -- \
		dotnet "$build/out/Sites.dll" >"$work/out" 2>"$work/err" ||
		{ fail "record $sites: $(cat "$work/err")"; continue; }
	ok "$sites: $(grep -o 'sites: .*' "$work/err")"
	"$heaptrace" check "$t" >"$work/check" && ok "$sites: the trace is clean" ||
		{ fail "$sites: the trace is not clean"; tail -5 "$work/check"; }
	python3 "$src/check-sites.py" "$heaptrace" "$t" "$src/Sites.cs" \
		"$work/out" "$mode" || failures=$((failures + 1))
done
[ "$failures" -eq 0 ] || exit 1
exit 0
