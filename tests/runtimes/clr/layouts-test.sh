#!/bin/sh
# layouts-test.sh - the CoreCLR recorder's arrays and collections on a real
# .NET runtime: Layouts.cs (built here with the SDK, offline) holds objects
# at known elements of arrays with nulls, of an array of structs and of a
# Dictionary's entries, inside a struct embedded in an object, and
# collections of known fill; its dump at exit,
# recorded with and without --values, is checked by check-layouts.py.
#
# usage: layouts-test.sh HEAPTRACE SOURCE_DIR WORK_DIR
# Exits 77 (skipped) without dotnet or python3. In a sanitizer build
# (HT_SANITIZE, HT_CC as knownheap-test.sh has them) dotnet runs with the
# sanitizer's runtime preloaded, through a `dotnet` first on PATH.
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

case ${HT_SANITIZE:-none} in
*address*)
	recorder=$(dirname "$heaptrace")/../recorders/clr/libheaptrace-clr.so
	runtime=$(ldd "$recorder" 2>/dev/null | awk '/libasan|libclang_rt.asan/ { print $3 }')
	[ -n "$runtime" ] || runtime=$(${HT_CC:-cc} -print-file-name=libclang_rt.asan-x86_64.so)
	[ -f "$runtime" ] ||
		{ echo "SKIP: sanitizer build, no runtime '$runtime' to preload"; exit 77; }
	mkdir -p "$work/bin"
	cat >"$work/bin/dotnet" <<WRAPPER
#!/bin/sh
LD_PRELOAD=$runtime\${LD_PRELOAD:+:\$LD_PRELOAD} \\
ASAN_OPTIONS=\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:allow_user_segv_handler=1 \\
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \\
exec $(command -v dotnet) "\$@"
WRAPPER
	chmod +x "$work/bin/dotnet"
	PATH=$work/bin:$PATH
	echo "note: dotnet runs with $runtime preloaded"
	;;
esac

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
