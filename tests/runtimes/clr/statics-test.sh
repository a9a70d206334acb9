#!/bin/sh
# statics-test.sh HEAPTRACE SOURCE_DIR STATICS_STAMP WORK_DIR - statics by
# name on a real .NET runtime: records Statics.cs (built by
# build-program.sh), whose statics of several kinds each hold an object of
# a class of its own, and checks for each that `paths --to` the object
# starts at the static by name (before the local that holds ListHead's
# object too), that `object` lists that root first, that `flame` puts
# the object's retained bytes under the static's frame as `top` counts
# them, and that the trace is clean. Exits 77 (skipped) without dotnet,
# jq or the program.
#
# Under AddressSanitizer (HT_SANITIZE names it, HT_CC the compiler) the
# recorder is instrumented and dotnet is not: the sanitizer's runtime is
# preloaded into dotnet through a wrapper first on PATH.
set -u
if [ $# -ne 4 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR STATICS_STAMP WORK_DIR" >&2
	exit 2
fi
heaptrace=$1 src=$2 stamp=$3 work=$4
. "$src/../../lib.sh"
need_tools dotnet jq
[ -f "$stamp" ] || { echo "SKIP: Statics.dll was not built"; exit 77; }
app=$(cat "$stamp")
rm -rf "$work"
mkdir -p "$work" || exit 1
status=0

case ${HT_SANITIZE:-none} in
*address*)
	recorder=$(dirname "$heaptrace")/../recorders/clr/libheaptrace-clr.so
	runtime=$(ldd "$recorder" 2>/dev/null |
		awk '/libasan|libclang_rt.asan/ { print $3 }')
	[ -n "$runtime" ] ||
		runtime=$(${HT_CC:-cc} -print-file-name=libclang_rt.asan-x86_64.so)
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

# The program's GC.Collect() is dumped (a major GC) while Main's local
# still holds ListHead's first node.
trace=$work/statics.ht
if ! "$heaptrace" record -q -o "$trace" -- dotnet "$app" 100 \
	>"$work/out" 2>"$work/err"; then
	cat "$work/err"
	echo "FAIL: record of Statics"
	exit 1
fi
"$heaptrace" check "$trace" >"$work/check" ||
	{ fail "the trace is not clean"; tail -5 "$work/check"; }

# the object of class CLASS that retains the most, in dump 0
object_of() {
	"$heaptrace" top --dump 0 --class "$1" -n 1 --format json "$trace" |
		jq -r '.objects[0].id // empty'
}

# static CLASS NAME: the static NAME holds the object of class CLASS
static() {
	cls=$1 name=$2
	id=$(object_of "$cls")
	[ -n "$id" ] || { fail "no $cls in the dump"; return; }
	root=$("$heaptrace" paths --dump 0 --to "$id" --format json "$trace" |
		jq -r '.paths[0].root.name')
	[ "$root" = "$name" ] ||
		{ fail "the path to $cls $id starts at '$root', not '$name'"; return; }
	first=$("$heaptrace" object --dump 0 --format json "$trace" "$id" |
		jq -r '.roots[0].name')
	[ "$first" = "$name" ] ||
		{ fail "object $id lists '$first' first, not '$name'"; return; }
	retained=$("$heaptrace" top --dump 0 --class "$cls" -n 1 \
		--format json "$trace" | jq -r '.objects[0].retained')
	under=$("$heaptrace" flame --dump 0 "$trace" |
		awk -v top="$name" '{ n = split($0, f, ";") }
			f[1] == top { s += $NF } END { print s + 0 }')
	[ "$under" = "$retained" ] ||
		{ fail "flame has $under bytes under '$name', top says $cls retains $retained"; return; }
	echo "ok: $name holds $cls $id ($retained bytes retained, in paths, object and flame)"
}

static Demo.ListNode "static Demo.Program.ListHead"
static "Demo.NumberRow[]" "static Demo.Program.Numbers"
static Demo.NestedItem "static Demo.Outer+Inner.Cache"
static Demo.Pair "static Demo.Program.Held"

# the local holds ListHead's node too: its path comes after the static's
id=$(object_of Demo.ListNode)
roots=$("$heaptrace" paths --dump 0 --to "$id" --format json "$trace" |
	jq -r '[.paths[].root.name] | join(" | ")')
case $roots in
"static Demo.Program.ListHead | local in Demo.Program.Main"*)
	echo "ok: ListHead's node: $roots" ;;
*)	fail "ListHead's node: the paths start at $roots, not the static then the local" ;;
esac

# What the runtime does not give: said, not failed (doc/design.md).
for what in "a generic class's static:System.Collections.Generic.List<Demo.GenericItem>" \
	"a thread static:Demo.ThreadItem"; do
	c=${what#*:}
	id=$(object_of "$c")
	root=$("$heaptrace" paths --dump 0 --to "$id" --format json "$trace" |
		jq -r '.paths[0].root.name // "nothing"')
	echo "note: ${what%%:*} ($c) is reached from $root"
done
exit $status
