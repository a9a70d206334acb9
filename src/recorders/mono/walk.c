/*
 * walk.c - the heap walk of a dump in the Mono profiler: Mono's walk
 * callback becomes object_references events inside the GC (an object
 * with many references in several parts), with the fields the
 * references were read from and strings' contents (--values); walked
 * old objects prove the old generation's dead after a major GC.
 */
#include "recorders/mono/mono.h"

#include <mono/metadata/mono-gc.h>

#include <stdlib.h>
#include <string.h>

/* ---- the heap walk ------------------------------------------------------- */

static void piece_record(struct piece *p, bool more)
{
	if (!more && p->has_text) {
		struct ht_event ev = {
			.type = HT_EV_OBJECT_REFERENCES,
			.u.object_references = {
				.id = p->id, .class_id = p->class_id,
				.size = p->size, .count = p->n,
				.refs = p->refs, .ref_fields = p->ref_fields,
				.has_generation = p->generation >= 0,
				.generation = (uint32_t)(p->generation >= 0
							 ? p->generation : 0),
				.result = HT_RESULT_OK, .array = &p->text,
			},
		};

		ht_record_event(state.trace.rec, &ev);
		p->has_text = false;
	} else {
		ht_object_references_fields(state.trace.rec, p->id, p->class_id,
					    p->size,
					    more ? HT_OBJ_MORE_REFERENCES : 0,
					    p->n, p->refs, NULL,
					    p->ref_fields, p->generation,
					    HT_RESULT_OK);
	}
	p->n = 0;
}

/*
 * In the walk, with --values: a string's UTF-16 units, read from the
 * object with Mono's plain getters (a length and a pointer into the
 * object), into *out. Safe here: the walk runs with the world stopped,
 * after the collection, so the object is where the walk says and nothing
 * writes to it (nor could: a string is immutable once made); the length
 * is checked against the object's size before a unit is read. The units
 * are in the machine's order, which the trace's little-endian arrays are
 * only on a little-endian machine: on others no string is recorded.
 */
static bool string_contents(MonoObject *obj, struct ht_array_values *out)
{
	MonoString *str = (MonoString *)obj;
	const uint8_t *units = (const uint8_t *)mono_string_chars(str);
	int length = mono_string_length(str);
	uintptr_t at = (uintptr_t)units - (uintptr_t)obj;

	if (length < 0 || at + 2 * (uint64_t)length >
			  (uint64_t)mono_object_get_size(obj))
		return false;
	atomic_fetch_add_explicit(&state.strings_valued, 1,
				  memory_order_relaxed);
	return ht_array_values_of(HT_TYPE_CHAR, units, (uint64_t)length, out);
}

static void piece_flush(void)
{
	if (state.piece.valid)
		piece_record(&state.piece, false);
	state.piece.valid = false;
}

static void walked_survivors_flush(void)
{
	uint64_t lengths[BATCH];

	for (size_t i = 0; i < state.n_walked_survivors; i++)
		lengths[i] = 1;
	if (state.n_walked_survivors)
		ht_surviving_references(state.trace.rec,
					state.n_walked_survivors,
					state.walked_survivors, lengths);
	state.n_walked_survivors = 0;
}

/* An object the walk finds in the nursery survived this collection in
 * place (nothing is moved into the nursery), whether or not Mono reported
 * the root that pins it: sgen pins objects it does not report as roots
 * (an object its own thread's stack holds by an interior pointer, it
 * seems). So in a walked collection the walk, not the roots, says which
 * nursery objects survived. */
static void note_walked(ht_id id)
{
	if (!flag(&state.nursery_known) || !in_nursery((uintptr_t)id))
		return;
	if (state.n_walked_survivors == BATCH)
		walked_survivors_flush();
	state.walked_survivors[state.n_walked_survivors++] = id;
}

/* Ids in place, ascending: a heap sort, which allocates nothing. */
static void ids_sift_down(ht_id *a, size_t root, size_t n)
{
	for (;;) {
		size_t child = 2 * root + 1;
		ht_id t;

		if (child >= n)
			return;
		if (child + 1 < n && a[child + 1] > a[child])
			child++;
		if (a[root] >= a[child])
			return;
		t = a[root];
		a[root] = a[child];
		a[child] = t;
		root = child;
	}
}

static void sort_ids(ht_id *a, size_t n)
{
	for (size_t i = n / 2; i-- > 0;)
		ids_sift_down(a, i, n);
	for (size_t end = n; end > 1; end--) {
		ht_id t = a[0];

		a[0] = a[end - 1];
		a[end - 1] = t;
		ids_sift_down(a, 0, end - 1);
	}
}

static bool is_destination(ht_id id)
{
	size_t lo = 0, hi = state.n_dests;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (state.dests[mid] == id)
			return true;
		if (state.dests[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

static void walked_survivors_flush(void);

/* An object of the old generation that the walk of a GC proving its dead
 * finds where no move put it: it survived in place. Each gets a block of
 * its own, 1 byte long: the memory of a dead object may hold a live one
 * now (a large object over freed ones), so a block over a live object's
 * extent could cover the id of a dead one. */
static void note_walked_old(ht_id id, uintptr_t size)
{
	if (!state.gc_proves_old || state.dests_overflow || size == 0 ||
	    in_nursery((uintptr_t)id) || is_destination(id))
		return;
	if (state.n_walked_survivors == BATCH)
		walked_survivors_flush();
	state.walked_survivors[state.n_walked_survivors++] = id;
}

/* Mono gives a size with the first call for an object (0 in the calls
 * that continue it): the size of sgen's slot for it, which in the old
 * generation is that of its block's size class (80 bytes for a 72-byte
 * object). The object's own size, rounded to 8, is what its allocation
 * gave, and what the walk records. The walk runs once the collection is
 * over, when the object's header holds its vtable alone again. */
static int on_walk_object(MonoObject *obj, MonoClass *klass, uintptr_t size,
			  uintptr_t num, MonoObject **refs, uintptr_t *offsets,
			  void *data)
{
	struct piece *p = &state.piece;
	ht_id id = (ht_id)(uintptr_t)obj;

	(void)data;
	if (p->valid && p->id == id && size == 0) {
		piece_record(p, true);
	} else {
		piece_flush();
		name_class_in_pause(klass);
		note_walked(id);
		note_walked_old(id, size);
		p->valid = true;
		p->id = id;
		p->class_id = (ht_id)(uintptr_t)klass;
		p->size = size_in_heap(mono_object_get_size(obj));
		p->generation = mono_gc_get_generation(obj);
		p->fields = state.tables_held ? class_fields_of(klass, 0)
					      : NULL;
		p->n = 0;
		p->has_text = klass && klass == state.string_class &&
			      string_contents(obj, &p->text);
	}
	for (uintptr_t i = 0; i < num; i++) {
		if (p->n == PIECE_REFS)
			piece_record(p, true);
		p->ref_fields[p->n] = instance_field_at(p->fields, offsets[i]);
		p->refs[p->n++] = (ht_id)(uintptr_t)refs[i];
	}
	return 0;
}

bool little_endian(void)
{
	return __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__;
}

void walk_heap(void)
{
	state.piece.valid = false;
	state.n_walked_survivors = 0;
	/* a plain getter of a class the runtime made at its start */
	state.string_class = state.opt.values && little_endian()
				     ? mono_get_string_class()
				     : NULL;
	if (state.gc_proves_old)
		sort_ids(state.dests, state.n_dests);
	mono_gc_walk_heap(0, on_walk_object, NULL);
	piece_flush();
	walked_survivors_flush();
	/* with destinations left out, the old survivors are not known */
	state.gc_walked = !state.dests_overflow;
}
