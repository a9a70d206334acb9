#!/bin/sh
# chromium-svg.sh - the SVG of `heaptrace flame --svg` opens in a browser:
# headless Chromium parses it (no parser error), its DOM holds the frames
# and their names, and a screenshot of it shows the frames (pixels of the
# frames' colours, checked with python3; without python3, a screenshot
# larger than one of a blank page). Exits 77 (skipped) only when no
# chromium is installed; tools/install-deps.sh installs it.
set -u
: "${HEAPTRACE:?HEAPTRACE must name the heaptrace binary}"
: "${HT_TESTDATA:?HT_TESTDATA must name testdata/}"

chromium=$(command -v chromium || command -v chromium-browser) || {
	echo "chromium is not installed: skipped"
	exit 77
}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

fail() {
	echo "FAIL: $*"
	exit 1
}

# browser NAME ARGS...: one headless Chromium run with a profile of its own
browser() {
	name=$1
	shift
	timeout 120 "$chromium" --headless --no-sandbox --disable-gpu \
		--disable-quic --no-first-run --disable-background-networking \
		--disable-component-update --disable-sync --hide-scrollbars \
		--user-data-dir="$TMP/profile-$name" "$@" 2>"$TMP/$name.log"
}

"$HEAPTRACE" flame --svg --width 1000 --title 'one.yaml: <dump 1> & more' \
	"$HT_TESTDATA/diff/one.yaml" >"$TMP/one.svg" || fail "heaptrace flame"
"$HEAPTRACE" flame --svg --width 1000 "$HT_TESTDATA/genheap-20k.ht" \
	>"$TMP/big.svg" || fail "heaptrace flame on genheap-20k.ht"

# the DOM: every frame of one.yaml's dump 1 (see its header) is there
browser dom --dump-dom "file://$TMP/one.svg" >"$TMP/one.dom" ||
	fail "chromium --dump-dom: $(tail -3 "$TMP/dom.log")"
grep -q 'parsererror' "$TMP/one.dom" && fail "the SVG does not parse: $(cat "$TMP/one.dom")"
for frame in all C_RT_CLASS C_RT_THREAD Cache Entry App Session 'byte\[\]'; do
	grep -q ">$frame</text>" "$TMP/one.dom" || fail "no frame '$frame' in the DOM"
done
grep -q '>one.yaml: &lt;dump 1&gt; &amp; more</text>' "$TMP/one.dom" ||
	fail "the title is not in the DOM"
[ "$(grep -o '<rect x=' "$TMP/one.dom" | wc -l)" = 13 ] ||
	fail "not 13 frames in the DOM"
browser bigdom --dump-dom "file://$TMP/big.svg" >"$TMP/big.dom" ||
	fail "chromium --dump-dom on the large SVG"
grep -q 'parsererror' "$TMP/big.dom" && fail "the large SVG does not parse"
[ "$(grep -o '<rect x=' "$TMP/big.dom" | wc -l)" -gt 100 ] ||
	fail "fewer than 100 frames in the large SVG's DOM"

# the picture: a window taller than the graph (a short one renders it
# squashed); a blank page of the same colour to compare with
cat >"$TMP/blank.svg" <<'END'
<?xml version="1.0" encoding="UTF-8"?>
<svg xmlns="http://www.w3.org/2000/svg" width="1000" height="600"><rect width="100%" height="100%" fill="#f6f6f0"/></svg>
END
browser shot --screenshot="$TMP/one.png" --window-size=1000,600 \
	"file://$TMP/one.svg" || fail "chromium --screenshot"
browser blank --screenshot="$TMP/blank.png" --window-size=1000,600 \
	"file://$TMP/blank.svg" || fail "chromium --screenshot of a blank page"
[ -s "$TMP/one.png" ] || fail "no screenshot"

if command -v python3 >/dev/null; then
	python3 - "$TMP/one.png" <<'END' || fail "the screenshot does not show the frames"
# Decodes the PNG (8-bit RGB or RGBA, as Chromium writes them) and counts
# the pixels of the frames: warm class colours, blue top frames, grey "all".
import struct, sys, zlib
data = open(sys.argv[1], "rb").read()
assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG"
pos, idat = 8, b""
while pos < len(data):
    n, kind = struct.unpack(">I4s", data[pos:pos + 8])
    body = data[pos + 8:pos + 8 + n]
    if kind == b"IHDR":
        w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
    elif kind == b"IDAT":
        idat += body
    pos += 12 + n
assert depth == 8 and ctype in (2, 6), "unexpected PNG format"
bpp = 3 if ctype == 2 else 4
raw, stride = zlib.decompress(idat), w * bpp
prev, rows, i = bytearray(stride), [], 0
for y in range(h):
    f, line = raw[i], bytearray(raw[i + 1:i + 1 + stride])
    i += 1 + stride
    for x in range(stride):
        a = line[x - bpp] if x >= bpp else 0
        b = prev[x]
        c = prev[x - bpp] if x >= bpp else 0
        if f == 1: line[x] = (line[x] + a) & 255
        elif f == 2: line[x] = (line[x] + b) & 255
        elif f == 3: line[x] = (line[x] + (a + b) // 2) & 255
        elif f == 4:
            p = a + b - c
            pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
            line[x] = (line[x] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
    rows.append(line)
    prev = line
warm = blue = grey = 0
for line in rows:
    for x in range(0, stride, bpp):
        r, g, b = line[x], line[x + 1], line[x + 2]
        if r >= 200 and 80 <= g <= 225 and b <= 95: warm += 1
        elif b >= 210 and r <= 155 and g <= 195: blue += 1
        elif r == g == b == 200: grey += 1
print("frame pixels: warm %d, blue %d, grey %d of %dx%d" % (warm, blue, grey, w, h))
sys.exit(0 if warm > 20000 and blue > 5000 and grey > 5000 else 1)
END
else
	[ "$(wc -c <"$TMP/one.png")" -gt $((2 * $(wc -c <"$TMP/blank.png"))) ] ||
		fail "the screenshot is no larger than a blank one"
fi
echo "ok: $(wc -c <"$TMP/one.png") byte screenshot, blank $(wc -c <"$TMP/blank.png")"
