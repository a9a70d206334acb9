# java-wrapper.sh - the `java` the JVM tests run, and the program they run
# compiled; sourced, not run.
#
# java_for_tests HEAPTRACE WORK_DIR: sets $java to the java to run. Under
# AddressSanitizer (HT_SANITIZE names it) the agent is instrumented: the
# JVM must then run with the sanitizer's runtime preloaded, since the
# runtime must come first in the process, so $java is a wrapper written in
# WORK_DIR/bin; otherwise it is plain java.
java_for_tests() {
	java=java
	case ${HT_SANITIZE:-none} in
	*address*) ;;
	*) return 0 ;;
	esac
	jw_agent=$(dirname "$1")/../recorders/jvm/libheaptrace-jvmti.so
	jw_lib=$(ldd "$jw_agent" 2>/dev/null | awk '/libasan/ { print $3 }')
	[ -n "$jw_lib" ] ||
		jw_lib=$(${HT_CC:-cc} -print-file-name=libclang_rt.asan-x86_64.so)
	[ -n "$jw_lib" ] || return 0
	mkdir -p "$2/bin" || return 1
	# the JVM catches SIGSEGV and friends on purpose, and keeps what it
	# allocates until exit
	cat >"$2/bin/java" <<JW
#!/bin/sh
LD_PRELOAD=$jw_lib \
ASAN_OPTIONS=\${ASAN_OPTIONS:+\$ASAN_OPTIONS:}detect_leaks=0:handle_segv=0:handle_sigbus=0:handle_sigfpe=0:handle_sigill=0:allow_user_segv_handler=1 \
exec $(command -v java) "\$@"
JW
	chmod +x "$2/bin/java"
	java=$2/bin/java
}

# java_setup HEAPTRACE SOURCE_DIR FILE.java...: a fresh $work (resolved,
# with no symbolic link on the way, as record names it in messages) with
# the files compiled into $work/classes, and $java as java_for_tests sets
# it. Exits the test when any of that fails.
java_setup() {
	js_heaptrace=$1 js_src=$2
	shift 2
	rm -rf "$work"
	mkdir -p "$work/classes" || exit 1
	work=$(cd "$work" && pwd -P)
	js_n=$#
	while [ "$js_n" -gt 0 ]; do
		set -- "$@" "$js_src/$1"
		shift
		js_n=$((js_n - 1))
	done
	javac -d "$work/classes" "$@" || {
		echo "FAIL: javac $*" >&2
		exit 1
	}
	java_for_tests "$js_heaptrace" "$work" || exit 1
}
