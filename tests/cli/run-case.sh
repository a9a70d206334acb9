#!/bin/sh
# run-case.sh CASE_DIR - one command-level test: runs CASE_DIR/cmd with
# `heaptrace` on the PATH and testdata/ as the working directory, and
# compares its standard output with CASE_DIR/stdout, its exit status with
# CASE_DIR/status (0 when absent) and, when CASE_DIR/stderr exists, its
# standard error too. $TMP is a fresh directory for files the case writes.
set -u
case_dir=$1
: "${HEAPTRACE:?HEAPTRACE must name the heaptrace binary}"
: "${HT_TESTDATA:?HT_TESTDATA must name testdata/}"

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
export TMP
bindir=$TMP/bin
mkdir "$bindir"
ln -s "$HEAPTRACE" "$bindir/heaptrace"
export PATH="$bindir:$PATH"

cd "$HT_TESTDATA" || exit 99
sh -e "$case_dir/cmd" >"$TMP/stdout" 2>"$TMP/stderr"
status=$?
want_status=0
[ -f "$case_dir/status" ] && want_status=$(cat "$case_dir/status")

fail=0
if [ "$status" != "$want_status" ]; then
	echo "exit status $status, expected $want_status"
	fail=1
fi
if ! diff -u "$case_dir/stdout" "$TMP/stdout"; then
	echo "standard output differs (above: expected, actual)"
	fail=1
fi
if [ -f "$case_dir/stderr" ] && ! diff -u "$case_dir/stderr" "$TMP/stderr"; then
	echo "standard error differs (above: expected, actual)"
	fail=1
fi
if [ $fail = 1 ]; then
	echo "--- stderr was:"
	cat "$TMP/stderr"
fi
exit $fail
