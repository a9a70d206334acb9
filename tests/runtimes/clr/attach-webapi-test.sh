#!/bin/sh
# attach-webapi-test.sh - `heaptrace record --pid` on a real service nobody
# here wrote: the SDK's ASP.NET Core `webapi` template (made without
# OpenAPI, which needs no package, and built offline), serving 20,500
# loopback requests on 8 connections (../http-load.py) from the attach on,
# while dotnet-gcdump collects (a full GC the recorder dumps too) and the
# recorder detaches at its duration's end.
#
# usage: attach-webapi-test.sh HEAPTRACE SOURCE_DIR WORK_DIR
#
# Checks (attach-webapi-check.py): the trace clean, with 0 relocation
# inconsistencies, attached, two dumps at least; the dump of dotnet-gcdump's
# GC against its report, type by type; every request answered; the service
# serving on after the detach. Exits 77 without dotnet, python3 or curl,
# or when the template does not build offline (said).
set -u
trap '' PIPE
if [ $# -ne 3 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR WORK_DIR" >&2
	exit 2
fi
heaptrace=$1 src=$2 work=$3
status=0

. "$src/../../lib.sh"
need_tools dotnet python3 curl
rm -rf "$work"
mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd -P)
dotnet_dir=$work
. "$src/dotnet-env.sh"
started=$(date +%s)

if ! (cd "$work" && dotnet new webapi --no-openapi -o webapi-src -n webapi) \
	>"$work/build.log" 2>&1 ||
	! dotnet_build "$work/webapi-src" "$work/webapi" >>"$work/build.log" 2>&1; then
	echo "SKIP: the webapi template did not build offline: $(tail -3 "$work/build.log" | tr '\n' ' ')"
	exit 77
fi

runtime=$(sanitizer_runtime "$heaptrace")
if [ -n "$runtime" ]; then
	sanitized_dotnet "$runtime" "$work" signals
	echo "note: the service runs with $runtime preloaded"
fi
gcdump=$(dotnet_tool dotnet-gcdump)
[ -n "$gcdump" ] ||
	echo "note: no dotnet-gcdump (sh tools/install-deps.sh --tests installs it): the comparison with it is not made"

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
url=http://127.0.0.1:$port/weatherforecast
ASPNETCORE_URLS=http://127.0.0.1:$port ASPNETCORE_CONTENTROOT=$work/webapi \
	dotnet "$work/webapi/webapi.dll" >"$work/service.out" 2>"$work/service.err" &
svc=$!
if ! wait_lines "$work/service.out" "Now listening on" 1 $svc; then
	fail "the webapi did not start: $(cat "$work/service.err")"
	kill $svc 2>/dev/null
	exit 1
fi
trace=$work/attached.ht
"$heaptrace" record --pid $svc --duration 12 -o "$trace" \
	>"$work/record.out" 2>"$work/record.err" &
record=$!
report=
if wait_lines "$work/record.err" "^heaptrace record: attached to process $svc" 1 $record; then
	echo "ok: attached to the webapi"
	python3 "$src/../http-load.py" "$port" /weatherforecast 20500 8 \
		>"$work/load.out" 2>&1 &
	load=$!
	sleep 2
	if [ -n "$gcdump" ]; then
		if gcdump_report "$gcdump" "$svc" "$work" 60; then
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
if [ -z "${load:-}" ]; then
	:
elif wait $load; then
	echo "ok: the webapi answered the load: $(cat "$work/load.out")"
else
	fail "the load: $(cat "$work/load.out")"
fi
code=$(curl -s -o /dev/null -w '%{http_code}' -m 10 "$url")
[ "$code" = 200 ] && echo "ok: the webapi serves on after the detach" ||
	fail "the webapi after the detach: HTTP status '$code'"
kill -TERM $svc
wait $svc
if [ -s "$trace" ]; then
	python3 "$src/attach-webapi-check.py" ${report:+--gcdump "$report"} \
		"$heaptrace" "$trace" || status=1
else
	fail "no trace at $trace"
fi
echo "note: $(($(date +%s) - started)) s"
exit $status
