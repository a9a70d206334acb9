/*
 * diff.c - two dumps compared by class, by retainer and by what new
 * objects hang under old ones (diff.h).
 *
 * Matching by path needs, per dump, each object's shortest path from the
 * strong roots: one breadth-first search from the roots (in order_roots'
 * order), fields in order, leaves a tree of first discoverers (parent and
 * field per object), and the signature of an object is a hash of its
 * parent's signature, the step's key and its class name; a root-held
 * object's is a hash of the root's key and its class name. What a
 * collection holds is known by what it is, not by where it sits, since a
 * hash table's resize moves its entries to other slots and other chains:
 * an array's element is keyed by the array's class and not its index, and
 * an object that hangs from an object of its own class (a bucket's next
 * entry, a list's next node, a tree's child) takes the signature of the
 * one it hangs from. The objects of one signature are then matched by
 * count, and their retained sizes add up only for those that no object of
 * the same signature dominates, so that nothing counts twice.
 */
#include "analysis/diff.h"
#include "analysis/dominators.h"
#include "analysis/levels.h"
#include "analysis/names.h"
#include "analysis/reach.h"
#include "analysis/root_order.h"

#include "lib/common/error.h"
#include "analysis/relocation.h"
#include "util/alloc.h"
#include "util/membudget.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A path longer than this many objects is shown without its middle. */
#define PATH_SHOWN 10
#define PATH_HEAD 3
#define PATH_TAIL 4

static void *zalloc_array(size_t n, size_t elem)
{
	return calloc(n ? n : 1, elem);
}

/* ---- names -------------------------------------------------------------- */

/* A slot's name as heap_class_name gives it; buf holds 32 bytes. */
static const char *slot_name(const struct heap *h, size_t slot, char *buf)
{
	ht_id id = 0;

	if (slot < h->n_classes) {
		if (h->classes[slot].name)
			return h->classes[slot].name;
		id = h->classes[slot].id;
	}
	snprintf(buf, 32, "?0x%" PRIx64, id);
	return buf;
}

/*
 * The length of a frame's method name without its line: "M.m(M.java:12)"
 * is "M.m(M.java" + ")". A thread stopped at another line of the same
 * method between two dumps still holds its locals in the same frame.
 * Sets *rest to what follows the line (the closing parenthesis), or "".
 */
static size_t method_without_line(const char *method, const char **rest)
{
	size_t len = strlen(method), i;

	*rest = "";
	if (len < 4 || method[len - 1] != ')')
		return len;
	i = len - 1;
	while (i > 0 && isdigit((unsigned char)method[i - 1]))
		i--;
	if (i == len - 1 || i < 2 || method[i - 1] != ':' ||
	    !memchr(method, '(', i))
		return len;
	*rest = method + len - 1;
	return i - 1;
}

/*
 * What stays the same about a root from one run to the next: its
 * container and the name of what the container stands for (the method of
 * a frame, the class of statics, the thread), or its CLR kind (and the
 * class, for the "other" roots that runtimes use for statics). Never an
 * address: those change.
 */
static void root_label(const struct heap *h, const struct heap_root *r,
		       char *buf, size_t len)
{
	const char *what = NULL, *name, *rest = "";
	size_t what_len = 0;

	if (r->container) {
		bool frame = ht_container_is_frame(r->container);

		name = ht_container_name((enum ht_container_type)r->container);
		if (frame && r->id2)
			what = heap_method_name(h, r->id2);
		else if (r->container == HT_C_RT_CLASS)
			what = heap_class_name_by_id(h, r->id1);
		else if (r->container == HT_C_RT_THREAD)
			what = heap_thread_name(h, r->id1);
		if (what)
			what_len = frame ? method_without_line(what, &rest)
				: strlen(what);
		name = name ? name : "container";
	} else {
		name = r->kind == HEAP_NO_KIND ? NULL
			: ht_root_kind_name((enum ht_root_kind)r->kind);
		if (r->kind == HT_ROOT_OTHER && r->root_id)
			what = heap_class_name_by_id(h, r->root_id);
		snprintf(buf, len, "%s%sroot%s%s%s", name ? name : "",
			 name ? " " : "", what ? " (" : "", what ? what : "",
			 what ? ")" : "");
		return;
	}
	/* a method's name is an event's string: far below INT_MAX */
	snprintf(buf, len, "%s%s%.*s%s%s", name, what ? " (" : "",
		 (int)what_len, what ? what : "", rest, what ? ")" : "");
}

/* ---- classes ------------------------------------------------------------ */

/* A used class slot of one side, on its way to a name group. */
struct slot_entry {
	char *name;
	uint8_t side;      /* 0: a, 1: b */
	size_t slot;
};

static int compare_entries(const void *x, const void *y)
{
	const struct slot_entry *a = x, *b = y;
	int c = strcmp(a->name, b->name);

	if (c)
		return c;
	if (a->side != b->side)
		return a->side < b->side ? -1 : 1;
	return (a->slot > b->slot) - (a->slot < b->slot);
}

/* Per class slot of one side: objects, bytes, and its name group. */
struct side_classes {
	uint64_t *count, *bytes;
	uint32_t *group;
};

static void side_free(struct side_classes *s)
{
	free(s->count);
	free(s->bytes);
	free(s->group);
}

static int side_count(const struct heap *h, struct side_classes *s)
{
	size_t n = h->n_classes + 1;

	s->count = zalloc_array(n, sizeof(*s->count));
	s->bytes = zalloc_array(n, sizeof(*s->bytes));
	s->group = alloc_array(n, sizeof(*s->group));
	if (!s->count || !s->bytes || !s->group)
		return -1;
	for (uint32_t i = 0; i < h->n; i++) {
		size_t slot = heap_class_slot(h, i);

		s->count[slot]++;
		s->bytes[slot] += heap_size(h, i);
	}
	return 0;
}

static int add_entries(const struct heap *h, const struct side_classes *s,
		       uint8_t side, struct slot_entry *e, size_t *n)
{
	char buf[32];

	for (size_t slot = 0; slot <= h->n_classes; slot++) {
		if (!s->count[slot])
			continue;
		e[*n].name = strdup(slot_name(h, slot, buf));
		if (!e[*n].name)
			return -1;
		e[*n].side = side;
		e[*n].slot = slot;
		(*n)++;
	}
	return 0;
}

/* One row per name, and each used slot's group. */
static int group_names(struct diff *d, struct side_classes *sa,
		       struct side_classes *sb)
{
	size_t cap = d->a->n_classes + d->b->n_classes + 2, n = 0, g = 0;
	struct slot_entry *e = alloc_array(cap, sizeof(*e));
	int rc = -1;

	if (!e)
		return -1;
	if (add_entries(d->a, sa, 0, e, &n) < 0 ||
	    add_entries(d->b, sb, 1, e, &n) < 0)
		goto out;
	qsort(e, n, sizeof(*e), compare_entries);
	d->classes = zalloc_array(n, sizeof(*d->classes));
	if (!d->classes)
		goto out;
	for (size_t i = 0; i < n; i++) {
		struct side_classes *s = e[i].side ? sb : sa;
		struct diff_class *c;

		if (g == 0 || strcmp(e[i].name, d->classes[g - 1].name) != 0) {
			d->classes[g].name = e[i].name;
			e[i].name = NULL;
			g++;
		}
		c = &d->classes[g - 1];
		s->group[e[i].slot] = (uint32_t)(g - 1);
		if (e[i].side) {
			c->count.after += s->count[e[i].slot];
			c->bytes.after += s->bytes[e[i].slot];
		} else {
			c->count.before += s->count[e[i].slot];
			c->bytes.before += s->bytes[e[i].slot];
		}
	}
	d->n_classes = g;
	rc = 0;
out:
	for (size_t i = 0; i < n; i++)
		free(e[i].name);
	free(e);
	return rc;
}

/* Each name group's retained size in one dump: the objects that no object
 * of that name dominates (heap_retained_by_class). */
static int class_retained(struct diff *d, bool after,
			  const struct side_classes *s)
{
	const struct heap *h = after ? d->b : d->a;
	const struct heap_dominators *dm = after ? d->db : d->da;
	uint64_t *retained = zalloc_array(d->n_classes, sizeof(*retained));

	if (!retained || heap_retained_by_class(h, dm, s->group, d->n_classes,
						retained) < 0) {
		free(retained);
		return -1;
	}
	for (size_t g = 0; g < d->n_classes; g++) {
		struct diff_value *r = &d->classes[g].retained;

		*(after ? &r->after : &r->before) = retained[g];
	}
	free(retained);
	return 0;
}

static int compare_change(struct diff_value x, struct diff_value y)
{
	int64_t a = diff_change(x), b = diff_change(y);

	return a != b ? (a > b ? -1 : 1) : 0;
}

static int compare_classes(const void *x, const void *y)
{
	const struct diff_class *a = x, *b = y;
	int c;

	if ((c = compare_change(a->bytes, b->bytes)) ||
	    (c = compare_change(a->retained, b->retained)) ||
	    (c = compare_change(a->count, b->count)))
		return c;
	return strcmp(a->name, b->name);
}

static int compute_classes(struct diff *d)
{
	struct side_classes sa = {0}, sb = {0};
	int rc = -1;

	if (side_count(d->a, &sa) == 0 && side_count(d->b, &sb) == 0 &&
	    group_names(d, &sa, &sb) == 0 &&
	    class_retained(d, false, &sa) == 0 &&
	    class_retained(d, true, &sb) == 0) {
		qsort(d->classes, d->n_classes, sizeof(*d->classes),
		      compare_classes);
		rc = 0;
	}
	side_free(&sa);
	side_free(&sb);
	return rc;
}

/* ---- shortest paths and their signatures -------------------------------- */

/* A JVM hidden class's name ends in "/0x" and the address its class was
 * made at ("KnownHeap$$Lambda/0x00007f3c18003a00"), which changes from run
 * to run: the length of such a suffix at p, else 0. */
static size_t hidden_class_suffix(const char *p)
{
	size_t n = 3;

	if (strncmp(p, "/0x", 3) != 0)
		return 0;
	while (isxdigit((unsigned char)p[n]))
		n++;
	return n > 3 ? n : 0;
}

/* The hash of a name in a path's key, hidden classes' addresses left
 * out so that two runs give one key. */
static uint64_t fnv64(const char *s)
{
	uint64_t v = 0xcbf29ce484222325ull;

	for (const char *p = s; *p; p++) {
		p += hidden_class_suffix(p);
		if (!*p)
			break;
		v = (v ^ (unsigned char)*p) * 0x100000001b3ull;
	}
	return v;
}

static uint64_t mix(uint64_t h, uint64_t v)
{
	uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/*
 * The tree of first discoverers of a breadth-first search from the strong
 * roots: parent[x] (HEAP_VIRTUAL_ROOT for an object a root holds,
 * HEAP_NONE when no strong root reaches it) and via[x] (the field of the
 * parent, or the root's index; UINT32_MAX past 2^32 - 1). With sig, each
 * reached object's path signature too, and order, the reached objects in
 * the order the search found them (n_reached of them): parents first.
 */
struct root_tree {
	uint32_t *parent, *via;
	uint64_t *sig;
	uint32_t *order;
	uint32_t n_reached;
};

/* Per class slot: the hash of its name, and whether it is an array's. */
struct class_keys {
	uint64_t *hash;
	uint8_t *array;
};

static void class_keys_free(struct class_keys *k)
{
	free(k->hash);
	free(k->array);
}

static int class_keys_make(const struct heap *h, struct class_keys *k)
{
	char buf[32];

	k->hash = alloc_array(h->n_classes + 1, sizeof(*k->hash));
	k->array = alloc_array(h->n_classes + 1, sizeof(*k->array));
	if (!k->hash || !k->array)
		return -1;
	for (size_t s = 0; s <= h->n_classes; s++) {
		const char *name = slot_name(h, s, buf);

		k->hash[s] = fnv64(name);
		k->array[s] = s < h->n_classes && class_name_is_array(name);
	}
	return 0;
}

/* A root's key: its static field where the trace names it ("static
 * App.head"), else its kind and what names it (root_label). */
static uint64_t root_key(const struct heap *h, const struct heap_root *r)
{
	char label[NAME_TEXT];

	if (heap_field_at(h, r->field))
		return fnv64(root_text(h, r, label));
	root_label(h, r, label, sizeof(label));
	return fnv64(label);
}

struct root_order {
	uint64_t key;
	size_t root;
	enum heap_root_rank rank;
};

static int compare_root_order(const void *x, const void *y)
{
	const struct root_order *a = x, *b = y;

	if (a->rank != b->rank)
		return a->rank < b->rank ? -1 : 1;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return (a->root > b->root) - (a->root < b->root);
}

/*
 * The strong roots in the order the search visits them: by rank
 * (root_order.h: static fields first), then by key. An object several roots
 * hold (a static field and a runtime's table of statics, say) is then
 * found through the same root whatever order the runtime listed its
 * roots in, so two runs of one program give it one path.
 */
static struct root_order *order_roots(const struct heap *h,
				      enum heap_level level, size_t *n)
{
	struct root_order *o = alloc_array(h->n_roots ? h->n_roots : 1,
					   sizeof(*o));

	*n = 0;
	if (!o)
		return NULL;
	for (size_t i = 0; i < h->n_roots; i++) {
		const struct heap_root *r = &h->roots[i];

		if (r->object == HEAP_NONE || !heap_root_counts(r, level))
			continue;
		o[*n].key = root_key(h, r);
		o[*n].root = i;
		o[*n].rank = heap_root_rank(h, r);
		(*n)++;
	}
	qsort(o, *n, sizeof(*o), compare_root_order);
	return o;
}

/* Queues the objects the roots of one lifetime hold (frames' locals or
 * the others) that the search has not reached yet. */
static int hold_from_roots(const struct heap *h, enum heap_level level,
			   bool frames, struct root_tree *t,
			   const struct class_keys *ck, uint32_t *queue,
			   uint32_t *tail)
{
	size_t n;
	struct root_order *o = order_roots(h, level, &n);

	if (!o)
		return -1;
	for (size_t k = 0; k < n; k++) {
		size_t i = o[k].root;
		uint32_t x = h->roots[i].object;

		if (t->parent[x] != HEAP_NONE ||
		    (o[k].rank == HEAP_ROOT_FRAME) != frames)
			continue;
		t->parent[x] = HEAP_VIRTUAL_ROOT;
		t->via[x] = i < UINT32_MAX ? (uint32_t)i : UINT32_MAX;
		queue[(*tail)++] = x;
		if (t->sig)
			t->sig[x] = mix(o[k].key,
					ck->hash[heap_class_slot(h, x)]);
	}
	free(o);
	return 0;
}

/* A step's key: the field it goes through where the trace names it
 * (step_text); else its position among the object's references. */
static uint64_t step_key(const struct heap *h, uint32_t from, uint64_t e)
{
	char buf[NAME_TEXT];

	if (!heap_has_fields(h))
		return e - heap_ref_start(h, from);
	return fnv64(step_text(h, from, e, buf));
}

/* The key of a step to an array's element: the same for every slot. */
#define ELEMENT_KEY 0x656c656d656e7473ull

/* Whether y, which x holds, is a link of a chain of one class (the next
 * entry of a hash bucket, the next node of a list, a tree's child): of
 * x's class, and not a class object (those stand each for their own
 * class). */
static bool chain_link(const struct heap *h, uint32_t x, uint32_t y)
{
	size_t slot = heap_class_slot(h, x);

	return slot < h->n_classes && heap_class_slot(h, y) == slot &&
	       !heap_class_object_name(h, y);
}

/* The signature of y, found through reference e of x. */
static uint64_t step_signature(const struct heap *h,
			       const struct class_keys *ck,
			       const struct root_tree *t, uint32_t x,
			       uint64_t e, uint32_t y)
{
	size_t slot = heap_class_slot(h, x);
	uint64_t key;

	if (chain_link(h, x, y))
		return t->sig[x];
	key = ck->array[slot] ? mix(ck->hash[slot], ELEMENT_KEY)
			      : step_key(h, x, e);
	return mix(mix(t->sig[x], key), ck->hash[heap_class_slot(h, y)]);
}

/* The breadth-first search from what the queue holds between *head and
 * *tail, each object reached first by the field it is found through. */
static void search_from(const struct heap *h, enum heap_level level,
			struct root_tree *t, const struct class_keys *ck,
			uint32_t *queue, uint32_t *head, uint32_t *tail)
{
	while (*head < *tail) {
		uint32_t x = queue[(*head)++];
		uint64_t first = heap_ref_start(h, x), end = heap_ref_start(h, x + 1);

		for (uint64_t e = first; e < end; e++) {
			uint32_t y = h->ref[e];
			uint64_t field = e - first;

			if (y >= h->n || t->parent[y] != HEAP_NONE ||
			    !heap_follows(h, level, x, e))
				continue;
			t->parent[y] = x;
			t->via[y] = field < UINT32_MAX ? (uint32_t)field
						       : UINT32_MAX;
			if (t->sig)
				t->sig[y] = step_signature(h, ck, t, x, e, y);
			queue[(*tail)++] = y;
		}
	}
}

/* Over the roots and references that count at the level of the
 * dominators (heap_follows). Its arrays are charged to *charged, as
 * root_tree_free gives them back; the search's queue stays as t->order
 * when signatures are made. */
static int root_tree_build(const struct heap *h, enum heap_level level,
			   bool signatures, struct root_tree *t,
			   uint64_t *charged)
{
	uint32_t *queue = budget_array(h->n, sizeof(*queue), charged);
	struct class_keys ck = {0};
	uint32_t head = 0, tail = 0;
	int rc = -1;

	t->parent = budget_array(h->n, sizeof(*t->parent), charged);
	t->via = budget_array(h->n, sizeof(*t->via), charged);
	t->sig = signatures ? budget_array(h->n, sizeof(*t->sig), charged)
			    : NULL;
	if (!queue || !t->parent || !t->via || (signatures && !t->sig) ||
	    (signatures && class_keys_make(h, &ck) < 0))
		goto out;
	for (uint32_t i = 0; i < h->n; i++)
		t->parent[i] = HEAP_NONE;
	/* the roots that outlive a call first, to the end of what they
	 * reach; frames' locals then only for what nothing else holds: an
	 * object a request's frame happens to hold (Tomcat's context, in a
	 * valve's local) keeps the path it has when no request runs */
	if (hold_from_roots(h, level, false, t, &ck, queue, &tail) < 0)
		goto out;
	search_from(h, level, t, &ck, queue, &head, &tail);
	if (hold_from_roots(h, level, true, t, &ck, queue, &tail) < 0)
		goto out;
	search_from(h, level, t, &ck, queue, &head, &tail);
	if (signatures) {
		t->order = queue;
		t->n_reached = tail;
		queue = NULL;
	}
	rc = 0;
out:
	budget_array_free(queue, h->n, sizeof(*queue), charged);
	class_keys_free(&ck);
	return rc;
}

/* Frees what is left of the tree of h. */
static void root_tree_free(const struct heap *h, struct root_tree *t,
			   uint64_t *charged)
{
	budget_array_free(t->parent, h->n, sizeof(*t->parent), charged);
	budget_array_free(t->via, h->n, sizeof(*t->via), charged);
	budget_array_free(t->sig, h->n, sizeof(*t->sig), charged);
	budget_array_free(t->order, h->n, sizeof(*t->order), charged);
}

/* ---- retainers that grew ------------------------------------------------ */

struct rows {
	struct diff_retainer *row;
	size_t n, cap;
};

static int add_row(struct rows *r, const struct diff_retainer *row)
{
	if (ALLOC_GROW(r->row, r->n + 1, r->cap) < 0)
		return -1;
	r->row[r->n++] = *row;
	return 0;
}

static int compare_retainers(const void *x, const void *y)
{
	const struct diff_retainer *a = x, *b = y;
	int c = compare_change(a->retained, b->retained);

	if (c)
		return c;
	if (a->retained.after != b->retained.after)
		return a->retained.after > b->retained.after ? -1 : 1;
	return (a->after > b->after) - (a->after < b->after);
}

/* By id: each reachable object of B against its match. */
static int retainers_by_id(struct diff *d, uint8_t *old, struct rows *rows)
{
	for (uint32_t x = 0; x < d->b->n; x++) {
		uint32_t a = d->a_of_b[x];
		struct diff_retainer row = {
			.after = x,
			.before = a,
			.objects = {a != HEAP_NONE, 1},
			.retained = {a != HEAP_NONE ? d->da->retained[a] : 0,
				     d->db->retained[x]},
		};

		old[x] = a != HEAP_NONE;
		if (d->db->idom[x] == HEAP_NONE)
			continue;
		if (row.retained.after > row.retained.before &&
		    add_row(rows, &row) < 0)
			return -1;
	}
	return 0;
}

struct sig_object {
	uint64_t sig;
	uint32_t object;
};

static int compare_sig_objects(const void *x, const void *y)
{
	const struct sig_object *a = x, *b = y;

	if (a->sig != b->sig)
		return a->sig < b->sig ? -1 : 1;
	return (a->object > b->object) - (a->object < b->object);
}

/*
 * The objects of one dump grouped by signature: the reached objects sorted
 * by signature, then index (s, n of them); per object its group, the rank
 * of its signature among the dump's (HEAP_NONE when the search did not
 * reach it); per group the retained size of its objects.
 */
struct sig_groups {
	struct sig_object *s;
	size_t n, n_groups;
	uint32_t *group;
	uint64_t *retained;
};

static void sig_groups_free(const struct heap *h, struct sig_groups *g,
			    uint64_t *charged)
{
	budget_array_free(g->s, h->n, sizeof(*g->s), charged);
	budget_array_free(g->group, h->n, sizeof(*g->group), charged);
	free(g->retained);
}

/* The end of the run of equal signatures that starts at i. */
static size_t run_end(const struct sig_object *s, size_t n, size_t i)
{
	size_t j = i;

	while (j < n && s[j].sig == s[i].sig)
		j++;
	return j;
}

/*
 * Each group's retained size: the retained sizes of its objects that no
 * object of the group is above in the dominator tree, as a chain's nodes,
 * all of one signature, are retained by its first. A preorder walk keeps,
 * per group, how many of its objects are open above the current one.
 */
static int group_retained(const struct heap *h,
			  const struct heap_dominators *dm,
			  struct sig_groups *g)
{
	uint32_t *open = zalloc_array(g->n_groups, sizeof(*open));
	struct dom_tree t;
	uint32_t x;

	g->retained = zalloc_array(g->n_groups, sizeof(*g->retained));
	if (!open || !g->retained || dom_tree_build(h, dm, &t) < 0) {
		free(open);
		return -1;
	}
	for (x = t.top; x != HEAP_NONE;) {
		uint32_t k = g->group[x];

		if (k != HEAP_NONE && open[k]++ == 0)
			g->retained[k] += dm->retained[x];
		if (t.first[x] != HEAP_NONE) {
			x = t.first[x];
			continue;
		}
		for (;;) { /* x is done: close it and the ancestors it ends */
			if (g->group[x] != HEAP_NONE)
				open[g->group[x]]--;
			if (t.next[x] != HEAP_NONE) {
				x = t.next[x];
				break;
			}
			x = dm->idom[x];
			if (x == HEAP_VIRTUAL_ROOT) {
				x = HEAP_NONE;
				break;
			}
		}
	}
	dom_tree_free(&t);
	free(open);
	return 0;
}

static int group_signatures(const struct heap *h, const struct root_tree *t,
			    const struct heap_dominators *dm,
			    struct sig_groups *g, uint64_t *charged)
{
	g->s = budget_array(h->n, sizeof(*g->s), charged);
	g->group = budget_array(h->n, sizeof(*g->group), charged);
	if (!g->s || !g->group)
		return -1;
	for (uint32_t x = 0; x < h->n; x++) {
		g->group[x] = HEAP_NONE;
		if (t->parent[x] != HEAP_NONE)
			g->s[g->n++] = (struct sig_object){t->sig[x], x};
	}
	qsort(g->s, g->n, sizeof(*g->s), compare_sig_objects);
	for (size_t i = 0; i < g->n; g->n_groups++) {
		size_t j = run_end(g->s, g->n, i);

		for (; i < j; i++)
			g->group[g->s[i].object] = (uint32_t)g->n_groups;
	}
	return group_retained(h, dm, g);
}

/*
 * Which objects of B are old: of a signature A has m objects of and B n,
 * min(m, n) are, the rest new. The search's order picks them: first the
 * objects whose parent is old (or a root), so that what a new object
 * holds is new with it, then the others while the count allows.
 */
static void match_by_count(const struct heap *b, const struct root_tree *t,
			   const uint32_t *group, uint32_t *quota,
			   uint8_t *old)
{
	memset(old, 0, b->n);
	for (uint32_t k = 0; k < t->n_reached; k++) {
		uint32_t x = t->order[k], p = t->parent[x];

		if ((p == HEAP_VIRTUAL_ROOT || old[p]) && quota[group[x]]) {
			old[x] = 1;
			quota[group[x]]--;
		}
	}
	for (uint32_t k = 0; k < t->n_reached; k++) {
		uint32_t x = t->order[k];

		if (!old[x] && quota[group[x]]) {
			old[x] = 1;
			quota[group[x]]--;
		}
	}
}

/* By path: the signatures of both dumps merged, one row per signature
 * that retains more in B, and B's objects matched by count. */
static int retainers_by_path(struct diff *d, const struct root_tree *ta,
			     const struct root_tree *tb, uint8_t *old,
			     struct rows *rows)
{
	struct sig_groups ga = {0}, gb = {0};
	uint32_t *quota = NULL;
	size_t i = 0, j = 0;
	int rc = -1;

	if (group_signatures(d->a, ta, d->da, &ga, &d->charged) < 0 ||
	    group_signatures(d->b, tb, d->db, &gb, &d->charged) < 0)
		goto out;
	quota = zalloc_array(gb.n_groups, sizeof(*quota));
	if (!quota)
		goto out;
	while (j < gb.n) {
		const struct sig_object *sa = ga.s, *sb = gb.s;
		size_t j2 = run_end(sb, gb.n, j), i2;
		uint32_t k = gb.group[sb[j].object];
		struct diff_retainer row = {.after = sb[j].object,
					    .before = HEAP_NONE};

		while (i < ga.n && sa[i].sig < sb[j].sig)
			i++;
		i2 = i < ga.n && sa[i].sig == sb[j].sig
			? run_end(sa, ga.n, i) : i;
		row.objects = (struct diff_value){i2 - i, j2 - j};
		row.retained.after = gb.retained[k];
		if (i2 > i) {
			size_t m = i2 - i, n = j2 - j;

			row.before = sa[i].object;
			row.retained.before = ga.retained[ga.group[row.before]];
			quota[k] = (uint32_t)(m < n ? m : n);
		}
		if (row.retained.after > row.retained.before &&
		    add_row(rows, &row) < 0)
			goto out;
		i = i2;
		j = j2;
	}
	match_by_count(d->b, tb, gb.group, quota, old);
	rc = 0;
out:
	free(quota);
	sig_groups_free(d->a, &ga, &d->charged);
	sig_groups_free(d->b, &gb, &d->charged);
	return rc;
}

/* ---- new objects under old ones ----------------------------------------- */

static int compare_holders(const void *x, const void *y)
{
	const struct diff_holder *a = x, *b = y;

	if (a->new_bytes != b->new_bytes)
		return a->new_bytes > b->new_bytes ? -1 : 1;
	if (a->new_objects != b->new_objects)
		return a->new_objects > b->new_objects ? -1 : 1;
	return (a->after > b->after) - (a->after < b->after);
}

/*
 * A preorder walk of B's dominator tree carries down the nearest old
 * object above each object (near[]); each new object is counted for it,
 * or as unheld when there is none.
 */
static int compute_holders(struct diff *d, const uint8_t *old)
{
	const struct heap *b = d->b;
	uint32_t *near = budget_array(b->n, sizeof(*near), &d->charged);
	uint64_t *count = budget_array(b->n, sizeof(*count), &d->charged);
	uint64_t *bytes = budget_array(b->n, sizeof(*bytes), &d->charged);
	struct dom_tree t = {0};
	size_t n = 0;
	int rc = -1;

	if (!near || !count || !bytes || dom_tree_build(b, d->db, &t) < 0)
		goto out;
	memset(count, 0, (size_t)b->n * sizeof(*count));
	memset(bytes, 0, (size_t)b->n * sizeof(*bytes));
	for (uint32_t x = t.top; x != HEAP_NONE;
	     x = dom_tree_next(&t, d->db, x)) {
		uint32_t p = d->db->idom[x];
		uint32_t above = p == HEAP_VIRTUAL_ROOT ? HEAP_NONE
			: old[p] ? p : near[p];

		near[x] = above;
		if (old[x])
			continue;
		d->new_objects++;
		d->new_bytes += heap_size(b, x);
		if (above == HEAP_NONE) {
			d->unheld_objects++;
			d->unheld_bytes += heap_size(b, x);
		} else if (count[above]++ == 0) {
			n++;
		}
		if (above != HEAP_NONE)
			bytes[above] += heap_size(b, x);
	}
	d->holders = alloc_array(n, sizeof(*d->holders));
	if (!d->holders)
		goto out;
	for (uint32_t x = 0; x < b->n; x++) {
		if (!count[x])
			continue;
		d->holders[d->n_holders++] = (struct diff_holder){
			.after = x,
			.before = d->a_of_b ? d->a_of_b[x] : HEAP_NONE,
			.new_objects = count[x],
			.new_bytes = bytes[x],
		};
	}
	qsort(d->holders, d->n_holders, sizeof(*d->holders), compare_holders);
	rc = 0;
out:
	dom_tree_free(&t);
	budget_array_free(near, b->n, sizeof(*near), &d->charged);
	budget_array_free(count, b->n, sizeof(*count), &d->charged);
	budget_array_free(bytes, b->n, sizeof(*bytes), &d->charged);
	return rc;
}

/* ---- the comparison ----------------------------------------------------- */

static void totals(struct diff *d)
{
	d->objects = (struct diff_value){d->a->n, d->b->n};
	d->bytes = (struct diff_value){d->a->total_bytes, d->b->total_bytes};
	d->retained = (struct diff_value){
		d->a->total_bytes - d->da->unreachable_bytes,
		d->b->total_bytes - d->db->unreachable_bytes,
	};
}

static int compare(struct diff *d)
{
	bool by_path = d->matching == DIFF_BY_PATH;
	struct root_tree ta = {0}, tb = {0};
	struct rows rows = {0};
	uint8_t *old = budget_array(d->b->n, 1, &d->charged);
	int rc = -1;

	if (!old || compute_classes(d) < 0 ||
	    root_tree_build(d->a, d->da->level, by_path, &ta,
			    &d->charged) < 0 ||
	    root_tree_build(d->b, d->db->level, by_path, &tb,
			    &d->charged) < 0)
		goto out;
	if (by_path ? retainers_by_path(d, &ta, &tb, old, &rows)
		    : retainers_by_id(d, old, &rows))
		goto out;
	if (rows.n) /* rows.row is NULL when nothing grew */
		qsort(rows.row, rows.n, sizeof(*rows.row), compare_retainers);
	d->retainers = rows.row;
	d->n_retainers = rows.n;
	rows.row = NULL;
	if (compute_holders(d, old) < 0)
		goto out;
	/* the trees stay for the paths the report shows */
	d->parent_a = ta.parent;
	d->via_a = ta.via;
	d->parent_b = tb.parent;
	d->via_b = tb.via;
	ta.parent = ta.via = tb.parent = tb.via = NULL;
	rc = 0;
out:
	free(rows.row);
	budget_array_free(old, d->b->n, 1, &d->charged);
	root_tree_free(d->a, &ta, &d->charged);
	root_tree_free(d->b, &tb, &d->charged);
	return rc;
}

int diff_compute(struct diff *d, const struct heap *a,
		 const struct heap_dominators *da, const struct heap *b,
		 const struct heap_dominators *db, const uint32_t *a_of_b,
		 struct ht_error *err)
{
	memset(d, 0, sizeof(*d));
	d->a = a;
	d->b = b;
	d->da = da;
	d->db = db;
	d->a_of_b = a_of_b;
	d->matching = a_of_b ? DIFF_BY_ID : DIFF_BY_PATH;
	totals(d);
	if (compare(d) == 0)
		return 0;
	diff_free(d);
	if (mem_budget_exceeded())
		err_plain(err, HT_E_NOMEM, NULL, MEM_BUDGET_MESSAGE,
			  mem_budget_limit());
	else
		err_plain(err, HT_E_NOMEM, NULL, "out of memory comparing "
			  "dumps of %" PRIu32 " and %" PRIu32 " objects",
			  a->n, b->n);
	return -1;
}

void diff_free(struct diff *d)
{
	for (size_t i = 0; i < d->n_classes; i++)
		free(d->classes[i].name);
	free(d->classes);
	free(d->retainers);
	free(d->holders);
	free(d->parent_a);
	free(d->via_a);
	free(d->parent_b);
	free(d->via_b);
	mem_budget_release(d->charged);
	memset(d, 0, sizeof(*d));
}

/* ---- paths as text ------------------------------------------------------ */

/* " > [1] Node", or with the trace's fields " > [Holder.cache] Node". */
static void put_step(FILE *f, const struct heap *h, const uint32_t *parent,
		     const uint32_t *via, uint32_t x, bool first)
{
	char buf[NAME_TEXT];
	const char *step;

	fputs(" > ", f);
	/* a step is bracketed: step_text's "[1]" already is, a field's
	 * name is not */
	if (!first) {
		step = step_text(h, parent[x], heap_ref_start(h, parent[x]) + via[x],
				 buf);
		fprintf(f, step[0] == '[' ? "%s " : "[%s] ", step);
	}
	fputs(object_class_text(h, x, buf), f);
}

char *diff_path(const struct diff *d, bool after, uint32_t object)
{
	const struct heap *h = after ? d->b : d->a;
	const uint32_t *parent = after ? d->parent_b : d->parent_a;
	const uint32_t *via = after ? d->via_b : d->via_a;
	char label[512], *text = NULL;
	size_t k = 0, size;
	uint32_t *chain;
	FILE *f;

	if (object >= h->n || !parent || parent[object] == HEAP_NONE)
		return strdup("(unreachable)");
	for (uint32_t x = object; x != HEAP_VIRTUAL_ROOT; x = parent[x])
		k++;
	chain = alloc_array(k, sizeof(*chain));
	if (!chain)
		return NULL;
	for (uint32_t x = object, i = (uint32_t)k; x != HEAP_VIRTUAL_ROOT;
	     x = parent[x])
		chain[--i] = x;
	f = open_memstream(&text, &size);
	if (!f) {
		free(chain);
		return NULL;
	}
	if (via[chain[0]] < h->n_roots && heap_has_fields(h))
		root_text(h, &h->roots[via[chain[0]]], label);
	else if (via[chain[0]] < h->n_roots)
		root_label(h, &h->roots[via[chain[0]]], label, sizeof(label));
	else
		snprintf(label, sizeof(label), "root");
	fputs(label, f);
	for (size_t i = 0; i < k; i++) {
		if (k > PATH_SHOWN && i == PATH_HEAD) {
			fprintf(f, " > ... (%zu more)",
				k - PATH_HEAD - PATH_TAIL);
			i = k - PATH_TAIL - 1;
			continue;
		}
		put_step(f, h, parent, via, chain[i], i == 0);
	}
	free(chain);
	if (fclose(f) != 0) {
		free(text);
		return NULL;
	}
	return text;
}

/* ---- figures by name ---------------------------------------------------- */

static uint64_t pick(struct diff_value count, struct diff_value bytes,
		     struct diff_value retained, enum diff_metric m, bool after)
{
	struct diff_value v = m == DIFF_COUNT ? count
		: m == DIFF_BYTES ? bytes : retained;

	return after ? v.after : v.before;
}

void diff_total(const struct diff *d, enum diff_metric m, struct diff_value *v)
{
	v->before = pick(d->objects, d->bytes, d->retained, m, false);
	v->after = pick(d->objects, d->bytes, d->retained, m, true);
}

bool diff_class_value(const struct diff *d, const char *name,
		      enum diff_metric m, struct diff_value *v)
{
	for (size_t i = 0; i < d->n_classes; i++) {
		const struct diff_class *c = &d->classes[i];

		if (strcmp(c->name, name) != 0)
			continue;
		v->before = pick(c->count, c->bytes, c->retained, m, false);
		v->after = pick(c->count, c->bytes, c->retained, m, true);
		return true;
	}
	v->before = v->after = 0;
	return false;
}

static uint64_t object_figure(const struct heap *h,
			      const struct heap_dominators *dm, uint32_t x,
			      enum diff_metric m)
{
	if (x == HEAP_NONE)
		return 0;
	return m == DIFF_COUNT ? 1 : m == DIFF_BYTES ? heap_size(h, x)
						    : dm->retained[x];
}

void diff_object_value(const struct diff *d, ht_id id, enum diff_metric m,
		       struct diff_value *v)
{
	uint32_t b = heap_find(d->b, id), a;

	if (b != HEAP_NONE && d->a_of_b)
		a = d->a_of_b[b];
	else
		a = heap_find(d->a, id);
	v->before = object_figure(d->a, d->da, a, m);
	v->after = object_figure(d->b, d->db, b, m);
}

/* ---- the match by identity ---------------------------------------------- */

/* Per serial number of the tracker: the object's index in each dump. */
struct matcher {
	const struct heap *a, *b;
	int64_t last_dump;       /* the later of the two */
	uint32_t *in_a, *in_b;
	uint64_t serials;
	struct reloc *tracker;
};

#define MATCH_DONE 2 /* stops the replay: both dumps were seen */

static void on_step(void *ctx, const struct reloc_step *s)
{
	struct matcher *m = ctx;

	if (s->kind != RELOC_SEEN || s->object >= m->serials)
		return;
	if (s->dump == (int64_t)m->a->dump)
		m->in_a[s->object] = heap_find(m->a, s->to);
	if (s->dump == (int64_t)m->b->dump)
		m->in_b[s->object] = heap_find(m->b, s->to);
}

static int on_event(void *ctx, const struct ht_event *ev,
		    const struct ht_replay_state *st)
{
	return reloc_on_event(((struct matcher *)ctx)->tracker, ev, st);
}

static int on_dump_begin(void *ctx, const struct ht_replay_state *st)
{
	return reloc_on_dump_begin(((struct matcher *)ctx)->tracker, st);
}

static int on_dump_end(void *ctx, const struct ht_replay_state *st)
{
	struct matcher *m = ctx;
	int rc = reloc_on_dump_end(m->tracker, st);

	if (rc == 0 && st->dump >= m->last_dump)
		return MATCH_DONE;
	return rc;
}

/* A tracker that watches every object it will number. */
static struct reloc *watching_tracker(struct matcher *m, bool survivors)
{
	struct reloc_hooks hooks = {.ctx = m, .step = on_step};
	struct reloc *t = reloc_new(survivors, &hooks);

	if (!t)
		return NULL;
	/* an API to watch every object would spare this list; serials are
	 * numbered from 0, so appending them in order is cheap */
	for (uint64_t s = 0; s < m->serials; s++) {
		if (reloc_watch_object(t, (uint32_t)s) < 0) {
			reloc_free(t);
			return NULL;
		}
	}
	return t;
}

static int replay_matching(struct ht_reader *r, struct matcher *m,
			   struct ht_error *err)
{
	struct ht_replay_callbacks cb = {
		.on_dump_begin = on_dump_begin,
		.on_dump_end = on_dump_end,
	};
	struct ht_replay_summary summary;
	int rc;

	for (int t = HT_EV_FIRST; t <= HT_EV_LAST; t++)
		cb.on_event[t] = on_event;
	rc = ht_replay(r, &cb, m, &summary, err);
	if (rc == 0 || rc == MATCH_DONE || (rc < 0 && summary.read_error))
		return 0;
	if (rc > 0)
		err_plain(err, HT_E_LIMIT, NULL, "%s", reloc_error(m->tracker));
	return -1;
}

int diff_match_by_relocation(struct ht_reader *r, const struct heap *a,
			     const struct heap *b, uint64_t events,
			     uint32_t **a_of_b, struct ht_error *err)
{
	struct matcher m = {
		.a = a,
		.b = b,
		.last_dump = (int64_t)(a->dump > b->dump ? a->dump : b->dump),
		.serials = events < UINT32_MAX ? events : UINT32_MAX,
	};
	uint32_t *match = alloc_array(b->n, sizeof(*match));
	int rc = -1;

	*a_of_b = NULL;
	m.in_a = alloc_array(m.serials, sizeof(*m.in_a));
	m.in_b = alloc_array(m.serials, sizeof(*m.in_b));
	if (!match || !m.in_a || !m.in_b)
		goto oom;
	/* a dump of a trace is itself, object by object */
	for (uint32_t i = 0; i < b->n; i++)
		match[i] = a->dump == b->dump ? i : HEAP_NONE;
	if (a->dump == b->dump)
		goto done;
	for (uint64_t s = 0; s < m.serials; s++)
		m.in_a[s] = m.in_b[s] = HEAP_NONE;
	m.tracker = watching_tracker(&m,
				     ht_reader_header(r)->reports_survivors);
	if (!m.tracker)
		goto oom;
	rc = replay_matching(r, &m, err);
	reloc_free(m.tracker);
	if (rc < 0)
		goto out;
	for (uint64_t s = 0; s < m.serials; s++)
		if (m.in_b[s] != HEAP_NONE && m.in_a[s] != HEAP_NONE)
			match[m.in_b[s]] = m.in_a[s];
done:
	*a_of_b = match;
	match = NULL;
	rc = 0;
	goto out;
oom:
	err_plain(err, HT_E_NOMEM, NULL,
		  "out of memory matching the objects of dumps %" PRIu64
		  " and %" PRIu64, a->dump, b->dump);
out:
	free(match);
	free(m.in_a);
	free(m.in_b);
	return rc;
}
