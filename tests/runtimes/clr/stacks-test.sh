#!/bin/sh
# stacks-test.sh HEAPTRACE MODULE SRCDIR BUILDDIR [SANITIZER_RUNTIME] -
# which thread holds a local, on a real .NET runtime: records Parked.cs
# (three named threads parked in Holder.Park, each with a local list of
# 100, 200 or 300 arrays of 1 KiB) with a dump on SIGUSR1, and checks that
# the trace is clean, that `threads` lists each parker by name with its
# Holder.Park frame holding its list and retaining at least the list's
# arrays, that the frame's method is Holder.Park at Parked.cs line N (its
# method event gives the file and line apart), N the line where Parked.cs
# parks the thread (from Parked.pdb), while the runtime's own frames,
# which have no PDB beside them, are named by method alone, and
# that `paths` to each list names the thread that holds it.
# Exits 77 (skipped) where dotnet, the module or jq is missing; in a
# sanitizer build dotnet runs with SANITIZER_RUNTIME preloaded, as in
# clr-test.sh.
set -u
heaptrace=$1 module=$2 src=$3 build=$4 sanitizer=${5:-}
command -v dotnet >/dev/null || { echo "SKIP: dotnet is not installed"; exit 77; }
command -v jq >/dev/null || { echo "SKIP: jq is not installed"; exit 77; }
[ -f "$module" ] || { echo "SKIP: the CLR recorder was not built"; exit 77; }

unset HEAPTRACE_RECORDER_DIR
dotnet_dir=$build
. "$src/dotnet-env.sh"
program_build Parked "$src" "$build" || exit 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -n "$sanitizer" ]; then
	sanitized_dotnet "$sanitizer" "$work"
fi
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
ok() { echo "ok: $*"; }

t=$work/parked.ht
HEAPTRACE_VERBOSE=1 "$heaptrace" record -q -o "$t" --dump-on signal -- \
	dotnet "$build/out/Parked.dll" >"$work/out" 2>"$work/err" ||
	fail "record: $(cat "$work/err")"
grep -q "dumped True" "$work/out" && ok "the program saw its dump" ||
	fail "the program saw no dump: $(cat "$work/out")"
# the signal's dump and the exit's, each with every stack walked whole
grep -q "stacks: 2 snapshots, 0 not whole" "$work/err" &&
	ok "$(grep -o 'stacks: .*' "$work/err")" ||
	fail "the snapshots: $(grep 'stacks:' "$work/err")"
"$heaptrace" check "$t" >"$work/check" && ok "the trace is clean" ||
	{ fail "the trace is not clean"; tail -5 "$work/check"; }
"$heaptrace" threads "$t" >"$work/threads.txt" 2>&1
"$heaptrace" threads --dump 0 --format json "$t" >"$work/threads.json" ||
	fail "threads --format json: $(cat "$work/threads.json")"
# the runtime's own PDBs, which some installations have beside it
dotnet_root=$(dirname "$(readlink -f "$(command -v dotnet)")")
corelib_pdb=$(ls "$dotnet_root"/shared/Microsoft.NETCore.App/*/System.Private.CoreLib.pdb 2>/dev/null | head -1)
# the line where a parker waits, from the source
park_line=$(grep -n 'Release\.Wait();' "$src/Parked.cs" | cut -d: -f1)
[ -f "$build/out/Parked.pdb" ] && ok "the SDK wrote Parked.pdb" ||
	fail "no Parked.pdb beside Parked.dll"
# the place of the parkers' frame: the method, the file and line apart
"$heaptrace" cat "$t" >"$work/trace.yaml"
grep -q "method: {id: 0x[0-9a-f]*, name: Holder.Park, file: Parked.cs, line: $park_line}" \
	"$work/trace.yaml" &&
	ok "Holder.Park is named at Parked.cs:$park_line" ||
	fail "no method event names Holder.Park at Parked.cs:$park_line: $(grep 'Holder.Park' "$work/trace.yaml")"
for i in 1 2 3; do
	n=$((i * 100))
	frame=$(jq -r --arg name "parker-$i" '.threads[] | select(.name == $name)
		| .frames[] | select(.method | test("Holder.Park")) | .method' \
		"$work/threads.json" | head -1)
	# Holder.Park, or Holder.Park(Parked.cs:N) where threads shows
	# the method event's file and line
	case $frame in
	Holder.Park | "Holder.Park(Parked.cs:$park_line)")
		ok "parker-$i is at $frame" ;;
	*)
		fail "parker-$i's frame reads '$frame', not Holder.Park" ;;
	esac
	wait_frame=$(jq -r --arg name "parker-$i" '.threads[] | select(.name == $name)
		| .frames[0].method' "$work/threads.json")
	if [ -n "$corelib_pdb" ]; then
		ok "parker-$i's top frame is $wait_frame (the runtime has PDBs)"
	elif echo "$wait_frame" | grep -q '^System\.Threading\.[^()]*$'; then
		ok "parker-$i's top frame, $wait_frame, has no PDB: by method alone"
	else
		fail "parker-$i's top frame reads '$wait_frame'"
	fi
	# the parker, its Holder.Park frame, the list in it
	list=$(jq -r --arg name "parker-$i" '.threads[] | select(.name == $name)
		| .frames[] | select(.method | test("Holder.Park"))
		| .locals[] | select(.class | test("List<System.Byte\\[\\]>")) | .id' \
		"$work/threads.json" | head -1)
	if [ -z "$list" ]; then
		fail "parker-$i: no Holder.Park frame holding a List<System.Byte[]>"
		continue
	fi
	ok "parker-$i: Holder.Park holds list $list"
	retained=$(jq --arg name "parker-$i" '.threads[] | select(.name == $name) | .retained' \
		"$work/threads.json")
	[ "$retained" -ge $((n * 1024)) ] &&
		ok "parker-$i retains $retained B, at least $n KiB" ||
		fail "parker-$i retains $retained B, less than $n KiB"
	"$heaptrace" paths --dump 0 --to "$list" "$t" >"$work/paths" 2>&1
	grep -q "Holder.Park.* on thread \"parker-$i\"" "$work/paths" &&
		ok "paths to parker-$i's list name its thread" ||
		{ fail "paths to parker-$i's list do not name its thread"; cat "$work/paths"; }
done
if [ "$failures" -ne 0 ]; then
	cat "$work/threads.txt"
	exit 1
fi
exit 0
