/*
 * flame.h - the dominator tree of a dump as the frames of a flame graph,
 * which cli/flame-render.h writes as folded stacks or as an SVG.
 *
 * A frame stands for objects, not for one object: the objects that the
 * same frame dominates and that have the same class are merged into one
 * frame, as a profiler's flame graph merges calls of one function from
 * one caller. A frame is as wide as the retained bytes of its objects.
 * The top frames are the roots' containers (or CLR root kinds) that hold
 * the objects only the virtual root dominates.
 */
#ifndef HT_FLAME_H
#define HT_FLAME_H

#include "analysis/dominators.h"
#include "analysis/heap.h"

#include <stdint.h>

/* ---- frames ------------------------------------------------------------- */

#define FLAME_NONE UINT32_MAX
#define FLAME_DEFAULT_DEPTH 64
/* The frame under a frame at the depth limit that takes all below it. */
#define FLAME_DEEPER_NAME "..."
/* The top frame of objects that no single root holds: the virtual root
 * alone dominates them, through the objects of several roots. */
#define FLAME_SEVERAL_ROOTS_NAME "(several roots)"

/* This struct is not an API; it may change from one release to the next. */
struct flame_frame {
	uint32_t parent;        /* FLAME_NONE for a top frame */
	uint32_t first_child;   /* children in name order (strcmp) */
	uint32_t next_sibling;
	uint32_t depth;         /* 0 for a top frame */
	const char *name;       /* a class name, a container or root kind */
	uint64_t objects;       /* objects merged into it */
	uint64_t self;          /* their self sizes */
	uint64_t total;         /* self and every frame below: retained bytes */
};

/* This struct is not an API; it may change from one release to the next. */
struct flame {
	size_t n;
	struct flame_frame *frames; /* a parent before its children */
	uint32_t first_top;         /* the top frames, in name order */
	uint64_t total;             /* what the strong roots retain */
	uint64_t objects;           /* objects they reach */
	uint32_t max_depth;         /* deepest frame */
	char **owned;               /* names made here ("?0x50") */
	size_t n_owned, cap_owned;  /* cap_owned: grown (sites_flame) */
};

/*
 * Builds the frames of h's dominator tree (d). Objects more than
 * max_depth frames below a top frame go to one FLAME_DEEPER_NAME frame
 * under the frame at that depth, so that a list a million long makes a
 * flame graph of bounded size. Returns 0, or -1 with err filled.
 */
int flame_build(const struct heap *h, const struct heap_dominators *d,
		unsigned max_depth, struct flame *f, struct ht_error *err);
void flame_free(struct flame *f);

/* The frame after x in preorder (children in name order), FLAME_NONE at
 * the end; start from f->first_top. */
uint32_t flame_next(const struct flame *f, uint32_t x);
/* The frame after x and everything under it, in the same order. */
uint32_t flame_skip(const struct flame *f, uint32_t x);

#endif
