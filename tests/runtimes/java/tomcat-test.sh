#!/bin/sh
# tomcat-test.sh - heaptrace on heap dumps of a real server: Debian's
# Tomcat 10 serving HTTP sessions on loopback.
#
# Starts Tomcat from the package (CATALINA_HOME, /usr/share/tomcat10) with
# a private CATALINA_BASE under WORK_DIR (tomcat/server.xml: one connector
# on 127.0.0.1 at a port the system picks), deploys the shop webapp
# (tomcat/CartServlet.java: a cart of K lines in each session), and with
# curl starts a checkout that waits in the servlet holding a cart of HOLD
# lines, then makes FIRST sessions, the k-th with k lines. At that point
# it takes jcmd GC.class_histogram and GC.heap_dump (first.*); then SECOND
# more sessions, and the histogram, a dump and, with no request between,
# the same moment gzipped (-gz=1) (second.*); then lets the checkout go. The sessions' map crosses a
# resize between the two dumps (FIRST = SECOND = 100: ConcurrentHashMap
# grows its table past 192 entries), as a real server's does. Tomcat is
# then stopped by SIGTERM, which runs its shutdown hook; VisualVM's heap
# library (visualvm.sh, where Debian's visualvm package is installed)
# computes every object's retained size on second.hprof, and
# check-tomcat.py checks what heaptrace reads from the dumps. Prints how
# long each part took.
#
# usage: tomcat-test.sh HEAPTRACE SOURCE_DIR WORK_DIR
# Exits 77 (skipped) without Tomcat 10 (Debian's tomcat10, or
# HEAPTRACE_CATALINA_HOME), java, javac, jcmd, curl or python3.
set -u

if [ $# -ne 3 ]; then
	echo "usage: $0 HEAPTRACE SOURCE_DIR WORK_DIR" >&2
	exit 2
fi
heaptrace=$1 src=$2 work=$3
first=100 second=100 hold=1000
catalina_home=${HEAPTRACE_CATALINA_HOME:-/usr/share/tomcat10}
status=0

. "$(dirname "$0")/../../lib.sh"
. "$(dirname "$0")/visualvm.sh"
need_tools java javac jcmd curl python3 timeout
if [ ! -x "$catalina_home/bin/catalina.sh" ] ||
	[ ! -r "$catalina_home/lib/servlet-api.jar" ]; then
	echo "SKIP: no Tomcat 10 in $catalina_home (Debian's tomcat10)"
	exit 77
fi

rm -rf "$work"
mkdir -p "$work" || exit 1
work=$(cd "$work" && pwd) # jcmd writes dumps where the JVM runs
base=$work/base
log=$work/tomcat.log
pid= checkout=

# seconds since the epoch, to the millisecond
now() {
	date +%s.%N | cut -c1-14
}
since() {
	awk "BEGIN { printf \"%.1f\", $(now) - $1 }"
}
started=$(now)

# Stops Tomcat: SIGTERM runs its shutdown hook, which stops the connector
# and the webapps; a Tomcat that has not exited in 30 s is killed.
stop_tomcat() {
	[ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid"
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 300 ]; do
		i=$((i + 1))
		sleep 0.1
	done
	if kill -0 "$pid" 2>/dev/null; then
		kill -KILL "$pid"
		fail "Tomcat did not stop in 30 s after SIGTERM"
	fi
	wait "$pid" 2>/dev/null
	pid=
}
# the waiting checkout's curl, then Tomcat
clean_up() {
	[ -z "$checkout" ] || kill "$checkout" 2>/dev/null
	stop_tomcat
}
trap clean_up EXIT
trap 'exit 1' INT TERM HUP

# The CATALINA_BASE: our server.xml, the package's global web.xml (its
# default and JSP servlets, as a packaged Tomcat has them), and the shop
# webapp, compiled against the package's servlet API.
make_base() {
	mkdir -p "$base/conf" "$base/logs" "$base/temp" "$base/work" \
		"$base/webapps/shop/WEB-INF/classes" \
		"$base/webapps/shop/META-INF" || return 1
	cp "$src/tomcat/server.xml" "$base/conf/" &&
		cp "$src/tomcat/web.xml" "$base/webapps/shop/WEB-INF/" &&
		cp "$src/tomcat/context.xml" "$base/webapps/shop/META-INF/" ||
		return 1
	if [ -r "$catalina_home/etc/web.xml" ]; then
		cp "$catalina_home/etc/web.xml" "$base/conf/"
	elif [ -r "$catalina_home/conf/web.xml" ]; then
		cp "$catalina_home/conf/web.xml" "$base/conf/"
	fi
	javac -d "$base/webapps/shop/WEB-INF/classes" \
		-cp "$catalina_home/lib/servlet-api.jar" \
		"$src/tomcat/CartServlet.java"
}

# Starts Tomcat in the foreground of a background job (catalina.sh run
# execs java, so $! is the JVM's pid) and waits up to 120 s for it to
# serve; sets pid and port.
start_tomcat() {
	env -u JAVA_OPTS -u CATALINA_PID -u CATALINA_OUT \
		CATALINA_HOME="$catalina_home" CATALINA_BASE="$base" \
		CATALINA_TMPDIR="$base/temp" \
		CATALINA_OPTS="-Xmx512m -XX:TieredStopAtLevel=1" \
		"$catalina_home/bin/catalina.sh" run >"$log" 2>&1 &
	pid=$!
	i=0
	while ! grep -q 'Server startup in' "$log"; do
		if ! kill -0 "$pid" 2>/dev/null; then
			wait "$pid"
			fail "Tomcat exited ($?) before it served: $(cat "$log")"
			pid=
			return 1
		fi
		i=$((i + 1))
		if [ $i -gt 1200 ]; then
			fail "Tomcat did not start in 120 s: $(cat "$log")"
			return 1
		fi
		sleep 0.1
	done
	# port 0: the connector's name ends with the port it was given
	# ("http-nio-127.0.0.1-auto-1-41231")
	port=$(sed -n 's/.*Starting ProtocolHandler \[".*-auto-[0-9]*-\([0-9]*\)"\].*/\1/p' \
		"$log" | head -n 1)
	[ -n "$port" ] || { fail "no port in the log: $(cat "$log")"; return 1; }
}

# shop FROM TO NAME: one request for each K from FROM to TO, each with no
# cookie, so each makes a session, whose cart gets K lines; checks that
# TO - FROM + 1 sessions answered.
shop() {
	curl -sS --fail --max-time 120 \
		"http://127.0.0.1:$port/shop/cart?lines=[$1-$2]" \
		>"$work/$3.sessions" 2>"$work/$3.curl" ||
		{ fail "curl: $(cat "$work/$3.curl")"; return 1; }
	made=$(cut -d' ' -f1 "$work/$3.sessions" | sort -u | wc -l)
	[ "$made" -eq $(($2 - $1 + 1)) ] ||
		{ fail "$made sessions answered, not $(($2 - $1 + 1))"; return 1; }
}

# Starts a checkout of HOLD lines, which waits in the servlet until
# released, and waits up to 30 s for the servlet to say it waits.
start_checkout() {
	curl -sS --max-time 180 \
		"http://127.0.0.1:$port/shop/checkout?lines=$hold" \
		>"$work/checkout.out" 2>&1 &
	checkout=$!
	i=0
	while [ "$(curl -sS --max-time 10 \
		"http://127.0.0.1:$port/shop/held")" != 1 ]; do
		i=$((i + 1))
		[ $i -le 150 ] || { fail "the checkout does not wait"; return 1; }
		sleep 0.2
	done
}

# Lets the checkout go; its answer says it was released with its cart.
end_checkout() {
	curl -sS --max-time 60 "http://127.0.0.1:$port/shop/release" \
		>/dev/null || fail "could not release the checkout"
	wait "$checkout" || fail "the checkout's curl exited $?"
	checkout=
	grep -q "^checkout $hold released" "$work/checkout.out" ||
		fail "checkout: $(cat "$work/checkout.out")"
}

# snapshot NAME [gz]: jcmd GC.class_histogram, then GC.heap_dump into
# NAME.hprof, and with gz the same heap again into NAME.hprof.gz (-gz=1).
# The histogram is taken again until Tomcat holds no connection but the
# checkout's (one NioSocketWrapper): the last request's connection is
# closed some time after curl has its answer (its selection key is let go
# at the poller's next select, up to a second later), and its objects
# would otherwise differ between two dumps of one moment.
snapshot() {
	name=$work/$1
	i=0
	while :; do
		timeout 120 jcmd "$pid" GC.class_histogram \
			>"$name.histogram" 2>&1 || {
			fail "jcmd GC.class_histogram: $(tail -n 3 "$name.histogram")"
			return 1
		}
		open=$(awk '$4 == "org.apache.tomcat.util.net.NioEndpoint$NioSocketWrapper" { print $2 }' \
			"$name.histogram")
		[ "${open:-0}" -gt 1 ] || break
		i=$((i + 1))
		[ $i -lt 60 ] ||
			{ fail "a connection still open after 60 histograms"; return 1; }
		sleep 0.2
	done
	[ $i -eq 0 ] ||
		echo "$1: the last connection closed after $i more histograms"
	timeout 120 jcmd "$pid" GC.heap_dump "$name.hprof" >"$name.jcmd" 2>&1 &&
		[ -s "$name.hprof" ] ||
		{ fail "jcmd GC.heap_dump: $(cat "$name.jcmd")"; return 1; }
	[ "${2:-}" = gz ] || return 0
	timeout 120 jcmd "$pid" GC.heap_dump -gz=1 "$name.hprof.gz" \
		>"$name.jcmd" 2>&1 && [ -s "$name.hprof.gz" ] ||
		{ fail "jcmd GC.heap_dump -gz=1: $(cat "$name.jcmd")"; return 1; }
}

make_base ||
	{ echo "FAIL: could not lay out CATALINA_BASE in $base" >&2; exit 1; }
start_tomcat || exit 1
echo "$(sed -n 's/.*Starting Servlet engine: \[\(.*\)\]/\1/p' "$log" | head -n 1)" \
	"served on 127.0.0.1:$port after $(since "$started") s"

loaded=$(now)
start_checkout && shop 1 $first first && snapshot first &&
	shop $((first + 1)) $((first + second)) second &&
	snapshot second gz && end_checkout || exit 1
echo "$((first + second)) sessions made and dumped in $(since "$loaded") s"

stop_tomcat
grep -q 'Destroying ProtocolHandler' "$log" ||
	fail "Tomcat did not stop cleanly: $(tail -n 5 "$log")"

# VisualVM's retained sizes of second.hprof, for check-tomcat.py to hold
# heaptrace's to (none without the library: that check is skipped)
compared=$(now)
rm -f "$work/visualvm.out"
visualvm_retained "$work/second.hprof" "$work/visualvm.out" "$work/classes"
case $? in
0) echo "VisualVM's heap library read second.hprof in $(since "$compared") s" ;;
77) rm -f "$work/visualvm.out" ;;
*) rm -f "$work/visualvm.out"
	fail "VisualVM's heap library could not read second.hprof" ;;
esac

checked=$(now)
python3 "$src/check-tomcat.py" "$heaptrace" "$work" $first $second $hold ||
	status=1
echo "checks in $(since "$checked") s"
echo "sizes: first.hprof $(wc -c <"$work/first.hprof") bytes," \
	"second.hprof $(wc -c <"$work/second.hprof") bytes," \
	"second.hprof.gz $(wc -c <"$work/second.hprof.gz") bytes"
echo "total: $(since "$started") s"
[ $status -eq 0 ] && echo "ok: Tomcat's heap dumps read and checked"
exit $status
