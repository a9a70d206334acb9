#!/bin/sh
# genheap-check.sh - ht-genheap's output is a sound trace: a small heap in
# three growing dumps must pass `heaptrace check`.
#
# usage: genheap-check.sh GENHEAP HEAPTRACE WORK_DIR
set -eu

genheap=$1 heaptrace=$2 dir=$3
trace=$dir/genheap-check.ht

mkdir -p "$dir"
"$genheap" -n 20000 -s 7 --dumps 3 -o "$trace"
"$heaptrace" check "$trace"
