#!/bin/sh
# layouts-test.sh - the CoreCLR recorder's arrays and collections on a real
# .NET runtime: Layouts.cs (built here with the SDK, offline) holds objects
# at known elements of arrays with nulls, of an array of structs and of a
# Dictionary's entries, inside a struct (or a struct in a struct) embedded
# in an object, and collections of known fill; its dump at exit,
# recorded with and without --values, is checked by check-layouts.py.
#
# usage: layouts-test.sh HEAPTRACE SOURCE_DIR WORK_DIR
# Exits 77 (skipped) without dotnet or python3. In a sanitizer build
# (HT_SANITIZE, HT_CC as knownheap-test.sh has them) dotnet runs with the
# sanitizer's runtime preloaded, through dotnet-env.sh's `dotnet` wrapper
# first on PATH (sanitized_dotnet).
set -u
if [ $# -ne 3 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR WORK_DIR" >&2
	exit 2
fi
heaptrace=$1 src=$2 work=$3
status=0

. "$src/../../lib.sh"
need_tools dotnet python3
rm -rf "$work"
mkdir -p "$work/project" || exit 1
work=$(cd "$work" && pwd -P)
dotnet_dir=$work
. "$src/dotnet-env.sh"
started=$(date +%s)
cp "$src/Layouts.cs" "$src/Layouts.csproj" "$work/project/"
if ! dotnet_build "$work/project" "$work/out" >"$work/build.log" 2>&1; then
	cat "$work/build.log"
	echo "FAIL: dotnet build of Layouts.cs"
	exit 1
fi

runtime=$(sanitizer_runtime "$heaptrace")
if [ -n "$runtime" ]; then
	sanitized_dotnet "$runtime" "$work" signals
	echo "note: dotnet runs with $runtime preloaded"
fi

for mode in plain values; do
	opt=
	[ $mode = values ] && opt=--values
	"$heaptrace" record -q --dump-on exit $opt -o "$work/$mode.ht" -- \
		dotnet "$work/out/Layouts.dll" >"$work/$mode.out" 2>"$work/$mode.err" ||
		fail "record $opt: exit status $?: $(cat "$work/$mode.err")"
	python3 "$src/check-layouts.py" --label "$mode" ${opt:+--values} \
		"$heaptrace" "$work/$mode.ht" "$work/$mode.out" || status=1
done
echo "note: $(($(date +%s) - started)) s"
[ $status -eq 0 ] && echo "ok: Layouts recorded and checked"
exit $status
