/*
 * flame-render.c - a flame graph's frames written as folded stacks or as
 * an icicle SVG (flame-render.h); analysis/flame.c makes the frames.
 */
#include "cli/flame-render.h"

#include "cli/escape.h"

#include "util/grouped.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- folded stacks ------------------------------------------------------ */

int flame_write_folded(const struct flame *f, FILE *out)
{
	uint32_t *stack = malloc(((size_t)f->max_depth + 1) * sizeof(*stack));

	if (!stack)
		return -1;
	for (uint32_t x = f->first_top; x != FLAME_NONE; x = flame_next(f, x)) {
		const struct flame_frame *fr = &f->frames[x];

		stack[fr->depth] = x;
		if (!fr->self)
			continue;
		for (uint32_t k = 0; k <= fr->depth; k++) {
			if (k)
				fputc(';', out);
			esc_folded(out, f->frames[stack[k]].name);
		}
		fprintf(out, " %" PRIu64 "\n", fr->self);
	}
	free(stack);
	return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}

/* ---- SVG ---------------------------------------------------------------- */

#define SVG_WIDTH 1200u
#define SVG_PAD 10.0
#define SVG_TOP 56.0          /* below the title and subtitle */
#define SVG_ROW 17.0          /* a frame's row: 16 px and a gap */
#define SVG_CHAR 7.25         /* width of a 12 px monospace character */
#define SVG_MIN_WIDTH 0.1     /* narrower frames are left out */

static uint32_t name_hash(const char *s)
{
	uint32_t v = 2166136261u; /* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		v = (v ^ *p) * 16777619u;
	return v;
}

/* Warm colours for classes, blue for the roots, grey for "all" and the
 * frames below the depth limit: the same name, the same colour. */
static void put_fill(FILE *out, const struct flame_frame *fr)
{
	uint32_t v = name_hash(fr->name);
	unsigned r, g, b;

	if (fr->depth == 0) {
		r = 110 + v % 40;
		g = 150 + (v >> 8) % 40;
		b = 215 + (v >> 16) % 30;
	} else if (strcmp(fr->name, FLAME_DEEPER_NAME) == 0) {
		r = g = b = 190;
	} else {
		r = 205 + v % 50;
		g = 90 + (v >> 8) % 130;
		b = 40 + (v >> 16) % 50;
	}
	fprintf(out, "rgb(%u,%u,%u)", r, g, b);
}

struct svg {
	FILE *out;
	const struct flame *f;
	double scale;            /* pixels per byte */
	uint64_t *start;         /* per frame: bytes left of it in its row */
};

static bool visible(const struct svg *s, uint64_t bytes)
{
	return (double)bytes * s->scale >= SVG_MIN_WIDTH;
}

/* Where each frame starts: its parent's start plus its elder siblings'
 * totals; parents come first in the array. */
static void place_frames(struct svg *s)
{
	const struct flame *f = s->f;
	uint64_t off = 0;

	for (uint32_t x = f->first_top; x != FLAME_NONE;
	     x = f->frames[x].next_sibling) {
		s->start[x] = off;
		off += f->frames[x].total;
	}
	for (size_t p = 0; p < f->n; p++) {
		off = s->start[p];
		for (uint32_t c = f->frames[p].first_child; c != FLAME_NONE;
		     c = f->frames[c].next_sibling) {
			s->start[c] = off;
			off += f->frames[c].total;
		}
	}
}

static uint32_t deepest_visible(const struct svg *s)
{
	const struct flame *f = s->f;
	uint32_t deepest = 0;
	uint32_t x = f->first_top;

	while (x != FLAME_NONE) {
		if (!visible(s, f->frames[x].total)) {
			x = flame_skip(f, x);
			continue;
		}
		if (f->frames[x].depth > deepest)
			deepest = f->frames[x].depth;
		x = flame_next(f, x);
	}
	return deepest;
}

static void put_tooltip(const struct svg *s, const char *name, uint64_t total,
			uint64_t self, uint64_t objects)
{
	char a[32], b[32], c[32];
	double pct = s->f->total ? 100.0 * (double)total / (double)s->f->total
				 : 0.0;

	fputs("<title>", s->out);
	esc_xml(s->out, name, SIZE_MAX);
	fprintf(s->out, ": %s B retained (%.2f%%), %s B self, %s object%s"
		"</title>", grouped(total, a), pct, grouped(self, b),
		grouped(objects, c), objects == 1 ? "" : "s");
}

/* One frame, x and w pixels: a rectangle, its tooltip (the full name),
 * and as much of its name folded for reading (escape.h) as fits. fr is
 * NULL for "all". */
static void put_box(const struct svg *s, const char *name, double x, double w,
		    uint64_t total, uint64_t self, uint64_t objects,
		    unsigned row, const struct flame_frame *fr)
{
	double y = SVG_TOP + row * SVG_ROW;
	size_t fits = w > 6.0 ? (size_t)((w - 6.0) / SVG_CHAR) : 0;
	const char *label = fold_name(name);
	size_t len = esc_xml_chars(label);

	fputs("<g>", s->out);
	put_tooltip(s, name, total, self, objects);
	fprintf(s->out, "<rect x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" "
		"height=\"16\" rx=\"2\" fill=\"", x, y, w);
	if (fr)
		put_fill(s->out, fr);
	else
		fputs("rgb(200,200,200)", s->out);
	fputs("\"/>", s->out);
	if (fits >= 3) {
		fprintf(s->out, "<text x=\"%.2f\" y=\"%.1f\">", x + 3.0,
			y + 12.0);
		if (len <= fits) {
			esc_xml(s->out, label, SIZE_MAX);
		} else {
			esc_xml(s->out, label, fits - 2);
			fputs("..", s->out);
		}
		fputs("</text>", s->out);
	}
	fputs("</g>\n", s->out);
}

static void put_header(const struct svg *s, unsigned width, double height,
		       const struct flame_svg_options *o)
{
	fprintf(s->out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%u\" "
		"height=\"%.0f\" viewBox=\"0 0 %u %.0f\">\n"
		"<style>text{font-family:monospace;font-size:12px;fill:#000}"
		"text.title{font-size:17px;font-weight:bold}"
		"g:hover rect{stroke:#000;stroke-width:1}</style>\n"
		"<rect width=\"100%%\" height=\"100%%\" fill=\"#f6f6f0\"/>\n",
		width, height, width, height);
	if (o && o->title) {
		fprintf(s->out, "<text class=\"title\" x=\"%.0f\" y=\"24\">",
			SVG_PAD);
		esc_xml(s->out, o->title, SIZE_MAX);
		fputs("</text>\n", s->out);
	}
	if (o && o->subtitle) {
		fprintf(s->out, "<text x=\"%.0f\" y=\"44\">", SVG_PAD);
		esc_xml(s->out, o->subtitle, SIZE_MAX);
		fputs("</text>\n", s->out);
	}
}

int flame_write_svg(const struct flame *f, const struct flame_svg_options *o,
		    FILE *out)
{
	unsigned width = o && o->width ? o->width : SVG_WIDTH;
	struct svg s = {.out = out, .f = f};
	double inner = width > 2 * SVG_PAD + 1 ? width - 2 * SVG_PAD : 1.0;
	uint32_t rows;

	s.start = malloc((f->n ? f->n : 1) * sizeof(*s.start));
	if (!s.start)
		return -1;
	s.scale = f->total ? inner / (double)f->total : 0.0;
	place_frames(&s);
	rows = f->n ? deepest_visible(&s) + 2 : 1;
	put_header(&s, width, SVG_TOP + rows * SVG_ROW + SVG_PAD, o);
	/* "all" spans the width even when nothing is retained */
	put_box(&s, "all", SVG_PAD, inner, f->total, 0, f->objects, 0, NULL);
	for (uint32_t x = f->first_top; x != FLAME_NONE;) {
		const struct flame_frame *fr = &f->frames[x];

		if (!visible(&s, fr->total)) {
			x = flame_skip(f, x);
			continue;
		}
		put_box(&s, fr->name, SVG_PAD + (double)s.start[x] * s.scale,
			(double)fr->total * s.scale, fr->total, fr->self,
			fr->objects, fr->depth + 1, fr);
		x = flame_next(f, x);
	}
	fputs("</svg>\n", out);
	free(s.start);
	return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}
