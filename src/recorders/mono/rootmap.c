/*
 * rootmap.c - registered root ranges: writers under a mutex outside the
 * pauses, a lock-free and malloc-free reader inside them (rootmap.h).
 */
#include "recorders/mono/rootmap.h"

#include <stdlib.h>
#include <string.h>

static struct rootmap_table *table_new(size_t cap)
{
	struct rootmap_table *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->cap = cap;
	t->slots = calloc(cap, sizeof(*t->slots));
	t->sorted = calloc(cap, sizeof(*t->sorted));
	if (!t->slots || !t->sorted) {
		free(t->slots);
		free(t->sorted);
		free(t);
		return NULL;
	}
	return t;
}

static void table_free(struct rootmap_table *t)
{
	free(t->slots);
	free(t->sorted);
	free(t);
}

int rootmap_init(struct rootmap *m, size_t initial_cap)
{
	struct rootmap_table *t;

	memset(m, 0, sizeof(*m));
	t = table_new(initial_cap ? initial_cap : 256);
	if (!t)
		return -1;
	if (pthread_mutex_init(&m->lock, NULL) != 0) {
		table_free(t);
		return -1;
	}
	atomic_init(&m->table, t);
	atomic_init(&m->dropped, 0);
	return 0;
}

void rootmap_destroy(struct rootmap *m)
{
	struct rootmap_table *t = atomic_load(&m->table), *next;

	if (t)
		table_free(t);
	for (t = m->retired; t; t = next) {
		next = t->retired_next;
		table_free(t);
	}
	pthread_mutex_destroy(&m->lock);
	memset(m, 0, sizeof(*m));
}

static bool lock(struct rootmap *m, bool in_pause)
{
	if (in_pause ? pthread_mutex_trylock(&m->lock) == 0 :
		       pthread_mutex_lock(&m->lock) == 0)
		return true;
	atomic_fetch_add_explicit(&m->dropped, 1, memory_order_relaxed);
	return false;
}

/* A bigger table with the live slots of t, published; t is retired, not
 * freed: the reader may still hold it from the last pause. That is why
 * it is not grown with util/alloc.h, which reallocates in place; calloc
 * checks the size product. */
static struct rootmap_table *grow(struct rootmap *m, struct rootmap_table *t)
{
	struct rootmap_table *n = table_new(t->cap * 2);
	size_t j = 0;

	if (!n)
		return NULL;
	for (size_t i = 0; i < t->cap; i++) {
		if (!atomic_load_explicit(&t->slots[i].live,
					  memory_order_relaxed))
			continue;
		n->slots[j].r = t->slots[i].r;
		atomic_init(&n->slots[j].live, 1);
		j++;
	}
	atomic_store_explicit(&m->table, n, memory_order_release);
	t->retired_next = m->retired;
	m->retired = t;
	return n;
}

void rootmap_add(struct rootmap *m, uintptr_t start, size_t size,
		 uint8_t source, uint64_t id, bool in_pause)
{
	struct rootmap_table *t;

	if (size == 0 || start + size < start)
		return; /* a root by descriptor, not address: none to find */
	if (!lock(m, in_pause))
		return;
	t = atomic_load_explicit(&m->table, memory_order_relaxed);
	if (m->n_live == t->cap && !(t = grow(m, t))) {
		atomic_fetch_add_explicit(&m->dropped, 1, memory_order_relaxed);
		pthread_mutex_unlock(&m->lock);
		return;
	}
	for (size_t i = 0; i < t->cap; i++) {
		struct rootmap_slot *s = &t->slots[i];

		if (atomic_load_explicit(&s->live, memory_order_relaxed))
			continue;
		s->r = (struct root_range){.start = start, .end = start + size,
					   .id = id, .source = source};
		/* fields first: a reader trusts live slots only */
		atomic_store_explicit(&s->live, 1, memory_order_release);
		m->n_live++;
		break;
	}
	pthread_mutex_unlock(&m->lock);
}

void rootmap_remove(struct rootmap *m, uintptr_t start, bool in_pause)
{
	struct rootmap_table *t;

	if (!lock(m, in_pause))
		return;
	t = atomic_load_explicit(&m->table, memory_order_relaxed);
	for (size_t i = 0; i < t->cap; i++) {
		struct rootmap_slot *s = &t->slots[i];

		if (atomic_load_explicit(&s->live, memory_order_relaxed) &&
		    s->r.start == start) {
			atomic_store_explicit(&s->live, 0,
					      memory_order_release);
			m->n_live--;
			break;
		}
	}
	pthread_mutex_unlock(&m->lock);
}

/* Heap sort by start: qsort may allocate, and this runs in a pause. */
static void ranges_sift_down(struct root_range *a, size_t i, size_t n)
{
	for (;;) {
		size_t big = i, l = 2 * i + 1, r = l + 1;
		struct root_range tmp;

		if (l < n && a[l].start > a[big].start)
			big = l;
		if (r < n && a[r].start > a[big].start)
			big = r;
		if (big == i)
			return;
		tmp = a[i];
		a[i] = a[big];
		a[big] = tmp;
		i = big;
	}
}

static void sort_ranges(struct root_range *a, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		ranges_sift_down(a, i, n);
	for (size_t end = n; end > 1; end--) {
		struct root_range tmp = a[0];

		a[0] = a[end - 1];
		a[end - 1] = tmp;
		ranges_sift_down(a, 0, end - 1);
	}
}

void rootmap_freeze(struct rootmap *m)
{
	struct rootmap_table *t = atomic_load_explicit(&m->table,
						       memory_order_acquire);
	size_t n = 0;

	for (size_t i = 0; i < t->cap; i++)
		if (atomic_load_explicit(&t->slots[i].live,
					 memory_order_acquire))
			t->sorted[n++] = t->slots[i].r;
	sort_ranges(t->sorted, n);
	t->n_sorted = n;
	m->frozen = t;
}

const struct root_range *rootmap_find(const struct rootmap *m, uintptr_t addr)
{
	const struct rootmap_table *t = m->frozen;
	size_t lo = 0, hi;

	if (!t)
		return NULL;
	/* the last range that starts at or before addr */
	hi = t->n_sorted;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->sorted[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0 || addr >= t->sorted[lo - 1].end)
		return NULL;
	return &t->sorted[lo - 1];
}
