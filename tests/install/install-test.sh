#!/bin/sh
# install-test.sh BUILD_DIR SOURCE_DIR - `meson install` into a staging
# directory puts the binary, the shared library, its pkg-config file, the
# headers and the man pages in place; a tiny profiler then builds against
# the installed library through pkg-config and records a trace that the
# installed heaptrace reads back clean.
set -eu
build=$1 src=$2
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

meson install -C "$build" --no-rebuild --quiet --destdir "$stage" >/dev/null
pc=$(find "$stage" -name libheaptrace.pc)
[ -n "$pc" ] || { echo "no libheaptrace.pc installed"; exit 1; }
bin=$(find "$stage" -path '*/bin/heaptrace')
for f in heaptrace.1 heaptrace.5 libheaptrace.3 trace.h record.h; do
	find "$stage" -name "$f*" | grep -q . || { echo "$f not installed"; exit 1; }
done

# The .pc file names the prefix it was configured for; the staged copy
# lives under $stage, so that prefix is redefined to point there.
prefix=$(sed -n 's/^prefix=//p' "$pc")
export PKG_CONFIG_PATH="$(dirname "$pc")"
flags=$(pkg-config --define-variable=prefix="$stage$prefix" --cflags --libs libheaptrace)
libdir=$(pkg-config --define-variable=prefix="$stage$prefix" --variable=libdir libheaptrace)
# shellcheck disable=SC2086
cc -Wall -Werror -o "$stage/tiny_profiler" "$src/tests/install/tiny_profiler.c" $flags
LD_LIBRARY_PATH=$libdir "$stage/tiny_profiler" "$stage/tiny.ht"
LD_LIBRARY_PATH=$libdir "$bin" check "$stage/tiny.ht"
LD_LIBRARY_PATH=$libdir "$bin" cat "$stage/tiny.ht" >"$stage/tiny.yaml"
diff -u "$src/tests/install/tiny.expected.yaml" "$stage/tiny.yaml"
# only the ht_* API is exported
if nm -D --defined-only "$(find "$stage" -name 'libheaptrace.so.*.*' | head -1)" |
	awk '$2 ~ /^[TDB]$/ {print $3}' | grep -v '^ht_' | grep .; then
	echo "symbols above are exported but are not the ht_ API"
	exit 1
fi
echo "install test passed"
