/*
 * tables.c - the tables a GC of the CoreCLR profiler reads or fills
 * without a lock, and their growth between GCs: the objects of the
 * non-GC heap (listed outside GCs, published whole), the dependent
 * handles of a walk (open addressing, filled inside the pause), and the
 * generation bounds. The recorder thread replaces a table only while no
 * GC runs (swap_begin, swap_done).
 */
#include "recorders/clr/clr.h"

#include <sched.h>
#include <stdlib.h>
#include <string.h>

/* ---- the non-GC heap ------------------------------------------------------- */

static void frozen_free(struct frozen *f)
{
	if (!f)
		return;
	free(f->ids);
	free(f->classes);
	free(f->sizes);
	free(f->ref_start);
	free(f->refs);
	free(f->sorted);
	free(f);
}

static int by_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return (x > y) - (x < y);
}

struct ref_list {
	uint64_t *refs;
	size_t n, cap;
	bool failed;
};

static clr_bool collect_ref(clr_uptr object, clr_uptr *ref, void *data)
{
	struct ref_list *l = data;

	(void)object;
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 256;
		uint64_t *r = realloc(l->refs, cap * sizeof(*r));

		if (!r) {
			l->failed = true;
			return 0;
		}
		l->refs = r;
		l->cap = cap;
	}
	l->refs[l->n++] = *ref;
	return 1;
}

/* Lists the non-GC heap (ICorProfilerInfo14): id, class, size and
 * references of each object. NULL when the runtime has none to list. */
static struct frozen *list_frozen(void)
{
	struct clr_object_enum *e = NULL;
	struct frozen *f;
	struct ref_list refs = {0};
	clr_ulong count = 0;
	size_t cap;

	if (state.info_level < 14 ||
	    CLR_FAILED(state.info->vtbl->EnumerateNonGCObjects(state.info,
							       &e)) || !e)
		return NULL;
	if (CLR_FAILED(e->vtbl->GetCount(e, &count)))
		count = 0;
	cap = (size_t)count + 64;
	f = calloc(1, sizeof(*f));
	if (!f)
		goto fail;
	f->ids = malloc(cap * sizeof(*f->ids));
	f->classes = malloc(cap * sizeof(*f->classes));
	f->sizes = malloc(cap * sizeof(*f->sizes));
	f->ref_start = malloc((cap + 1) * sizeof(*f->ref_start));
	if (!f->ids || !f->classes || !f->sizes || !f->ref_start)
		goto fail;
	for (;;) {
		clr_uptr batch[256];
		clr_ulong got = 0;

		if (CLR_FAILED(e->vtbl->Next(e, 256, batch, &got)) || got == 0)
			break;
		for (clr_ulong i = 0; i < got && f->n < cap; i++) {
			clr_uptr cls = 0;

			if (CLR_FAILED(state.info->vtbl->GetClassFromObject(
				    state.info, batch[i], &cls)))
				continue;
			f->ids[f->n] = batch[i];
			f->classes[f->n] = cls;
			f->sizes[f->n] = object_size(batch[i], cls);
			f->ref_start[f->n] = refs.n;
			if (state.info_level >= 10)
				state.info->vtbl->EnumerateObjectReferences(
					state.info, batch[i], collect_ref,
					&refs);
			f->n++;
			saw_class(cls);
		}
	}
	e->vtbl->Release(e);
	e = NULL;
	if (refs.failed)
		goto fail;
	f->ref_start[f->n] = refs.n;
	f->refs = refs.refs;
	f->n_refs = refs.n;
	f->sorted = malloc((f->n ? f->n : 1) * sizeof(*f->sorted));
	if (!f->sorted)
		goto fail_refs;
	memcpy(f->sorted, f->ids, f->n * sizeof(*f->sorted));
	qsort(f->sorted, f->n, sizeof(*f->sorted), by_id);
	return f;
fail_refs:
	refs.refs = NULL; /* f's now */
fail:
	if (e)
		e->vtbl->Release(e);
	free(refs.refs);
	frozen_free(f);
	return NULL;
}

/*
 * Publishes a new list. A dumped GC's walk holds the list it began with
 * (frozen_walk_begin) until the dump ends, and the recorder thread may
 * refresh while it does (after the GC before it, asked for late): the list
 * it replaces is then retired, and freed only by a refresh that finds no
 * walk reading. One list is retired at a time; while it cannot be freed,
 * the current list stays and this refresh is left to the next.
 */
void refresh_frozen(void)
{
	struct frozen *f, *old;

	if (atomic_load(&state.frozen_readers) == 0) {
		frozen_free(state.frozen_retired);
		state.frozen_retired = NULL;
	}
	if (state.frozen_retired)
		return;
	if (!(f = list_frozen()))
		return;
	old = atomic_exchange(&state.frozen, f);
	if (atomic_load(&state.frozen_readers) == 0)
		frozen_free(old);
	else
		state.frozen_retired = old;
}

/*
 * Does the runtime's own walk report the non-GC heap's objects? .NET 8, 9
 * and 10 do (their heap walk goes through the frozen segments as well), so
 * the dump's end lists them again only when the walk did not: each object
 * once per dump, whatever the version. A dumped GC's walk holds the list
 * taken before it and notes whether an object it reports is on it. The
 * runtime walks a frozen segment whole or not at all, so one object tells
 * for all; when the process had no list yet (the first GC is dumped), the
 * first objects the walk reports are kept and looked up in the list taken
 * at the dump's end.
 */
void frozen_walk_begin(void)
{
	atomic_fetch_add(&state.frozen_readers, 1);
	atomic_store(&state.walk_frozen, atomic_load(&state.frozen));
	atomic_store(&state.walk_first_n, 0);
	set_flag(&state.walk_saw_frozen, false);
}

static bool frozen_has(const struct frozen *f, uint64_t id)
{
	size_t lo = 0, hi = f->n;

	if (!f->n || id < f->sorted[0] || id > f->sorted[f->n - 1])
		return false;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->sorted[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->n && f->sorted[lo] == id;
}

/* In the walk, for each object it reports: lock-free. */
void frozen_walk_saw(uint64_t id)
{
	const struct frozen *f;
	size_t k;

	if (flag(&state.walk_saw_frozen))
		return;
	f = atomic_load_explicit(&state.walk_frozen, memory_order_relaxed);
	if (f && f->n) {
		if (frozen_has(f, id))
			set_flag(&state.walk_saw_frozen, true);
		return;
	}
	if (atomic_load_explicit(&state.walk_first_n, memory_order_relaxed) >=
	    WALK_FIRST_MAX)
		return;
	k = atomic_fetch_add(&state.walk_first_n, 1);
	if (k < WALK_FIRST_MAX)
		atomic_store_explicit(&state.walk_first[k], id,
				      memory_order_relaxed);
}

/* Before the dump's end lists the heap anew: the walk's list is let go. */
void frozen_walk_end(void)
{
	atomic_store(&state.walk_frozen, NULL);
	atomic_fetch_sub(&state.frozen_readers, 1);
}

/* At the dump's end, with f the list taken then: did the walk report
 * the non-GC heap's objects itself? */
bool frozen_walked(const struct frozen *f)
{
	size_t n = atomic_load(&state.walk_first_n);

	if (flag(&state.walk_saw_frozen))
		return true;
	for (size_t i = 0; f && i < n && i < WALK_FIRST_MAX; i++)
		if (frozen_has(f, atomic_load(&state.walk_first[i])))
			return true;
	return false;
}

/* ---- dependent handles ----------------------------------------------------- */

static size_t hash_id(uint64_t id)
{
	id ^= id >> 33;
	id *= 0xff51afd7ed558ccdull;
	id ^= id >> 33;
	return (size_t)id;
}

void dependents_clear(void)
{
	for (size_t i = 0; i <= state.dependents_mask; i++) {
		atomic_store_explicit(&state.dependents[i].key, 0,
				      memory_order_relaxed);
		atomic_store_explicit(&state.dependents[i].value, 0,
				      memory_order_relaxed);
	}
	atomic_store(&state.dependents_used, 0);
}

/* A pair the table has no room for: the key's reference to its value is
 * recorded at once, as the first part of the key's object_references,
 * which its own report (the walk's, or the non-GC heap's) continues. */
static void dependent_now(uint64_t key, uint64_t value)
{
	clr_uptr cls = 0;
	uint64_t size;
	uint32_t flag = HT_REF_DEPENDENT;

	if (CLR_FAILED(state.info->vtbl->GetClassFromObject(state.info, key,
							    &cls)) ||
	    !(size = object_size(key, cls))) {
		atomic_fetch_add(&state.dependents_dropped, 1);
		return;
	}
	atomic_fetch_add(&state.dependents_early, 1);
	ht_object_references(state.trace.rec, key, cls, size,
			     HT_OBJ_MORE_REFERENCES, 1, &value, &flag, -1,
			     HT_RESULT_OK);
}

/* Lock-free, inside the pause. */
void dependent_add(uint64_t key, uint64_t value)
{
	size_t mask = state.dependents_mask;

	if (atomic_fetch_add(&state.dependents_used, 1) >= mask - mask / 8) {
		dependent_now(key, value);
		return;
	}
	for (size_t i = hash_id(key) & mask;; i = (i + 1) & mask) {
		uint64_t empty = 0;

		if (atomic_compare_exchange_strong(&state.dependents[i].key,
						   &empty, key)) {
			atomic_store(&state.dependents[i].value, value);
			return;
		}
	}
}

/* The values that key keeps alive, up to max; how many. */
size_t dependents_of(uint64_t key, uint64_t *values, size_t max)
{
	size_t mask = state.dependents_mask, n = 0;

	if (atomic_load_explicit(&state.dependents_used,
				 memory_order_relaxed) == 0)
		return 0;
	for (size_t i = hash_id(key) & mask;; i = (i + 1) & mask) {
		uint64_t k = atomic_load_explicit(&state.dependents[i].key,
						  memory_order_relaxed);

		if (k == 0)
			return n;
		if (k == key && n < max)
			values[n++] = atomic_load(&state.dependents[i].value);
	}
}

/* The recorder thread, to replace tables: true when no GC runs and none
 * will start until swap_done. */
static bool swap_begin(void)
{
	int idle = TABLES_IDLE;

	return atomic_compare_exchange_strong(&state.tables, &idle,
					      TABLES_SWAPPING);
}

static void swap_done(void)
{
	atomic_store(&state.tables, TABLES_IDLE);
}

/* A GC's start: waits out a swap (pointer stores only). */
void tables_enter_gc(void)
{
	for (;;) {
		int idle = TABLES_IDLE;

		if (atomic_compare_exchange_weak(&state.tables, &idle,
						 TABLES_IN_GC))
			return;
		if (idle == TABLES_IN_GC)
			return; /* a GC whose finish never came */
		sched_yield();
	}
}

void tables_leave_gc(void)
{
	atomic_store(&state.tables, TABLES_IDLE);
}

/* Between GCs: room for twice as many pairs as the last walk had. */
void dependents_make_room(void)
{
	size_t want = 2 * atomic_load(&state.dependents_peak), cap;
	struct dependent *d, *old;

	if (want < (state.dependents_mask + 1) / 2)
		return;
	cap = state.dependents_mask + 1;
	while (cap < 2 * want)
		cap *= 2;
	d = calloc(cap, sizeof(*d));
	if (!d)
		return;
	if (!swap_begin()) {
		free(d); /* a GC runs: after the next one */
		return;
	}
	old = state.dependents;
	state.dependents = d;
	state.dependents_mask = cap - 1;
	atomic_store(&state.dependents_used, 0);
	swap_done();
	free(old);
}

/* ---- GCs ------------------------------------------------------------------- */

void record_bounds(void)
{
	clr_ulong n = 0;
	size_t m;

	if (CLR_FAILED(state.info->vtbl->GetGenerationBounds(
		    state.info, (clr_ulong)state.bounds_cap, &n,
		    state.clr_bounds)))
		return;
	if (n > state.bounds_needed)
		atomic_store(&state.bounds_needed, n);
	m = n < state.bounds_cap ? n : state.bounds_cap;
	if (m < n)
		atomic_fetch_add(&state.bounds_cut, 1);
	for (size_t i = 0; i < m; i++)
		state.bounds[i] = (struct ht_generation_range){
			.generation = state.clr_bounds[i].generation,
			.start = state.clr_bounds[i].start,
			.length = state.clr_bounds[i].length,
			.reserved = state.clr_bounds[i].reserved,
		};
	ht_generation_bounds(state.trace.rec, m, state.bounds);
}

static void swap(struct clr_generation_range **c,
		 struct clr_generation_range **clr_bounds,
		 struct ht_generation_range **h,
		 struct ht_generation_range **bounds)
{
	struct clr_generation_range *tc = *clr_bounds;
	struct ht_generation_range *th = *bounds;

	*clr_bounds = *c;
	*bounds = *h;
	*c = tc;
	*h = th;
}

/* Between GCs: room for the most ranges seen, and more. */
void bounds_make_room(void)
{
	size_t need = atomic_load(&state.bounds_needed), cap;
	struct clr_generation_range *c;
	struct ht_generation_range *h;

	if (need + need / 2 < state.bounds_cap)
		return;
	cap = 2 * need;
	c = calloc(cap, sizeof(*c));
	h = calloc(cap, sizeof(*h));
	if (!c || !h || !swap_begin()) {
		free(c); /* or a GC runs: after the next one */
		free(h);
		return;
	}
	swap(&c, &state.clr_bounds, &h, &state.bounds);
	state.bounds_cap = cap;
	swap_done();
	free(c);
	free(h);
}
