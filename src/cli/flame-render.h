/*
 * flame-render.h - the frames of a flame graph (analysis/flame.h) written
 * out: as folded stacks ("C_RT_CLASS;Cache;byte[] 4096") that
 * flamegraph.pl, inferno and speedscope read, or as a self-contained
 * icicle SVG.
 */
#ifndef HT_FLAME_RENDER_H
#define HT_FLAME_RENDER_H

#include "analysis/flame.h"

#include <stdio.h>

/*
 * Folded stacks: one line per frame whose objects have a self size, the
 * frame names from the top frame down joined by ';' and its self bytes,
 * so that a frame's width in any flame graph tool is its retained bytes.
 * Lines come in preorder with children in name order. A ';' in a name is
 * written ':', control characters '?'. 0, or -1 when writing failed.
 */
int flame_write_folded(const struct flame *f, FILE *out);

/* This struct is not an API; it may change from one release to the next. */
struct flame_svg_options {
	unsigned width;          /* pixels; 0 for 1200 */
	const char *title;       /* NULL for none */
	const char *subtitle;
};

/*
 * An icicle graph (the virtual root on top, "all", then the top frames,
 * each frame's children under it) as one self-contained SVG document:
 * inline style, no script, a tooltip per frame. Frames narrower than a
 * tenth of a pixel are left out with everything under them. The same
 * frames give the same bytes. 0, or -1 when writing failed.
 */
int flame_write_svg(const struct flame *f, const struct flame_svg_options *o,
		    FILE *out);

#endif
