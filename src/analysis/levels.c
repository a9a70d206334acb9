/*
 * levels.c - reachability levels (levels.h, reach.h): the names of the
 * levels, the index of the references held less than strongly (a
 * Reference's referent, named by a field of a soft, weak, final or
 * phantom kind), and the strongest level at which each object is
 * reachable.
 *
 * The index is built once per dump, when its graph is: the analyses then
 * ask of an edge only a bit of its object (heap_follows), since a dump has
 * few Reference objects among many.
 */
#include "analysis/levels.h"
#include "analysis/reach.h"

#include "analysis/heap.h"

#include "lib/common/error.h"
#include "util/alloc.h"
#include "util/membudget.h"

#include <stdlib.h>
#include <string.h>

static const char *const level_names[] = {
	[HEAP_LEVEL_STRONG] = "strong",
	[HEAP_LEVEL_SOFT] = "soft",
	[HEAP_LEVEL_WEAK] = "weak",
	[HEAP_LEVEL_FINAL] = "finalizer",
	[HEAP_LEVEL_PHANTOM] = "phantom",
	[HEAP_LEVEL_UNREACHABLE] = "unreachable",
};

const char *heap_level_name(enum heap_level level)
{
	return (unsigned)level <= HEAP_LEVEL_UNREACHABLE ? level_names[level]
							 : NULL;
}

const char *heap_level_reachable(enum heap_level level)
{
	static const char *const words[] = {
		[HEAP_LEVEL_STRONG] = "strongly reachable",
		[HEAP_LEVEL_SOFT] = "softly reachable",
		[HEAP_LEVEL_WEAK] = "weakly reachable",
		[HEAP_LEVEL_FINAL] = "finalizable",
		[HEAP_LEVEL_PHANTOM] = "phantom reachable",
		[HEAP_LEVEL_UNREACHABLE] = "unreachable",
	};

	return (unsigned)level <= HEAP_LEVEL_UNREACHABLE ? words[level] : NULL;
}

int heap_level_parse(const char *name)
{
	if (strcmp(name, "all") == 0)
		return HEAP_LEVEL_PHANTOM;
	for (int l = HEAP_LEVEL_STRONG; l < HEAP_LEVELS; l++)
		if (strcmp(name, level_names[l]) == 0)
			return l;
	return -1;
}

enum heap_level heap_level_of_field_kind(unsigned kind)
{
	switch (kind) {
	case HT_FIELD_SOFT:
		return HEAP_LEVEL_SOFT;
	case HT_FIELD_WEAK:
		return HEAP_LEVEL_WEAK;
	case HT_FIELD_FINAL:
		return HEAP_LEVEL_FINAL;
	case HT_FIELD_PHANTOM:
		return HEAP_LEVEL_PHANTOM;
	default:
		return HEAP_LEVEL_STRONG;
	}
}

bool heap_has_levels(const struct heap *h)
{
	if (h->n_referents)
		return true;
	for (size_t r = 0; r < h->n_roots; r++)
		if (heap_root_is_weak(&h->roots[r]))
			return true;
	return false;
}

enum heap_level heap_ref_level(const struct heap *h, uint32_t object,
			       uint64_t e)
{
	size_t lo = 0, hi = h->n_referents;

	(void)object;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (h->referent_edge[mid] < e)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < h->n_referents && h->referent_edge[lo] == e
		? (enum heap_level)h->referent_level[lo] : HEAP_LEVEL_STRONG;
}

/* ---- The index ------------------------------------------------------------ */

static enum heap_level field_level(const struct heap *h, uint32_t field)
{
	const struct heap_field *f = heap_field_at(h, field);

	return f ? heap_level_of_field_kind(f->kind) : HEAP_LEVEL_STRONG;
}

static bool any_referent_field(const struct heap *h)
{
	for (size_t i = 0; i < h->n_fields; i++)
		if (heap_level_of_field_kind(h->fields[i].kind) !=
		    HEAP_LEVEL_STRONG)
			return true;
	return false;
}

/* Per class slot, whether its layout names a referent field: objects of
 * the other classes that follow their layout need no look. */
static bool *slots_with_referents(const struct heap *h)
{
	size_t slots = h->n_classes + 1;
	bool *has = calloc(slots, sizeof(*has));

	if (!has)
		return NULL;
	for (size_t s = 0; s < slots; s++)
		for (uint64_t i = h->layout_start[s];
		     i < h->layout_start[s + 1]; i++)
			if (field_level(h, h->layout[i]) != HEAP_LEVEL_STRONG)
				has[s] = true;
	return has;
}

static bool may_have_referent(const struct heap *h, const bool *slot_has,
			      uint32_t i)
{
	bool follows = h->field_follows[i / 64] >> (i % 64) & 1;

	return !follows || slot_has[heap_class_slot(h, i)];
}

/* Adds object i's referent edges after the first `at` (only counts them
 * until the arrays exist); returns the count so far. */
static size_t add_referents(struct heap *h, uint32_t i, size_t at)
{
	for (uint64_t e = heap_ref_start(h, i); e < heap_ref_start(h, i + 1); e++) {
		enum heap_level l = field_level(h, heap_ref_field(h, i, e));

		if (l == HEAP_LEVEL_STRONG || h->ref[e] == HEAP_NULL_REF)
			continue;
		if (h->referent_edge) {
			h->referent_edge[at] = e;
			h->referent_level[at] = (uint8_t)l;
			h->has_referent[i / 64] |= 1ULL << (i % 64);
		}
		at++;
	}
	return at;
}

int heap_index_referents(struct heap *h)
{
	bool *slot_has;
	size_t n = 0;

	if (!h->field_follows || !any_referent_field(h))
		return 0;
	slot_has = slots_with_referents(h);
	if (!slot_has)
		return -1;
	for (uint32_t i = 0; i < h->n; i++)
		if (may_have_referent(h, slot_has, i))
			n = add_referents(h, i, n);
	if (n) {
		h->has_referent = calloc((h->n + 63) / 64 + 1,
					 sizeof(*h->has_referent));
		h->referent_edge = alloc_array(n, sizeof(*h->referent_edge));
		h->referent_level = alloc_array(n, sizeof(*h->referent_level));
		if (!h->has_referent || !h->referent_edge ||
		    !h->referent_level) {
			free(slot_has);
			return -1;
		}
		n = 0;
		for (uint32_t i = 0; i < h->n; i++)
			if (may_have_referent(h, slot_has, i))
				n = add_referents(h, i, n);
	}
	h->n_referents = n;
	free(slot_has);
	return 0;
}

/* ---- The strongest level of each object ----------------------------------- */

/* The object whose range of refs holds e. */
static uint32_t edge_source(const struct heap *h, uint64_t e)
{
	uint32_t lo = 0, hi = h->n;

	while (hi - lo > 1) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (heap_ref_start(h, mid) <= e)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

/* Marks `level` what is reached from object o over the references
 * followed at that level, through objects not marked yet; stack holds
 * h->n entries. */
static void mark_from(const struct heap *h, enum heap_level level,
		      uint32_t o, uint8_t *levels, uint32_t *stack)
{
	size_t depth = 0;

	if (o >= h->n || levels[o] != HEAP_LEVEL_UNREACHABLE)
		return;
	levels[o] = (uint8_t)level;
	stack[depth++] = o;
	while (depth) {
		uint32_t v = stack[--depth];

		for (uint64_t e = heap_ref_start(h, v); e < heap_ref_start(h, v + 1);
		     e++) {
			uint32_t t = h->ref[e];

			if (t >= h->n || levels[t] != HEAP_LEVEL_UNREACHABLE ||
			    !heap_follows(h, level, v, e))
				continue;
			levels[t] = (uint8_t)level;
			stack[depth++] = t;
		}
	}
}

/*
 * A level at a time, strongest first. What level L newly reaches is
 * reached through a root that counts from L on (weak roots at weak) or
 * through a referent of level L held by an object reached before: a path
 * into the new part enters it by one of those, since a stronger edge from
 * an object reached before would have been followed then.
 */
int heap_reach_levels(const struct heap *h, uint8_t **out, uint64_t *charged,
		      struct ht_error *err)
{
	uint8_t *levels = budget_array(h->n, 1, charged);
	uint32_t *stack = budget_array(h->n, sizeof(*stack), charged);

	*out = NULL;
	if (!levels || !stack) {
		budget_array_free(levels, h->n, 1, charged);
		budget_array_free(stack, h->n, sizeof(*stack), charged);
		if (mem_budget_exceeded())
			err_plain(err, HT_E_NOMEM, NULL, MEM_BUDGET_MESSAGE,
				  mem_budget_limit());
		else
			err_plain(err, HT_E_NOMEM, NULL,
				  "out of memory computing reachability levels");
		return -1;
	}
	memset(levels, HEAP_LEVEL_UNREACHABLE, h->n);
	for (int l = HEAP_LEVEL_STRONG; l < HEAP_LEVELS; l++) {
		for (size_t i = 0; i < h->n_referents; i++) {
			uint64_t e = h->referent_edge[i];
			uint32_t from = edge_source(h, e);

			if (h->referent_level[i] == l &&
			    levels[from] < HEAP_LEVEL_UNREACHABLE)
				mark_from(h, (enum heap_level)l, h->ref[e],
					  levels, stack);
		}
		for (size_t r = 0; r < h->n_roots; r++)
			if (heap_root_counts(&h->roots[r], (enum heap_level)l))
				mark_from(h, (enum heap_level)l,
					  h->roots[r].object, levels, stack);
	}
	budget_array_free(stack, h->n, sizeof(*stack), charged);
	*out = levels;
	return 0;
}
