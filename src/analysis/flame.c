/*
 * flame.c - the dominator tree as frames (flame.h); cli/flame-render.c
 * writes them as folded stacks or as an icicle SVG.
 *
 * Frames are made in one preorder walk of the dominator tree: an object's
 * frame is the child of its dominator's frame that has the object's class
 * name, made the first time it is needed, so a parent frame always comes
 * before its children in the array. A hash table finds the child frame of
 * a (parent frame, name) pair. Totals are then summed from the last frame
 * back to the first, and children put in name order by one sort of
 * (parent, name rank) keys: no recursion anywhere, since dominator trees
 * of real heaps are as deep as their longest linked list.
 */
#include "analysis/dominators.h"
#include "analysis/flame.h"
#include "analysis/names.h"
#include "analysis/root_order.h"

#include "lib/common/error.h"
#include "util/alloc.h"
#include "util/idmap.h"
#include "util/membudget.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- names -------------------------------------------------------------- */

/*
 * Every name a frame can have, each with a rank: its place in strcmp
 * order, equal texts sharing one. Frames are keyed by rank, so that two
 * classes of one name merge, and sorted by it. Name ids: the class slots
 * (h->classes, then one for objects of no known class), then the root
 * frames' names.
 */
struct names {
	size_t n;
	const char **text;
	uint32_t *rank;
	size_t unknown_class;    /* id of the no-known-class slot */
	size_t containers;       /* id of container 1; HT_C_END of them */
	size_t kinds;            /* id of root kind 0; 4 of them */
	size_t plain_root, several, deeper;
	size_t class_objects;    /* id of the class object of class slot 0,
				    when the trace carries fields; else 0 */
	size_t fields;           /* id of a root named by field 1 */
};

#define N_KINDS 4

/* qsort has no context argument: the names being sorted */
static const char *const *sorting_text;

static int compare_name_ids(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(sorting_text[x], sorting_text[y]);

	return c ? c : (x > y) - (x < y);
}

/* "?0x50" for a class the trace never named, kept in f->owned. */
static const char *unnamed_class(struct flame *f, ht_id id)
{
	char buf[32], *copy;

	snprintf(buf, sizeof(buf), "?0x%" PRIx64, id);
	copy = strdup(buf);
	if (!copy)
		return NULL;
	f->owned[f->n_owned++] = copy;
	return copy;
}

/* "class demo.HeapDemo", kept in f->owned. */
static const char *class_object_text(struct flame *f, const char *name)
{
	size_t n = strlen(name) + sizeof("class ");
	char *copy = malloc(n);

	if (!copy)
		return NULL;
	snprintf(copy, n, "class %s", name);
	f->owned[f->n_owned++] = copy;
	return copy;
}

/* "static demo.HeapDemo.listHead": the top frame of what a static holds,
 * as root_text names the root; kept in f->owned. */
static const char *field_root_text(const struct heap *h, struct flame *f,
				   uint32_t field)
{
	struct heap_root r = {.field = field};
	char buf[NAME_TEXT], *copy;

	copy = strdup(root_text(h, &r, buf));
	if (!copy)
		return NULL;
	f->owned[f->n_owned++] = copy;
	return copy;
}

/* A top frame groups the roots of one kind, but those the trace names by
 * a static field, each a frame of its own. With fields, the trace is of
 * a recorder that names things as a developer reads them, so the frame
 * takes the words the other outputs give that kind of root
 * (analysis/names.h); older traces keep the protocol's names. */
static const char *container_text(const struct heap *h, unsigned c)
{
	const char *name = heap_has_fields(h) ? root_kind_words(c, HEAP_NO_KIND)
					      : NULL;

	if (!name)
		name = ht_container_name((enum ht_container_type)c);
	return name ? name : "container";
}

static const char *kind_text(const struct heap *h, unsigned k)
{
	const char *name = heap_has_fields(h) ? root_kind_words(0, k) : NULL;

	if (!name)
		name = ht_root_kind_name((enum ht_root_kind)k);
	return name ? name : "root";
}

static int names_build(const struct heap *h, struct flame *f, struct names *nm)
{
	size_t i = 0;
	uint32_t *order = NULL, rank = 0;

	/* with fields, a class object's frame is named after the class it
	 * stands for (analysis/names.h): one more name per class */
	size_t objects = heap_has_fields(h) ? h->n_classes : 0;

	nm->n = h->n_classes + 1 + HT_C_END + N_KINDS + 3 + objects +
		h->n_fields;
	nm->text = malloc(nm->n * sizeof(*nm->text));
	nm->rank = malloc(nm->n * sizeof(*nm->rank));
	order = malloc(nm->n * sizeof(*order));
	f->owned = malloc((h->n_classes + 1 + objects + h->n_fields) *
			  sizeof(*f->owned));
	if (!nm->text || !nm->rank || !order || !f->owned)
		goto fail;
	for (; i < h->n_classes; i++) {
		nm->text[i] = h->classes[i].name ? h->classes[i].name
			: unnamed_class(f, h->classes[i].id);
		if (!nm->text[i])
			goto fail;
	}
	nm->unknown_class = i;
	nm->text[i++] = "?0x0"; /* as heap_class_name names it */
	nm->containers = i;
	for (unsigned c = 1; c <= HT_C_END; c++)
		nm->text[i++] = container_text(h, c);
	nm->kinds = i;
	for (unsigned k = 0; k < N_KINDS; k++)
		nm->text[i++] = kind_text(h, k);
	nm->plain_root = i;
	nm->text[i++] = "root";
	nm->several = i;
	nm->text[i++] = FLAME_SEVERAL_ROOTS_NAME;
	nm->deeper = i;
	nm->text[i++] = FLAME_DEEPER_NAME;
	nm->class_objects = objects ? i : 0;
	for (size_t c = 0; c < objects; c++) {
		nm->text[i++] = class_object_text(f, nm->text[c]);
		if (!nm->text[i - 1])
			goto fail;
	}
	nm->fields = i;
	for (size_t k = 0; k < h->n_fields; k++) {
		/* only a static field names a root */
		nm->text[i++] = h->fields[k].kind == HT_FIELD_STATIC &&
					h->fields[k].name
				? field_root_text(h, f, (uint32_t)k + 1)
				: "root";
		if (!nm->text[i - 1])
			goto fail;
	}
	for (size_t k = 0; k < nm->n; k++)
		order[k] = (uint32_t)k;
	sorting_text = nm->text;
	qsort(order, nm->n, sizeof(*order), compare_name_ids);
	for (size_t k = 0; k < nm->n; k++) {
		if (k && strcmp(nm->text[order[k]], nm->text[order[k - 1]]))
			rank++;
		nm->rank[order[k]] = rank;
	}
	free(order);
	return 0;
fail:
	free(order);
	return -1;
}

static void names_free(struct names *nm)
{
	free(nm->text);
	free(nm->rank);
}

static size_t class_name_id(const struct heap *h, const struct names *nm,
			    uint32_t object)
{
	uint32_t c = h->cls[object];
	size_t of;

	if (nm->class_objects && heap_class_object_name(h, object)) {
		of = heap_class_slot_of_id(h, heap_id(h, object));
		if (of < h->n_classes)
			return nm->class_objects + of;
	}
	return c == HEAP_NO_CLASS || c >= h->n_classes ? nm->unknown_class : c;
}

/* The top frame's name for objects this root holds. */
static size_t root_name_id(const struct heap *h, const struct names *nm,
			   const struct heap_root *r)
{
	const struct heap_field *f = heap_field_at(h, r->field);

	if (f && f->kind == HT_FIELD_STATIC)
		return nm->fields + r->field - 1;
	if (r->container >= 1 && r->container <= HT_C_END)
		return nm->containers + r->container - 1;
	if (r->kind < N_KINDS)
		return nm->kinds + r->kind;
	return nm->plain_root;
}

/* ---- frames ------------------------------------------------------------- */

struct builder {
	struct flame *f;
	const struct names *nm;
	size_t cap;
	uint32_t *rank;          /* per frame: its name's rank */
	struct idmap children;   /* frame_key -> frame index */
};

static uint64_t frame_key(uint32_t parent, uint32_t rank)
{
	/* parent + 1: top frames (FLAME_NONE) sort first, as key 0 */
	return ((uint64_t)(uint32_t)(parent + 1) << 32) | rank;
}

static int frames_reserve(struct builder *b)
{
	size_t cap;

	if (b->f->n < b->cap)
		return 0;
	/* frames and rank share one capacity */
	cap = grown_capacity(b->cap, b->f->n + 1, sizeof(*b->f->frames));
	if (cap == 0 || cap > FLAME_NONE ||
	    RESIZE_ARRAY(b->f->frames, cap) < 0 ||
	    RESIZE_ARRAY(b->rank, cap) < 0)
		return -1;
	b->cap = cap;
	return 0;
}

/* The child of parent named by name id, made if missing; FLAME_NONE when
 * out of memory. */
static uint32_t child_frame(struct builder *b, uint32_t parent, size_t name)
{
	uint32_t rank = b->nm->rank[name];
	uint64_t key = frame_key(parent, rank);
	struct flame_frame *fr;
	uint32_t i;

	if (idmap_get(&b->children, key, &i))
		return i;
	if (frames_reserve(b) < 0 ||
	    idmap_put(&b->children, key, (uint32_t)b->f->n) < 0)
		return FLAME_NONE;
	fr = &b->f->frames[b->f->n];
	memset(fr, 0, sizeof(*fr));
	fr->parent = parent;
	fr->first_child = fr->next_sibling = FLAME_NONE;
	fr->depth = parent == FLAME_NONE ? 0 : b->f->frames[parent].depth + 1;
	fr->name = b->nm->text[name];
	b->rank[b->f->n] = rank;
	if (fr->depth > b->f->max_depth)
		b->f->max_depth = fr->depth;
	return (uint32_t)b->f->n++;
}

/*
 * The top frame of each object that only the virtual root dominates: the
 * first strong root that holds it, in rank order (root_order.h: a static
 * before a handle before a local), or, when none holds it itself,
 * FLAME_SEVERAL_ROOTS_NAME. Written into frame_of[].
 */
static int top_frames(struct builder *b, const struct heap *h,
		      const struct heap_dominators *d, uint32_t *frame_of)
{
	size_t *order = heap_roots_ranked(h);

	if (!order)
		return -1;
	for (size_t k = 0; k < h->n_roots; k++) {
		const struct heap_root *r = &h->roots[order[k]];
		uint32_t x = r->object;

		if (x == HEAP_NONE || heap_root_is_weak(r) ||
		    d->idom[x] != HEAP_VIRTUAL_ROOT ||
		    frame_of[x] != FLAME_NONE)
			continue;
		frame_of[x] = child_frame(b, FLAME_NONE,
					  root_name_id(h, b->nm, r));
		if (frame_of[x] == FLAME_NONE) {
			free(order);
			return -1;
		}
	}
	free(order);
	return 0;
}

/* The frame of object x, whose dominator's frame is pf. */
static uint32_t frame_for(struct builder *b, const struct heap *h,
			  uint32_t pf, uint32_t x, unsigned max_depth)
{
	const struct flame_frame *p = &b->f->frames[pf];

	if (p->depth > max_depth) /* the deeper frame takes all below it */
		return pf;
	if (p->depth == max_depth)
		return child_frame(b, pf, b->nm->deeper);
	return child_frame(b, pf, class_name_id(h, b->nm, x));
}

static int assign_objects(struct builder *b, const struct heap *h,
			  const struct heap_dominators *d,
			  const struct dom_tree *t, unsigned max_depth)
{
	uint64_t charged = 0;
	uint32_t *frame_of = budget_array(h->n, sizeof(*frame_of), &charged);
	uint32_t several = FLAME_NONE;
	int rc = -1;

	if (!frame_of)
		return -1;
	for (uint32_t i = 0; i < h->n; i++)
		frame_of[i] = FLAME_NONE;
	if (top_frames(b, h, d, frame_of) < 0)
		goto out;
	for (uint32_t x = t->top; x != HEAP_NONE; x = dom_tree_next(t, d, x)) {
		uint32_t p = d->idom[x], pf;

		if (p != HEAP_VIRTUAL_ROOT) {
			pf = frame_of[p];
		} else if (frame_of[x] != FLAME_NONE) {
			pf = frame_of[x];
		} else {
			if (several == FLAME_NONE)
				several = child_frame(b, FLAME_NONE,
						      b->nm->several);
			pf = several;
		}
		if (pf == FLAME_NONE)
			goto out;
		frame_of[x] = frame_for(b, h, pf, x, max_depth);
		if (frame_of[x] == FLAME_NONE)
			goto out;
		b->f->frames[frame_of[x]].objects++;
		b->f->frames[frame_of[x]].self += heap_size(h, x);
		b->f->objects++;
	}
	rc = 0;
out:
	budget_array_free(frame_of, h->n, sizeof(*frame_of), &charged);
	return rc;
}

/* Children come after their parents, so one backward pass sums them. */
static void sum_totals(struct flame *f)
{
	for (size_t i = f->n; i-- > 0;) {
		struct flame_frame *fr = &f->frames[i];

		fr->total += fr->self;
		if (fr->parent == FLAME_NONE)
			f->total += fr->total;
		else
			f->frames[fr->parent].total += fr->total;
	}
}

struct keyed {
	uint64_t key;
	uint32_t frame;
};

static int compare_keyed(const void *a, const void *b)
{
	uint64_t x = ((const struct keyed *)a)->key;
	uint64_t y = ((const struct keyed *)b)->key;

	return (x > y) - (x < y);
}

static int link_children(struct builder *b)
{
	struct flame *f = b->f;
	struct keyed *k = malloc((f->n ? f->n : 1) * sizeof(*k));

	if (!k)
		return -1;
	for (size_t i = 0; i < f->n; i++) {
		k[i].key = frame_key(f->frames[i].parent, b->rank[i]);
		k[i].frame = (uint32_t)i;
	}
	qsort(k, f->n, sizeof(*k), compare_keyed);
	f->first_top = FLAME_NONE;
	for (size_t i = f->n; i-- > 0;) {
		struct flame_frame *fr = &f->frames[k[i].frame];

		if (fr->parent == FLAME_NONE) {
			fr->next_sibling = f->first_top;
			f->first_top = k[i].frame;
		} else {
			fr->next_sibling = f->frames[fr->parent].first_child;
			f->frames[fr->parent].first_child = k[i].frame;
		}
	}
	free(k);
	return 0;
}

int flame_build(const struct heap *h, const struct heap_dominators *d,
		unsigned max_depth, struct flame *f, struct ht_error *err)
{
	struct names nm = {0};
	struct dom_tree t = {0};
	struct builder b = {.f = f, .nm = &nm};
	int rc = -1;

	memset(f, 0, sizeof(*f));
	f->first_top = FLAME_NONE;
	if (max_depth < 1)
		max_depth = 1;
	if (names_build(h, f, &nm) == 0 && dom_tree_build(h, d, &t) == 0 &&
	    assign_objects(&b, h, d, &t, max_depth) == 0 &&
	    link_children(&b) == 0) {
		sum_totals(f);
		rc = 0;
	}
	names_free(&nm);
	dom_tree_free(&t);
	free(b.rank);
	idmap_free(&b.children);
	if (rc < 0) {
		flame_free(f);
		if (mem_budget_exceeded())
			err_plain(err, HT_E_NOMEM, NULL, MEM_BUDGET_MESSAGE,
				  mem_budget_limit());
		else
			err_plain(err, HT_E_NOMEM, NULL,
				  "out of memory building the frames of "
				  "%" PRIu32 " objects", h->n);
	}
	return rc;
}

void flame_free(struct flame *f)
{
	for (size_t i = 0; i < f->n_owned; i++)
		free(f->owned[i]);
	free(f->owned);
	free(f->frames);
	memset(f, 0, sizeof(*f));
	f->first_top = FLAME_NONE;
}

uint32_t flame_skip(const struct flame *f, uint32_t x)
{
	while (x != FLAME_NONE) {
		if (f->frames[x].next_sibling != FLAME_NONE)
			return f->frames[x].next_sibling;
		x = f->frames[x].parent;
	}
	return FLAME_NONE;
}

uint32_t flame_next(const struct flame *f, uint32_t x)
{
	if (f->frames[x].first_child != FLAME_NONE)
		return f->frames[x].first_child;
	return flame_skip(f, x);
}
