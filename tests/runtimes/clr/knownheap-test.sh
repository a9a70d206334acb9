#!/bin/sh
# knownheap-test.sh - the CoreCLR recorder on a real .NET runtime, through
# `heaptrace record`, checked by check-clr.py against what KnownHeap
# (KnownHeap.cs) built and printed of itself and against dotnet-gcdump.
#
# usage: knownheap-test.sh HEAPTRACE SOURCE_DIR KNOWNHEAP_STAMP WORK_DIR FLAVOUR
#
# FLAVOUR is the runtime and GC the program runs with:
#   workstation  the SDK's runtime (dotnet KnownHeap.dll), workstation GC
#   server       the same with server GC on two heaps
#   callbacks    workstation GC, the moves from COR_PRF_MONITOR_GC's
#                callbacks rather than the runtime's movement events
#                (HEAPTRACE_CLR_MOVES=callbacks)
#   net8, net9   KnownHeap published self-contained for .NET 8 or 9 (their
#                runtime packs restored from NuGet), run through its apphost
# Each records KnownHeap twice, with a small gen0 budget (DOTNET_GCgen0size)
# so that its garbage makes many compacting GCs and promotions 0 -> 1 -> 2:
#   - with --dump-on major, stopped after its GC.Collect() while
#     `dotnet-gcdump collect` makes the runtime run a full GC of its own,
#     which the recorder dumps too: the counts of both dumps, the gcdump
#     report against the second, retained sizes, roots, history; and the
#     fields of the references (../check-fields.py);
#   - with --allocations: the allocations, the history of Tracked from its
#     birth, the GC figures, and the exit status (7) passed through.
# Exits 77 (skipped) without dotnet or python3, or when KnownHeap could not
# be built (for net8 and net9: its runtime packs did not restore, named).
#
# Under AddressSanitizer (HT_SANITIZE names it; HT_CC is the compiler) the
# recorder is instrumented and the runtime is not: the sanitizer's runtime
# is then preloaded into the program alone, through a wrapper (a `dotnet`
# first on PATH, or the apphost moved aside behind a script of its name),
# since it must come first in the process.
set -u
# a program that died does not take this script with it when it is told
# to go on
trap '' PIPE
if [ $# -ne 5 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR KNOWNHEAP_STAMP WORK_DIR FLAVOUR" >&2
	exit 2
fi
heaptrace=$1 src=$2 stamp=$3 work=$4 flavour=$5
n=1000 depth=10 leaves=100 garbage=300000
status=0

. "$src/../../lib.sh"
need_tools dotnet python3
rm -rf "$work"
mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd -P)
# NuGet's packages for net8 and net9, kept from run to run and shared by
# the tests (NuGet locks what it extracts there)
dotnet_dir=$(dirname "$work")
. "$src/dotnet-env.sh"
started=$(date +%s)

# the program and how to run it
case $flavour in
workstation|server|callbacks)
	[ -f "$stamp" ] || { echo "SKIP: KnownHeap.dll was not built"; exit 77; }
	set -- dotnet "$(cat "$stamp")"
	# the moves from COR_PRF_MONITOR_GC's callbacks, the recorder's other
	# source (src/recorders/clr/gc_events.c), under workstation GC
	[ "$flavour" = callbacks ] && export HEAPTRACE_CLR_MOVES=callbacks
	;;
net8|net9)
	tfm=${flavour#net}.0
	mkdir -p "$work/src"
	cp "$src/KnownHeap.cs" "$src/KnownHeap.csproj" "$work/src/"
	if ! dotnet_publish_for "net$tfm" "$work/src" "$work/app" \
		>"$work/publish.log" 2>&1; then
		missing=$(grep -o "Unable to find package [^ ]*\( with version [^ ]*\)\?\|NU1[0-9]*: [^[]*" \
			"$work/publish.log" | sort -u | head -3 | tr '\n' ' ')
		echo "SKIP: KnownHeap for net$tfm did not publish self-contained:" \
			"${missing:-$(tail -3 "$work/publish.log" | tr '\n' ' ')}"
		exit 77
	fi
	set -- "$work/app/KnownHeap"
	;;
*)
	echo "usage: $0: FLAVOUR is workstation, server, callbacks, net8 or net9" >&2
	exit 2
	;;
esac
# The sanitizer runtime the recorder needs loaded first, if it needs one.
sanitizer_runtime() {
	case ${HT_SANITIZE:-none} in
	*address*) ;;
	*) return 0 ;;
	esac
	recorder=$(dirname "$heaptrace")/../recorders/clr/libheaptrace-clr.so
	lib=$(ldd "$recorder" 2>/dev/null | awk '/libasan|libclang_rt.asan/ { print $3 }')
	[ -n "$lib" ] || lib=$(${HT_CC:-cc} -print-file-name=libclang_rt.asan-x86_64.so)
	echo "$lib"
}

# wrap REAL WRAPPER: a script WRAPPER that runs REAL with the sanitizer's
# runtime preloaded (the runtime handles SIGSEGV and friends itself, and
# keeps what it allocates until exit).
wrap() {
	cat >"$2" <<WRAPPER
#!/bin/sh
LD_PRELOAD=$runtime\${LD_PRELOAD:+:\$LD_PRELOAD} \\
ASAN_OPTIONS=\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:allow_user_segv_handler=1 \\
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \\
exec "$1" "\$@"
WRAPPER
	chmod +x "$2"
}

runtime=$(sanitizer_runtime)
if [ -n "$runtime" ]; then
	[ -f "$runtime" ] ||
		{ echo "SKIP: sanitizer build, no runtime '$runtime' to preload"; exit 77; }
	case $1 in
	dotnet)
		mkdir -p "$work/bin"
		wrap "$(command -v dotnet)" "$work/bin/dotnet"
		PATH=$work/bin:$PATH ;;
	*)
		mv "$1" "$1.real"
		wrap "$1.real" "$1" ;;
	esac
	echo "note: the program runs with $runtime preloaded"
fi
export DOTNET_GCgen0size=0x40000
if [ "$flavour" = server ]; then
	export DOTNET_gcServer=1 DOTNET_GCHeapCount=2
fi
echo "note: $flavour: $*"

gcdump=$(dotnet_tool dotnet-gcdump)
[ -n "$gcdump" ] ||
	echo "note: no dotnet-gcdump (sh tools/install-deps.sh --tests installs it): the comparison with it is not made"

# ---- dumps at major GCs; dotnet-gcdump's full GC at the paused point -------
trace=$work/major.ht
mkfifo "$work/stdin" || exit 1
"$heaptrace" record -q --dump-on major -o "$trace" -- "$@" \
	$n $depth $leaves $garbage 0 wait \
	<"$work/stdin" >"$work/major.out" 2>"$work/major.err" &
record=$!
exec 3>"$work/stdin"
report=
if wait_ready "$work/major.out" 1 $record; then
	pid=$(awk '/^ready/ { print $2 }' "$work/major.out")
	if [ -n "$gcdump" ]; then
		if gcdump_report "$gcdump" "$pid" "$work" 120; then
			report=$work/gcdump.txt
		else
			fail "$flavour: dotnet-gcdump: $(cat "$work/gcdump.log")"
		fi
	fi
else
	fail "$flavour: KnownHeap did not get ready under heaptrace record: $(cat "$work/major.err")"
fi
echo go >&3
exec 3>&-
wait $record
rc=$?
[ $rc -eq 0 ] || fail "$flavour: heaptrace record exited $rc: $(cat "$work/major.err")"
gc=workstation
[ "$flavour" = server ] && gc=server
runtime=$(awk '/^runtime/ { print $2, $3 }' "$work/major.out")
case $flavour in net*) want=${flavour#net}. ;; *) want= ;; esac
case $runtime in
"$want"*" $gc") echo "ok: $flavour: runs on .NET $runtime GC" ;;
*) fail "$flavour: KnownHeap ran on '$runtime', not .NET $want* with $gc GC" ;;
esac
if [ -s "$trace" ]; then
	python3 "$src/check-clr.py" --label "$flavour, major" \
		${report:+--gcdump "$report"} "$heaptrace" "$trace" \
		"$work/major.out" $n $depth $leaves $garbage || status=1
	# each reference tagged with the field it was read from
	python3 "$src/../check-fields.py" --label "$flavour, fields" \
		--list KnownHeap.ListNode --link KnownHeap.ListLink \
		--payload KnownHeap.ListPayload \
		--tree KnownHeap.TreeNode --leaf KnownHeap.Leaf \
		"$heaptrace" "$trace" $n $depth || status=1
else
	fail "$flavour: no trace at $trace"
fi

# ---- every allocation; the exit status passes through ----------------------
trace=$work/alloc.ht
"$heaptrace" record -q --dump-on major --allocations -o "$trace" -- "$@" \
	$n $depth $leaves $garbage 7 >"$work/alloc.out" 2>"$work/alloc.err"
rc=$?
[ $rc -eq 7 ] || fail "$flavour: record --allocations: exit status $rc, not the program's 7: $(cat "$work/alloc.err")"
if [ -s "$trace" ]; then
	python3 "$src/check-clr.py" --label "$flavour, allocations" \
		--allocations "$heaptrace" "$trace" "$work/alloc.out" \
		$n $depth $leaves $garbage || status=1
else
	fail "$flavour: no trace at $trace"
fi

# ---- two runs of one program: diff by path finds nothing new ---------------
# KnownHeap twice with little garbage: objects are matched by their path
# of field names, so the two show no growth; the tail's path ends in
# ListLink.next steps (check-same-run.py), after the step from the static
# root into the head, named by the static field that holds it. The
# strings the frames of Main and Finish hold at exit are the program's own
# words (its counts, its pause time: their digits differ between runs), so
# they may differ in size. The exit dump walks the stacks, so Finish's
# locals are named by thread, whose name (its system id) differs too:
# --allow leaves the thread out, and the frame's file and line. The
# recorder's movement events make the runtime build its managed
# NativeRuntimeEventSource, and the dynamic methods of that work wait for
# their finalizer at the exit dump or not, as the finalizer thread ran;
# its casts fill the runtime's cast cache (CastHelpers.s_table), which is
# grown, or not, as the casts of the run came.
for run in same1 same2; do
	"$heaptrace" record -q --dump-on exit -o "$work/$run.ht" -- "$@" \
		$n $depth $leaves 1000 0 >"$work/$run.out" 2>"$work/$run.err" ||
		fail "$flavour: record $run: exit status $?: $(cat "$work/$run.err")"
done
python3 "$src/../check-same-run.py" --label "$flavour, two runs" \
	--allow "local in KnownHeap.Program.Main > System.String" \
	--allow "local in KnownHeap.Program.Finish > System.String" \
	--allow "finalizer queue > System.Reflection.Emit.DynamicResolver" \
	--allow "static System.Runtime.CompilerServices.CastHelpers.s_table" \
	--list KnownHeap.ListNode --n $n --root "static KnownHeap.Program.head" \
	--step KnownHeap.ListLink.next \
	"$heaptrace" "$work/same1.ht" "$work/same2.ht" || status=1

echo "note: $flavour: $(($(date +%s) - started)) s"
[ $status -eq 0 ] && echo "ok: $flavour: KnownHeap recorded and checked"
exit $status
