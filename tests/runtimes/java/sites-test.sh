#!/bin/sh
# sites-test.sh - the JVM recorder's allocation sites (record --sites)
# against a program that knows its own.
#
# KnownSites (KnownSites.java) allocates at three lines: arrays it keeps
# to the end, arrays it drops at once, and arrays it holds through a few
# System.gc()s and then drops. check-sites.py reads the trace with
# `heaptrace cat`: with --sites=all, each site's allocations must be
# exactly those the program made, of the sizes it made, the kept ones in
# the exit dump under the same ids and the dropped ones not; at JVMTI's
# default interval, each site's upscaled count must be within 4 sigma of
# the truth (a false failure about once in 10,000 runs a site). These
# two runs dump at exit only: a dump's walk that meets an object before
# its sample is recorded leaves the sample out (sites.c), which would make
# the exact counts inexact. A third run dumps after every GC: the arrays
# held through the System.gc()s must be in the dumps under the ids their
# allocations had, then in none.
#
# usage: sites-test.sh HEAPTRACE SOURCE_DIR WORK_DIR
# Exits 77 (skipped) without java, javac or python3. Under
# AddressSanitizer the JVM runs through a wrapper (java-wrapper.sh). About
# 10 s alone.
set -u

if [ $# -ne 3 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR WORK_DIR" >&2
	exit 2
fi
heaptrace=$1 src=$2 work=$3
status=0

. "$(dirname "$0")/../../lib.sh"
need_tools java javac python3

. "$(dirname "$0")/java-wrapper.sh"
java_setup "$heaptrace" "$src" KnownSites.java

# run NAME SITES KEPT CHURNED OLD [WHEN]: KnownSites recorded with
# --SITES and dumps at WHEN (exit) into $work/NAME.ht, its output in
# $work/NAME.out
run() {
	"$heaptrace" record -q -o "$work/$1.ht" --dump-on "${6:-exit}" "--$2" -- \
		"$java" -Xmx384m -cp "$work/classes" KnownSites "$3" "$4" "$5" 3 \
		>"$work/$1.out" 2>"$work/$1.err" ||
		fail "heaptrace record --$2 exited $?: $(cat "$work/$1.err")"
	grep -q '^done' "$work/$1.out" || fail "KnownSites did not finish ($1)"
}

run all sites=all 20000 100000 2000
python3 "$src/check-sites.py" "$heaptrace" "$work/all.ht" \
	"$src/KnownSites.java" "$work/all.out" all ||
	fail "sites of KnownSites, every allocation recorded"

# enough arrays for about 100 samples at the smallest site
run sampled sites 50000 2000000 20000
python3 "$src/check-sites.py" "$heaptrace" "$work/sampled.ht" \
	"$src/KnownSites.java" "$work/sampled.out" sampled ||
	fail "sites of KnownSites, sampled at the default interval"

run gcs sites=all 5000 30000 2000 every-gc
python3 "$src/check-sites.py" "$heaptrace" "$work/gcs.ht" \
	"$src/KnownSites.java" "$work/gcs.out" gcs ||
	fail "sites of KnownSites, with a dump after every GC"

[ $status -eq 0 ] && echo "ok: allocation sites of KnownSites: all, sampled, dumped after GCs"
exit $status
