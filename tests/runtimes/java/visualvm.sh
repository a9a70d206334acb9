# visualvm.sh - VisualVM's heap library, which the JVM tests hold
# heaptrace's retained sizes to; sourced, not run.
#
# visualvm_retained DUMP OUT CLASSES: writes to OUT every object's id, size
# and retained size as the library computes them on the HPROF DUMP (see
# VisualVMAllRetained.java, compiled into the folder CLASSES), and removes
# the cache the library leaves next to the dump. Returns 77 when the
# library (Debian's visualvm package) is not installed, 1 when it fails,
# saying why on standard error.
visualvm_retained() {
	vv_jar=$(find /usr/share/visualvm -name '*jfluid-heap*.jar' 2>/dev/null |
		head -n 1)
	[ -n "$vv_jar" ] || return 77
	vv_src=$(dirname "$0")/VisualVMAllRetained.java
	mkdir -p "$3" &&
		javac -cp "$vv_jar" -d "$3" "$vv_src" 2>"$2.err" || {
		echo "javac VisualVMAllRetained.java: $(cat "$2.err")" >&2
		return 1
	}
	rm -rf "$1.hwcache"
	java -cp "$vv_jar:$3" VisualVMAllRetained "$1" >"$2" 2>"$2.err" || {
		echo "VisualVM's heap library: $(tail -n 3 "$2.err")" >&2
		rm -rf "$1.hwcache"
		return 1
	}
	rm -rf "$1.hwcache"
}
