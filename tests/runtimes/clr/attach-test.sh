#!/bin/sh
# attach-test.sh - `heaptrace record --pid` on a running .NET service: the
# CoreCLR profiler attached through the runtime's diagnostics IPC, dumps on
# request, detached at the end, and the refusals that need a runtime.
#
# usage: attach-test.sh HEAPTRACE SOURCE_DIR SERVICE_STAMP WORK_DIR
#
# attach-service.cs, built once by build-program.sh (SERVICE_STAMP names the
# DLL), is started bare and serves loopback HTTP requests while a client loads it. record
# --pid attaches to it with a duration; while it records, a second record
# --pid is refused (the runtime takes one profiler), SIGUSR1 to record asks
# for a dump, and `dotnet-gcdump collect` makes the runtime run a full GC of
# its own, which the recorder dumps too (--dump-on major); the duration's
# end takes the last dump and detaches. Then: record exits 0 and says the
# profiler detached; the service still answers, and can be attached again;
# the trace is clean, attached, each dump holds the service's known
# objects with their field names, and the dump of dotnet-gcdump's GC
# agrees with its report (attach-check.py). Last, a service started with
# DOTNET_EnableDiagnostics=0 is refused, by that name.
# Exits 77 (skipped) without dotnet, python3 or curl, or when the service
# was not built.
#
# Under AddressSanitizer (HT_SANITIZE names it; HT_CC is the compiler) the
# profiler is instrumented and the runtime is not: the sanitizer's runtime
# is then preloaded into the service, started through dotnet-env.sh's
# `dotnet` wrapper (sanitized_dotnet), since it must come first in the
# process; the runtime handles its signals itself.
set -u
trap '' PIPE
if [ $# -ne 4 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR SERVICE_STAMP WORK_DIR" >&2
	exit 2
fi
heaptrace=$1 src=$2 stamp=$3 work=$4
n=2000
status=0

. "$src/../../lib.sh"
need_tools dotnet python3 curl
rm -rf "$work"
mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd -P)
dotnet_dir=$work
. "$src/dotnet-env.sh"
started=$(date +%s)
[ -f "$stamp" ] || { echo "SKIP: AttachService.dll was not built"; exit 77; }
service=$(cat "$stamp")

runtime=$(sanitizer_runtime "$heaptrace")
if [ -n "$runtime" ]; then
	sanitized_dotnet "$runtime" "$work" signals
	echo "note: the service runs with $runtime preloaded"
fi

# has FILE WHAT TEXT: FILE holds the line TEXT
has() {
	grep -qxF "$3" "$1" || { fail "$2: no line '$3' in: $(cat "$1")"; return 1; }
	echo "ok: $2"
}

free_port() {
	python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start NAME [ENV...]: starts the service (its pid in $svc, its port in
# $port), and waits for it to listen
start() {
	port=$(free_port)
	name=$1
	shift
	env "$@" dotnet "$service" "$port" $n >"$work/$name.out" 2>"$work/$name.err" &
	svc=$!
	wait_ready "$work/$name.out" 1 $svc ||
		{ fail "$name: the service did not get ready: $(cat "$work/$name.err")"; return 1; }
}

quit() {
	curl -s -m 10 "http://127.0.0.1:$1/quit" >/dev/null
	wait "$2" 2>/dev/null
}

gcdump=$(dotnet_tool dotnet-gcdump)
[ -n "$gcdump" ] ||
	echo "note: no dotnet-gcdump (sh tools/install-deps.sh --tests installs it): the comparison with it is not made"

# ---- attached while a client loads the service -------------------------------
start service || exit 1
pid=$svc
url=http://127.0.0.1:$port/
(
	while [ ! -e "$work/stop-load" ]; do
		curl -s -m 10 "$url" >>"$work/load.out" || echo failed >>"$work/load.failed"
	done
) &
load=$!
trace=$work/attached.ht
"$heaptrace" record --pid $pid --duration 9 -o "$trace" \
	>"$work/record.out" 2>"$work/record.err" &
record=$!
if wait_lines "$work/record.err" "^heaptrace record: attached to process $pid" 1 $record; then
	echo "ok: attached to the service"
	# the runtime takes one profiler at a time
	"$heaptrace" record --pid $pid --duration 1 -o "$work/second.ht" \
		>/dev/null 2>"$work/second.err"
	rc=$?
	[ $rc -eq 3 ] || fail "a second attach: exit status $rc, not 3"
	has "$work/second.err" "a second attach is refused" \
		"heaptrace: cannot attach to process $pid: a profiler is loaded in it already (heaptrace's or another tool's): the runtime takes one at a time (HRESULT 0x8013136a)"
	sleep 1
	kill -USR1 $record
	sleep 2
	report=
	if [ -n "$gcdump" ]; then
		if gcdump_report "$gcdump" "$pid" "$work" 60; then
			report=$work/gcdump.txt
		else
			fail "dotnet-gcdump: $(cat "$work/gcdump.log")"
		fi
	fi
else
	fail "record --pid did not attach: $(cat "$work/record.err")"
fi
wait $record
rc=$?
[ $rc -eq 0 ] || fail "record --pid exited $rc: $(cat "$work/record.err")"
has "$work/record.err" "the profiler says it detached" \
	"heaptrace: clr recorder: detached from process $pid: it runs on unprofiled"
touch "$work/stop-load"
wait $load
served=$(wc -l <"$work/load.out")
[ "$served" -gt 0 ] && [ ! -e "$work/load.failed" ] &&
	echo "ok: the service answered the client's $served requests, none failed" ||
	fail "the client's requests failed: $(wc -l <"$work/load.failed" 2>/dev/null) of $served"
# the runtime releases the profiler once it has detached; whether the
# library leaves the process's memory is the runtime's business (said, not
# checked)
if grep -q libheaptrace-clr "/proc/$pid/maps" 2>/dev/null; then
	echo "note: the profiler's library is still mapped in the service after the detach"
else
	echo "note: the profiler's library is unmapped from the service"
fi
answer=$(curl -s -m 10 "$url")
case $answer in
"accounts $n sessions $((n / 4)) served "*) echo "ok: the service serves on after the detach: $answer" ;;
*) fail "the service does not answer after the detach: '$answer'" ;;
esac
# detached, it can be attached again: a new recording, whole
"$heaptrace" record -q --pid $pid --duration 1 -o "$work/again.ht" \
	>/dev/null 2>"$work/again.err"
rc=$?
if [ $rc -eq 0 ] && "$heaptrace" check "$work/again.ht" >"$work/again.check"; then
	echo "ok: attached again after the detach: $(tail -1 "$work/again.check")"
else
	fail "attached again: exit status $rc: $(cat "$work/again.err" "$work/again.check")"
fi
quit $port $pid
if [ -s "$trace" ]; then
	python3 "$src/attach-check.py" ${report:+--gcdump "$report"} \
		"$heaptrace" "$trace" $n || status=1
else
	fail "no trace at $trace"
fi

# ---- a service whose diagnostics are off ------------------------------------
if start nodiag DOTNET_EnableDiagnostics=0; then
	"$heaptrace" record --pid $svc -o "$work/nodiag.ht" >/dev/null 2>"$work/nodiag.err"
	rc=$?
	[ $rc -eq 3 ] || fail "DOTNET_EnableDiagnostics=0: exit status $rc, not 3"
	has "$work/nodiag.err" "DOTNET_EnableDiagnostics=0 is refused, by name" \
		"heaptrace: cannot attach to process $svc (dotnet): it runs with DOTNET_EnableDiagnostics=0 in its environment, which turns off the runtime's diagnostics, through which the profiler is loaded; start it without to record it with --pid, or record it from its start (heaptrace record -- CMD)"
	[ ! -e "$work/nodiag.ht" ] || fail "DOTNET_EnableDiagnostics=0: a trace was written"
	quit $port $svc
fi

echo "note: $(($(date +%s) - started)) s"
exit $status
