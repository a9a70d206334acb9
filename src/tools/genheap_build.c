/*
 * genheap_build.c - ht-genheap's three passes over the heap: the objects
 * laid out in allocation order (pass 1), an owner allocated before it
 * for every live object, or a new tree (pass 2), and the other fields
 * pointing near, to popular objects or far (pass 3), with the trees the
 * huge arrays hold.
 */
#include "tools/genheap_internal.h"

/* ---- Laying out the objects in allocation order (pass 1) ----------------- */

struct layout {
	struct heap *h;
	const struct catalogue *cat;
	const struct plan *plan;
	struct rng *r;
	uint64_t garbage_left; /* of the current run */
};

/* Leaves: boxed values, plain objects, and primitive arrays (mostly
 * short, as strings' characters are; a few large buffers). */
static void lay_leaf(struct layout *l, size_t i, uint8_t mark)
{
	const struct catalogue *cat = l->cat;
	uint16_t c;
	uint64_t len;

	if (!rng_chance(l->r, PRIM_ARRAY_SHARE)) {
		c = pick_from(&cat->by_fields[0], l->r);
		genheap_append(l->h, i, c, cat->v[c].size, 0, mark);
		return;
	}
	c = pick_from(&cat->prim_arrays, l->r);
	len = rng_chance(l->r, 0.01) ? rng_log_uniform(l->r, 256, 65536) :
				       rng_geometric(l->r, 20.0);
	genheap_append(l->h, i, c, align8(16 + len * cat->v[c].size), 0, mark);
}

static void lay_ref_array(struct layout *l, size_t i, size_t len,
			  uint8_t mark)
{
	uint16_t c = pick_from(&l->cat->ref_arrays, l->r);

	genheap_append(l->h, i, c, align8(16 + 8 * (uint64_t)len), len, mark);
}

static uint8_t next_garbage_mark(struct layout *l)
{
	if (l->garbage_left == 0 && rng_chance(l->r, l->plan->garbage_start))
		l->garbage_left = 1 + rng_geometric(l->r, GARBAGE_RUN_MEAN - 1);
	if (l->garbage_left == 0)
		return 0;
	l->garbage_left--;
	return M_GARBAGE;
}

/* The threads' own objects come first, after the heap's first object. */
static void lay_thread_object(struct layout *l, size_t i, unsigned t)
{
	uint16_t c = l->cat->thread;

	genheap_append(l->h, i, c, l->cat->v[c].size, l->cat->v[c].fields, 0);
	l->h->threads[t] = (uint32_t)i;
}

static void lay_ordinary(struct layout *l, size_t i, uint64_t ordinary)
{
	const struct plan *p = l->plan;
	uint64_t extra;
	unsigned fields;
	uint8_t mark;
	uint16_t c;

	if (ordinary >= 1 && ordinary <= N_THREADS) {
		lay_thread_object(l, i, ordinary - 1);
		return;
	}
	/* The first object roots the heap: never garbage. */
	mark = i ? next_garbage_mark(l) : 0;
	if (rng_chance(l->r, p->array_share)) {
		lay_ref_array(l, i, array_length(l->r), mark);
		return;
	}
	if (rng_chance(l->r, p->leaf_share)) {
		lay_leaf(l, i, mark);
		return;
	}
	extra = rng_geometric(l->r, p->extra_fields);
	fields = 1 + (unsigned)(extra < ARRAY_CAP ? extra : ARRAY_CAP);
	if (fields > MAX_FIELDS) {
		lay_ref_array(l, i, fields, mark);
		return;
	}
	c = pick_from(&l->cat->by_fields[fields], l->r);
	genheap_append(l->h, i, c, l->cat->v[c].size, fields, mark);
}

/* A list allocated node after node: each node owns the next one. Fields
 * are next, [prev,] item; the item is decided with the other fields. */
static size_t lay_chain(struct layout *l, size_t i, const struct feature *f)
{
	struct heap *h = l->h;
	uint16_t c = f->doubly ? l->cat->linked_node : l->cat->single_node;
	size_t head = i, last = i + f->length - 1;

	for (size_t k = head; k <= last; k++) {
		uint8_t mark = M_NO_ADOPT | M_CHAIN | (k > head ? M_OWNED : 0);
		uint32_t *field;

		genheap_append(h, k, c, l->cat->v[c].size, f->doubly ? 3 : 2,
			    mark);
		field = &h->ref[h->first[k]];
		field[0] = k < last ? (uint32_t)(k + 1) :
			   f->circular ? (uint32_t)head : NO_REF;
		if (f->doubly)
			field[1] = k > head ? (uint32_t)(k - 1) :
				   f->circular ? (uint32_t)last : NO_REF;
	}
	return last + 1;
}

static size_t lay_huge_array(struct layout *l, size_t i,
			     const struct feature *f)
{
	uint16_t c = rng_chance(l->r, 0.5) ? l->cat->object_array :
					      l->cat->node_array;

	genheap_append(l->h, i, c, align8(16 + 8 * (uint64_t)f->length),
		    f->length, M_NO_ADOPT | M_HUGE);
	list_push(&l->h->tables, (uint32_t)i);
	return i + 1;
}

void lay_out_heap(struct heap *h, const struct catalogue *cat,
		  const struct plan *p, struct rng *r)
{
	struct layout l = { .h = h, .cat = cat, .plan = p, .r = r };
	size_t i = 0, f = 0;
	uint64_t ordinary = 0;

	h->id[0] = HEAP_BASE;
	while (i < h->n) {
		if (f < p->n_features && p->features[f].at <= ordinary) {
			const struct feature *ft = &p->features[f++];

			i = ft->kind == F_CHAIN ? lay_chain(&l, i, ft) :
						  lay_huge_array(&l, i, ft);
			continue;
		}
		lay_ordinary(&l, i++, ordinary);
		ordinary++;
	}
	for (i = 0; i < h->n; i++)
		h->garbage += is_garbage(h, i);
}

/* ---- Owners (pass 2) ----------------------------------------------------- */

/* A recent object with fields still free to adopt new objects. */
struct adopter {
	uint32_t obj;
	uint32_t used;
};

/* Per object while owners are assigned: its depth in its tree, and
 * whether the tree is public. */
#define DEPTH_MASK 0x7fu
#define PUBLIC_TREE 0x80u

struct adopters {
	struct adopter v[OWNER_WINDOW];
	size_t n;
	uint8_t *tree; /* DEPTH_MASK | PUBLIC_TREE */
};

static void adopters_push(struct adopters *a, uint32_t obj)
{
	if (a->n == OWNER_WINDOW) {
		/* The oldest half is done building: forget it at once. */
		memmove(a->v, a->v + OWNER_WINDOW / 2,
			(OWNER_WINDOW / 2) * sizeof(a->v[0]));
		a->n = OWNER_WINDOW / 2;
	}
	a->v[a->n].obj = obj;
	a->v[a->n].used = 0;
	a->n++;
}

/* The owner is most often the newest adopter: data is built depth-first. */
static int adopt(struct heap *h, struct adopters *a, struct rng *r,
		 size_t child)
{
	size_t back, at;
	struct adopter *e;

	if (a->n == 0)
		return 0;
	back = (size_t)rng_geometric(r, 0.7);
	at = back < a->n ? a->n - 1 - back : a->n - 1;
	e = &a->v[at];
	h->ref[h->first[e->obj] + e->used++] = (uint32_t)child;
	a->tree[child] = (uint8_t)(a->tree[e->obj] + 1); /* the flag stays */
	if (e->used == fanout(h, e->obj)) {
		memmove(e, e + 1, (a->n - at - 1) * sizeof(*e));
		a->n--;
	}
	return 1;
}

/*
 * Gives every live object one owner allocated before it, or makes it the
 * head of a new tree (an orphan, to be held by a root or a table) when no
 * recent object can adopt it or a new unit of work starts. Owners come
 * before their objects, so no ownership cycle exists; the cycles come from
 * the other fields. The objects near the top of a tree are the ones that
 * other trees may share: deeper ones stay private to their tree, so that
 * trees retain what they own, as in real programs.
 */
void assign_owners(struct heap *h, struct rng *r,
		   struct index_list *orphans)
{
	struct adopters a = { .n = 0 };

	a.tree = xcalloc(h->n, 1);
	for (size_t i = 0; i < h->n; i++) {
		uint8_t mark = h->mark[i];
		unsigned depth;

		if (mark & M_GARBAGE)
			continue;
		if (rng_chance(r, 1.0 / CONTEXT_MEAN))
			a.n = 0;
		if (mark & M_OWNED) {
			a.tree[i] = DEPTH_LIMIT; /* a list node: private */
		} else if (!adopt(h, &a, r, i)) {
			list_push(orphans, (uint32_t)i);
			h->mark[i] |= M_HEAD;
			a.tree[i] = rng_chance(r, PUBLIC_SHARE) ?
				    PUBLIC_TREE : 0;
		}
		depth = a.tree[i] & DEPTH_MASK;
		if ((a.tree[i] & PUBLIC_TREE) && depth >= 1 &&
		    depth <= SHARED_DEPTH && !(mark & M_CHAIN))
			list_push(&h->shared, (uint32_t)i);
		if (!(mark & M_NO_ADOPT) && fanout(h, i) > 0 &&
		    depth < DEPTH_LIMIT)
			adopters_push(&a, (uint32_t)i);
	}
	free(a.tree);
}

/* ---- The other fields (pass 3) ------------------------------------------- */

struct filler {
	struct heap *h;
	struct rng *r;
	double null_share;
};

/* Near: most often back to something just allocated, sometimes forward,
 * but within the object's own tree: what a unit of work builds refers to
 * itself, not to the insides of its neighbours' data. */
static size_t near_target(struct filler *f, size_t i)
{
	const struct heap *h = f->h;
	uint64_t d = 1 + rng_geometric(f->r, 12.0);
	size_t j = i;

	/* A head has nothing of its tree before it. */
	if (rng_chance(f->r, 0.7) && !(h->mark[i] & M_HEAD)) {
		for (; d && j > 0 && !(h->mark[j] & M_HEAD); d--)
			j--;
	} else {
		for (; d && j + 1 < h->n && !(h->mark[j + 1] & M_HEAD); d--)
			j++;
	}
	/* Garbage may point anywhere; the live go back towards i (live)
	 * rather than on into another tree. */
	while (!is_garbage(h, i) && is_garbage(h, j))
		j = j < i ? j + 1 : j - 1;
	return j;
}

static size_t popular_target(struct filler *f)
{
	double u = rng_unit(f->r);

	return f->h->popular[(size_t)((double)f->h->n_popular * u * u)];
}

static size_t far_target(struct filler *f)
{
	const struct index_list *shared = &f->h->shared;

	if (shared->n == 0) /* a tiny heap */
		return live_from(f->h, rng_below(f->r, f->h->n));
	return shared->v[rng_below(f->r, shared->n)];
}

static uint32_t ordinary_target(struct filler *f, size_t i)
{
	double u = rng_unit(f->r);

	if (u < 0.75)
		return (uint32_t)near_target(f, i);
	return (uint32_t)(u < 0.90 ? popular_target(f) : far_target(f));
}

/* A list's items: values kept elsewhere, often shared. */
static uint32_t item_target(struct filler *f)
{
	return (uint32_t)(rng_chance(f->r, 0.3) ? popular_target(f) :
						   far_target(f));
}

/* Besides the trees it holds, a huge array is an index of shared objects
 * over much of the heap, in address order. */
static uint32_t huge_target(struct filler *f, size_t k, size_t len)
{
	const struct index_list *shared = &f->h->shared;
	size_t at, stride;

	if (shared->n == 0)
		return live_from(f->h, rng_below(f->r, f->h->n));
	stride = shared->n / len ? shared->n / len : 1;
	at = (k * shared->n / len + rng_below(f->r, stride)) % shared->n;
	return shared->v[at];
}

static void fill_object(struct filler *f, size_t i)
{
	struct heap *h = f->h;
	uint32_t *field = &h->ref[h->first[i]];
	size_t len = fanout(h, i);
	uint8_t mark = h->mark[i];

	for (size_t k = 0; k < len; k++) {
		if (field[k] != UNSET)
			continue;
		if (rng_chance(f->r, f->null_share))
			field[k] = NO_REF;
		else if (mark & M_HUGE)
			field[k] = huge_target(f, k, len);
		else if (mark & M_CHAIN)
			field[k] = item_target(f);
		else
			field[k] = ordinary_target(f, i);
	}
}

/* Interned strings, singletons, enum constants: a few objects that very
 * many refer to, and whose subgraphs are shared. */
static void choose_popular(struct heap *h, struct rng *r)
{
	size_t n = h->n / 4000;

	if (n < 8)
		n = 8;
	if (n > 4096)
		n = 4096;
	h->popular = xcalloc(n, sizeof(*h->popular));
	h->n_popular = n;
	for (size_t k = 0; k < n; k++)
		h->popular[k] = h->shared.n ?
			h->shared.v[rng_below(r, h->shared.n)] :
			live_from(h, rng_below(r, h->n));
}

/* The share of undecided fields left null so that the heap ends with
 * `refs` references per object. */
static double null_share(const struct heap *h, double refs)
{
	uint64_t set = 0, unset = 0;
	double want, share;

	for (uint64_t s = 0; s < h->slots; s++) {
		if (h->ref[s] == UNSET)
			unset++;
		else if (h->ref[s] != NO_REF)
			set++;
	}
	if (unset == 0)
		return 0;
	want = refs * (double)h->n - (double)set;
	share = 1.0 - want / (double)unset;
	return share < 0 ? 0 : share > 0.95 ? 0.95 : share;
}

/* A free field of table t, as a hash table fills: anywhere, then the next
 * free one. UINT64_MAX when the table is full. */
static uint64_t free_table_field(const struct heap *h, size_t t,
				 struct rng *r)
{
	size_t len = fanout(h, t);
	uint64_t at = rng_below(r, len);

	for (size_t probe = 0; probe < len; probe++) {
		uint64_t s = h->first[t] + (at + probe) % len;

		if (h->ref[s] == UNSET)
			return s;
	}
	return UINT64_MAX;
}

/* The trees that hold a huge array must hang off roots: held by arrays,
 * two of them could hold each other, and nothing else. A tree is all the
 * objects from its head to the next head. */
static void root_trees_of_tables(struct heap *h)
{
	for (size_t k = 0; k < h->tables.n; k++) {
		size_t i = h->tables.v[k];

		while (!(h->mark[i] & M_HEAD))
			i--;
		h->mark[i] |= M_ROOTED;
	}
}

/* Caches and registries: huge arrays hold a share of the trees, and so
 * retain them. A tree goes into a table that existed before it, so that
 * the earlier dumps of a growing heap do not lose it. */
void hold_trees_in_tables(struct heap *h, struct index_list *orphans,
			  struct rng *r)
{
	size_t kept = 0, older = 0;

	root_trees_of_tables(h);
	for (size_t k = 0; k < orphans->n; k++) {
		uint32_t o = orphans->v[k];
		uint64_t s = UINT64_MAX;

		/* The orphans come in address order, as the tables do. */
		while (older < h->tables.n && h->tables.v[older] < o)
			older++;
		if (older && !(h->mark[o] & M_ROOTED) &&
		    rng_chance(r, TABLE_HELD_SHARE))
			s = free_table_field(
				h, h->tables.v[rng_below(r, older)], r);
		if (s == UINT64_MAX)
			orphans->v[kept++] = o;
		else
			h->ref[s] = o;
	}
	orphans->n = kept;
}

void fill_fields(struct heap *h, struct rng *r, double refs)
{
	struct filler f = { .h = h, .r = r };

	choose_popular(h, r);
	f.null_share = null_share(h, refs);
	for (size_t i = 0; i < h->n; i++)
		fill_object(&f, i);
}
