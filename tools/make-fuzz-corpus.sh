#!/bin/sh
# make-fuzz-corpus.sh BUILD_DIR - rewrites the seed corpora of the fuzz
# targets (tests/fuzz/corpus/TARGET/) from testdata/: the YAML traces as
# they are, each converted to .ht by BUILD_DIR's heaptrace, a trace cut
# short and one without its index, two small synthetic heaps, and small
# HPROF dumps (tests/fuzz/make-hprof-seeds.py). Seeds are
# kept small (libFuzzer mutates inputs of a few KiB best): the whole corpus
# stays well under 2 MB.
set -eu
build=$(cd "$1" && pwd)
root=$(cd "$(dirname "$0")/.." && pwd)
heaptrace=$build/src/cli/heaptrace
genheap=$build/src/tools/ht-genheap
corpus=$root/tests/fuzz/corpus
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rm -f "$corpus"/ht/* "$corpus"/yaml/* "$corpus"/replay/* "$corpus"/hprof/*
python3 "$root/tests/fuzz/make-hprof-seeds.py" "$corpus/hprof"
cd "$root/testdata"
for y in *.yaml analysis/*.yaml protocol/*.yaml; do
	name=$(echo "${y%.yaml}" | tr / -)
	cp "$y" "$corpus/yaml/$name.yaml"
	# a trace that breaks the protocol converts, recorded as is; one with
	# a value the recorder refuses does not
	"$heaptrace" convert "$y" -o "$corpus/ht/$name.ht" 2>/dev/null ||
		rm -f "$corpus/ht/$name.ht"
done

# the damage the reader must survive, as starting points: a trace cut in
# its last chunk, and one whose writer died before the index
"$heaptrace" convert clr-gc.yaml -o "$tmp/full.ht"
size=$(wc -c <"$tmp/full.ht")
head -c $((size - 40)) "$tmp/full.ht" >"$corpus/ht/cut-clr-gc.ht"
# the trailer's first 8 bytes say where the index chunk starts: the file
# up to there reads as a recording whose writer died
"$genheap" -n 40 -r 2 -s 3 -o "$corpus/ht/genheap-40.ht" >/dev/null 2>&1
size=$(wc -c <"$tmp/full.ht")
index=$(od -An -t u8 -j $((size - 16)) -N 8 "$tmp/full.ht" | tr -d ' ')
head -c "$index" "$tmp/full.ht" >"$corpus/ht/no-index-clr-gc.ht"
"$genheap" -n 150 -r 3 -s 7 --dumps 2 -o "$corpus/ht/genheap-150x2.ht" \
	>/dev/null 2>&1

# the replay takes both forms: a few of each
cp "$corpus"/yaml/analysis-*.yaml "$corpus"/yaml/relocation.yaml \
	"$corpus"/yaml/clr-gc.yaml "$corpus"/yaml/msvm-dump.yaml \
	"$corpus"/yaml/protocol-continuation-*.yaml "$corpus/replay/"
cp "$corpus"/ht/genheap-*.ht "$corpus"/ht/cut-clr-gc.ht \
	"$corpus"/ht/analysis-diamond.ht "$corpus"/ht/analysis-clr-weak.ht \
	"$corpus"/ht/analysis-gc-times.ht \
	"$corpus"/hprof/segments-id4.hprof "$corpus"/hprof/two-dumps.hprof \
	"$corpus/replay/"
du -sh "$corpus"
