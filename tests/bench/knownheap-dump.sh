#!/bin/sh
# knownheap-dump.sh - the heap dump of KnownHeap that the HPROF benchmarks
# read, made once and kept in CACHE_DIR as knownheap-N.hprof.
#
# KnownHeap (tests/runtimes/java/KnownHeap.java) with a list of N nodes and
# a tree of 131071, dumped at its paused point with jcmd GC.heap_dump. A
# list of 10 million nodes needs a JVM heap of about 1 GB, which the JVM's
# default (a quarter of the memory) gives on any machine that can read the
# dump afterwards. Prints the dump's path; exits 1 when it cannot be made.
#
# usage: knownheap-dump.sh JAVA_SRC_DIR CACHE_DIR N
set -u

if [ $# -ne 3 ]; then
	echo "usage: $0 JAVA_SRC_DIR CACHE_DIR N" >&2
	exit 2
fi
java_src=$1 cache=$2 n=$3
depth=17 leaves=16 garbage=1000000
dump=$cache/knownheap-$n.hprof

make_dump() {
	mkdir -p "$cache/classes" || exit 1
	javac -d "$cache/classes" "$java_src/KnownHeap.java" || exit 1
	rm -f "$cache/stdin" "$dump.tmp"
	mkfifo "$cache/stdin" || exit 1
	java -cp "$cache/classes" KnownHeap "$n" $depth $leaves $garbage \
		<"$cache/stdin" >"$cache/known.out" 2>&1 &
	pid=$!
	exec 3>"$cache/stdin"
	i=0
	while ! grep -q '^ready' "$cache/known.out" 2>/dev/null; do
		i=$((i + 1))
		[ $i -le 1200 ] || { echo "KnownHeap did not get ready" >&2; exit 1; }
		sleep 0.1
	done
	jcmd $pid GC.heap_dump "$dump.tmp" >/dev/null || exit 1
	echo go >&3
	exec 3>&-
	wait $pid
	mv "$dump.tmp" "$dump" || exit 1
}

[ -f "$dump" ] || make_dump >&2
echo "$dump"
