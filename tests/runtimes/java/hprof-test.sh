#!/bin/sh
# hprof-test.sh - heaptrace on real Java heap dumps (HPROF).
#
# Runs KnownHeap (see KnownHeap.java) on the machine's JDK and, at the
# point where it waits, takes jcmd GC.class_histogram and jcmd
# GC.heap_dump; check-hprof.py then checks what heaptrace reads from the
# dump against what the program built and against the histogram. The same
# checks run on the dump converted to .ht, whose size is reported next to
# the dump's, and `heaptrace check` must find the dump clean. Then once
# more with 8-byte references (-XX:-UseCompressedOops), which heaptrace
# must tell from the addresses alone, and warn about when told otherwise.
# The first heap is also dumped
# gzipped (jcmd GC.heap_dump -gz=1), which must read, from a file and a
# pipe, as gzip(1)'s decompression of it does, and cut short as a cut
# dump.
#
# usage: hprof-test.sh HEAPTRACE SOURCE_DIR WORK_DIR
# Exits 77 (skipped) without java, javac, jcmd or python3.
set -u

if [ $# -ne 3 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR WORK_DIR" >&2
	exit 2
fi
heaptrace=$1 src=$2 work=$3
n=100000 depth=10 leaves=16 garbage=200000
status=0

. "$(dirname "$0")/../../lib.sh"
need_tools java javac jcmd python3 gzip

rm -rf "$work"
mkdir -p "$work/classes" || exit 1
javac -d "$work/classes" "$src/KnownHeap.java" || {
	echo "FAIL: javac KnownHeap.java" >&2
	exit 1
}

# dump NAME JAVA_OPTIONS...: runs KnownHeap, and at its paused point
# writes NAME.histogram and NAME.hprof (and with again=1, a second dump,
# NAME.again.hprof, and a gzipped one, NAME.hprof.gz).
dump() {
	name=$work/$1
	shift
	rm -f "$work/stdin"
	mkfifo "$work/stdin" || exit 1
	java "$@" -cp "$work/classes" KnownHeap $n $depth $leaves $garbage \
		<"$work/stdin" >"$name.out" 2>"$name.err" &
	pid=$!
	exec 3>"$work/stdin"
	if wait_ready "$name.out"; then
		jcmd $pid GC.class_histogram >"$name.histogram" 2>&1 ||
			fail "jcmd GC.class_histogram: $(cat "$name.histogram")"
		jcmd $pid GC.heap_dump "$name.hprof" >"$name.jcmd" 2>&1 ||
			fail "jcmd GC.heap_dump: $(cat "$name.jcmd")"
		# the same paused heap again, for diff
		[ -z "${again:-}" ] ||
			jcmd $pid GC.heap_dump "$name.again.hprof" \
				>"$name.jcmd" 2>&1 ||
			fail "jcmd GC.heap_dump again: $(cat "$name.jcmd")"
		[ -z "${again:-}" ] ||
			jcmd $pid GC.heap_dump -gz=1 "$name.hprof.gz" \
				>"$name.jcmd" 2>&1 ||
			fail "jcmd GC.heap_dump -gz=1: $(cat "$name.jcmd")"
	else
		fail "KnownHeap did not get ready: $(cat "$name.err")"
	fi
	echo go >&3
	exec 3>&-
	wait $pid || fail "KnownHeap exited $?: $(cat "$name.err")"
	[ -s "$name.hprof" ] || { fail "no heap dump"; return 1; }
}

# checks NAME: the dump, clean, and as .ht.
checks() {
	name=$work/$1
	"$heaptrace" check "$name.hprof" >"$name.check" 2>&1 ||
		fail "heaptrace check $1.hprof: $(cat "$name.check")"
	python3 "$src/check-hprof.py" "$heaptrace" "$name.hprof" \
		"$name.histogram" $n $depth $leaves || fail "$1.hprof"
	"$heaptrace" convert "$name.hprof" -o "$name.ht" ||
		fail "heaptrace convert $1.hprof"
	python3 "$src/check-hprof.py" "$heaptrace" "$name.ht" \
		"$name.histogram" $n $depth $leaves || fail "$1.ht"
	"$heaptrace" stats --format json "$name.hprof" >"$name.stats-hprof" &&
		"$heaptrace" stats --format json "$name.ht" >"$name.stats-ht" &&
		python3 - "$name.stats-hprof" "$name.stats-ht" <<'EOF' || fail "$1: the .ht's stats differ from the .hprof's"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:3])
sys.exit(0 if a["dumps"] == b["dumps"] else 1)
EOF
	hprof_size=$(wc -c <"$name.hprof")
	ht_size=$(wc -c <"$name.ht")
	echo "$1: .hprof $hprof_size bytes, .ht $ht_size bytes" \
		"($(awk "BEGIN { printf \"%.1f\", $hprof_size / $ht_size }")x smaller)"
}

# gzipped NAME: NAME.hprof.gz, read through zlib, checked as a dump, and
# read as the same bytes decompressed by gzip(1) and piped in; its first
# half is a dump cut short, which check finds damaged.
gzipped() {
	name=$work/$1
	[ -s "$name.hprof.gz" ] || { fail "no gzipped heap dump"; return; }
	"$heaptrace" check "$name.hprof.gz" >"$name.gz.check" 2>&1 ||
		fail "heaptrace check $1.hprof.gz: $(cat "$name.gz.check")"
	python3 "$src/check-hprof.py" "$heaptrace" "$name.hprof.gz" \
		"$name.histogram" $n $depth $leaves || fail "$1.hprof.gz"
	"$heaptrace" cat "$name.hprof.gz" >"$name.gz.cat" ||
		fail "heaptrace cat $1.hprof.gz"
	gzip -dc "$name.hprof.gz" | "$heaptrace" cat - >"$name.gunzip.cat" ||
		fail "gzip -dc $1.hprof.gz | heaptrace cat -"
	cmp -s "$name.gz.cat" "$name.gunzip.cat" ||
		fail "$1.hprof.gz reads otherwise than gzip -dc's bytes"
	"$heaptrace" cat - <"$name.hprof.gz" | cmp -s - "$name.gz.cat" ||
		fail "$1.hprof.gz on standard input reads otherwise"
	cat "$name.hprof.gz" | "$heaptrace" cat - | cmp -s - "$name.gz.cat" ||
		fail "$1.hprof.gz through a pipe reads otherwise"
	head -c $(($(wc -c <"$name.hprof.gz") / 2)) "$name.hprof.gz" \
		>"$name.cut.hprof.gz"
	"$heaptrace" check "$name.cut.hprof.gz" >"$name.cut.check" 2>&1
	rc=$?
	[ $rc -eq 1 ] && grep -q 'file ends inside' "$name.cut.check" ||
		fail "half of $1.hprof.gz: check exits $rc: $(cat "$name.cut.check")"
	gz_size=$(wc -c <"$name.hprof.gz")
	echo "$1: .hprof.gz $gz_size bytes (jcmd -gz=1)"
}

# layout NAME: the object layout heaptrace read NAME.hprof with.
layout() {
	"$heaptrace" cat "$work/$1.hprof" 2>/dev/null | sed -n 's/^  object_layout: //p;/^events:/q'
}

again=1 dump known && checks known && gzipped known
# two dumps of one paused process: diff, matching objects by their path of
# field names, finds nothing new; the tail's path reads as the static
# field KnownHeap.head, then KnownHeap$Node.next steps (check-same-run.py)
python3 "$src/../check-same-run.py" --label "two dumps of one process" \
	--list 'KnownHeap$Node' --n $n --root "static KnownHeap.head" \
	--step 'KnownHeap$Node.next' "$heaptrace" "$work/known.hprof" \
	"$work/known.again.hprof" || fail "two dumps of one process differ"
[ "$(layout known)" = compressed-oops ] ||
	fail "known.hprof: read as $(layout known), not compressed-oops"

dump wide -XX:-UseCompressedOops && checks wide
[ "$(layout wide)" = wide-oops ] ||
	fail "wide.hprof: read as $(layout wide), not wide-oops"
# compressed oops forced on it: the sizes follow the option, and one
# warning says what the addresses show
"$heaptrace" top -n 1 --hprof-compressed-oops yes "$work/wide.hprof" \
	>/dev/null 2>"$work/wide.forced"
[ "$(grep -c "contradicts the dump's addresses: they fit wide-oops" \
	"$work/wide.forced")" = 1 ] ||
	fail "wide.hprof read with compressed oops: $(cat "$work/wide.forced")"

[ $status -eq 0 ] && echo "ok: KnownHeap's heap dumps read and checked, $n nodes"
exit $status
