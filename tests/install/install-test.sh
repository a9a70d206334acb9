#!/bin/sh
# install-test.sh BUILD_DIR SOURCE_DIR - `meson install` into a staging
# directory puts the binary, both libraries (the recording shim
# libheaptrace and the readers' libheaptrace-read), their pkg-config files,
# the headers and every man page in place. Then:
#  - the shim, which a runtime loads, needs only zlib and the C library
#    and exports exactly the recording API with the names it shares with
#    the readers: nothing of the readers, the replay or the internals;
#  - libheaptrace-read exports exactly the functions of trace.h;
#  - the recorders built with it ($HT_RECORDERS: file names) need no
#    libyaml, so they carry no reader either;
#  - a tiny profiler builds against the installed libheaptrace through
#    pkg-config and records a trace that the installed heaptrace reads
#    back clean, and a tiny reader builds against libheaptrace-read the
#    same way and replays it.
set -eu
build=$1 src=$2
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT

fail() {
	echo "$*"
	exit 1
}

meson install -C "$build" --no-rebuild --quiet --destdir "$stage" >/dev/null
pc=$(find "$stage" -name libheaptrace.pc)
[ -n "$pc" ] || fail "no libheaptrace.pc installed"
[ -f "$(dirname "$pc")/libheaptrace-read.pc" ] ||
	fail "no libheaptrace-read.pc installed next to libheaptrace.pc"
bin=$(find "$stage" -path '*/bin/heaptrace')
# every man page of the source tree: the overview, heaptrace(5),
# libheaptrace(3) and a page per command (heaptrace-top.1)
for f in "$src"/man/*.[135] trace.h record.h; do
	f=${f##*/}
	find "$stage" -name "$f*" | grep -q . || fail "$f not installed"
done

# The .pc file names the prefix it was configured for; the staged copy
# lives under $stage, so that prefix is redefined to point there.
prefix=$(sed -n 's/^prefix=//p' "$pc")
export PKG_CONFIG_PATH="$(dirname "$pc")"
pkgconf() {
	pkg-config --define-variable=prefix="$stage$prefix" "$@"
}
libdir=$(pkgconf --variable=libdir libheaptrace)
includedir=$(pkgconf --variable=includedir libheaptrace)
shim=$(find "$libdir" -name 'libheaptrace.so.*.*' | head -1)
readlib=$(find "$libdir" -name 'libheaptrace-read.so.*.*' | head -1)
[ -n "$shim" ] || fail "libheaptrace.so not installed in $libdir"
[ -n "$readlib" ] || fail "libheaptrace-read.so not installed in $libdir"

# needed LIB: the libraries LIB names as dynamic dependencies
needed() {
	readelf -d "$1" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p'
}

# exported LIB: the functions and data LIB exports, sorted
exported() {
	nm -D --defined-only "$1" | awk '$2 ~ /^[TDBRViu]$/ {print $3}' |
		sed 's/@.*//' | sort -u
}

# declared HEADER: the functions the installed HEADER (and what it
# includes) declares, sorted; the preprocessor drops the comments
declared() {
	printf '#include <heaptrace/%s>\n' "$1" |
		cc -E -P -I"$includedir" -x c - |
		grep -o '\bht_[a-z0-9_]*[[:space:]]*(' | tr -d '( \t' | sort -u
}

# same WHAT EXPECTED ACTUAL: fails, showing the difference, unless the
# two lists are the same
same() {
	if ! diff -u --label "expected $1" --label "actual $1" "$2" "$3"; then
		fail "$1 differs from what the headers say (above)"
	fi
}

# (a) The shim is loaded into the runtime being profiled: nothing beyond
# zlib and the C library (threads are in libc since glibc 2.34, in
# libpthread before; ld-linux is the loader itself).
needed "$shim" >"$stage/shim.needed"
if grep -Ev '^(libz\.so\.[0-9]+|libc\.so\.[0-9]+|libpthread\.so\.[0-9]+|ld-linux[-a-z0-9_.]*\.so\.[0-9]+)$' \
	"$stage/shim.needed"; then
	fail "libheaptrace.so needs the libraries above; only zlib and libc may be"
fi

# (b) What the shim exports: every function of record.h, and of what it
# includes from trace.h, those of the common part (the names, which
# containers are frames, the violations, the version). The reading API of
# trace.h (ht_reader_*, ht_replay) is libheaptrace-read's alone.
declared record.h | grep -Ev '^ht_(reader_.*|replay)$' >"$stage/shim.expected"
exported "$shim" >"$stage/shim.exported"
same "libheaptrace.so exports" "$stage/shim.expected" "$stage/shim.exported"

# (c) libheaptrace-read exports the functions of trace.h and nothing
# else: no ht_recorder_*, no internal function of the readers.
declared trace.h >"$stage/read.expected"
exported "$readlib" >"$stage/read.exported"
same "libheaptrace-read.so exports" "$stage/read.expected" "$stage/read.exported"

# The recorders link the shim's part statically: a reader in them would
# show as libyaml (or libheaptrace-read) among what they need.
for name in ${HT_RECORDERS:-}; do
	module=$(find "$stage" -name "$name" | head -1)
	[ -n "$module" ] || fail "$name was built but not installed"
	if needed "$module" | grep -E '^lib(yaml|heaptrace-read)'; then
		fail "$name needs the libraries above: it should link only the recording part"
	fi
done

# A profiler, through pkg-config libheaptrace.
# shellcheck disable=SC2046
cc -Wall -Werror -o "$stage/tiny_profiler" "$src/tests/install/tiny_profiler.c" \
	$(pkgconf --cflags --libs libheaptrace)
LD_LIBRARY_PATH=$libdir "$stage/tiny_profiler" "$stage/tiny.ht"
LD_LIBRARY_PATH=$libdir "$bin" check "$stage/tiny.ht"
LD_LIBRARY_PATH=$libdir "$bin" cat "$stage/tiny.ht" >"$stage/tiny.yaml"
diff -u "$src/tests/install/tiny.expected.yaml" "$stage/tiny.yaml"

# A reader, through pkg-config libheaptrace-read: the replay of that trace.
# shellcheck disable=SC2046
cc -Wall -Werror -o "$stage/tiny_reader" "$src/tests/install/tiny_reader.c" \
	$(pkgconf --cflags --libs libheaptrace-read)
needed "$stage/tiny_reader" | grep -qx 'libheaptrace-read\.so\.[0-9]*' ||
	fail "tiny_reader was not linked with libheaptrace-read"
(cd "$stage" && LD_LIBRARY_PATH=$libdir ./tiny_reader tiny.ht) >"$stage/tiny.replay"
diff -u "$src/tests/install/tiny_reader.expected" "$stage/tiny.replay"
echo "install test passed"
