/*
 * events.c - what Mono reports outside the walk, in the Mono profiler:
 * allocations, object moves, and the root slots with the ranges Mono
 * registered them in (rootmap.h).
 */
#include "recorders/mono/mono.h"

#include <mono/metadata/mono-gc.h>

#include <stdlib.h>
#include <string.h>

/* ---- allocations, moves -------------------------------------------------- */


static size_t batch(uint64_t left)
{
	return left < BATCH ? (size_t)left : BATCH;
}

uint64_t size_in_heap(uint64_t size)
{
	return (size + 7) & ~(uint64_t)7; /* objects are 8-byte aligned */
}

/* sgen's largest object outside its large object space */
#define SMALL_OBJECT_MAX 8000

/* The size an allocation of an object of size bytes (its own, rounded)
 * records: that, but for a small object allocated outside the nursery,
 * which sgen does only for a pinned allocation (an interned string, say)
 * or when the nursery is full. Mono raises the event for a pinned object
 * before its caller has filled it in (an interned string still has
 * length 0 then), so its size is not known yet: 0, which the first dump
 * that shows it fills in. */
static uint64_t allocated_size(MonoObject *obj, uint64_t size)
{
	if (size < SMALL_OBJECT_MAX && mono_gc_get_generation(obj) != 0)
		return 0;
	return size;
}

/* With alloc, every allocation; with sites, those sampled, with their
 * stack (sites.c). One event per object either way. The sampler weighs
 * the object's own size, known even where the event records 0. */
void on_allocation(MonoProfiler *prof, MonoObject *obj)
{
	ht_id id = (ht_id)(uintptr_t)obj, stack;
	uint64_t size;

	(void)prof;
	if (!enter())
		return;
	size = size_in_heap(mono_object_get_size(obj));
	stack = sites_stack_of(size);
	if (stack)
		ht_object_allocated_by(state.trace.rec, id,
				       (ht_id)(uintptr_t)mono_object_get_class(obj),
				       allocated_size(obj, size), stack);
	else if (state.opt.allocations)
		ht_object_allocated(state.trace.rec, id,
				    (ht_id)(uintptr_t)mono_object_get_class(obj),
				    allocated_size(obj, size));
	leave();
}

/* A destination of the walked GC's moves: the walk shows the object
 * there, moved, not survived in place. */
static void note_destination(ht_id id)
{
	if (state.n_dests < state.cap_dests)
		state.dests[state.n_dests++] = id;
	else
		state.dests_overflow = true;
}

/* objects: old, new, old, new, ...; count counts both. */
void on_moves(MonoProfiler *prof, MonoObject *const *objects,
	      uint64_t count)
{
	ht_id old_ids[BATCH], new_ids[BATCH];
	uint64_t lengths[BATCH];
	uint64_t pairs = count / 2;

	(void)prof;
	if (!enter())
		return;
	/* the finishing pause of a concurrent major moves objects before
	 * its END event */
	if (!state.gc_open && flag(&state.in_pause))
		gc_open(state.major_running ? state.max_gen : 0);
	for (size_t i = 0; i < BATCH; i++)
		lengths[i] = 1;
	for (uint64_t done = 0; done < pairs;) {
		size_t n = batch(pairs - done);

		for (size_t i = 0; i < n; i++) {
			MonoObject *const *pair = objects + 2 * (done + i);

			old_ids[i] = (ht_id)(uintptr_t)pair[0];
			new_ids[i] = (ht_id)(uintptr_t)pair[1];
			if (state.gc_proves_old)
				note_destination(new_ids[i]);
		}
		ht_moved_references(state.trace.rec, n, old_ids, new_ids,
				    lengths);
		done += n;
	}
	leave();
}

/* ---- roots --------------------------------------------------------------- */

void on_root_register(MonoProfiler *prof, const mono_byte *start,
		      uintptr_t size, MonoGCRootSource source,
		      const void *key, const char *name)
{
	uint64_t id = (uint64_t)(uintptr_t)key;

	(void)prof;
	(void)name;
	/* a static field's key is its vtable: the class is what tells */
	if (source == MONO_ROOT_SOURCE_STATIC && key)
		id = (uint64_t)(uintptr_t)mono_vtable_class((MonoVTable *)key);
	rootmap_add(&state.roots, (uintptr_t)start, size, (uint8_t)source, id,
		    flag(&state.in_pause));
}

void on_root_unregister(MonoProfiler *prof, const mono_byte *start)
{
	(void)prof;
	rootmap_remove(&state.roots, (uintptr_t)start, flag(&state.in_pause));
}

/* Mono reports the finalizer queues, ephemerons and toggle-refs at these
 * made-up addresses rather than at registered ranges. */
#define SPECIAL_FIN_QUEUE 1
#define SPECIAL_CRIT_FIN_QUEUE 2

static void classify_root(uintptr_t addr, uint8_t *kind, uint8_t *flags,
			  ht_id *id, ht_id *field)
{
	const struct root_range *r;

	*kind = HT_ROOT_OTHER;
	*flags = 0;
	*id = 0;
	*field = 0;
	if (addr == SPECIAL_FIN_QUEUE || addr == SPECIAL_CRIT_FIN_QUEUE) {
		*kind = HT_ROOT_FINALIZER;
		return;
	}
	r = rootmap_find(&state.roots, addr);
	if (!r)
		return;
	*id = r->id;
	switch (r->source) {
	case MONO_ROOT_SOURCE_STACK:
		/* scanned conservatively: what it holds is pinned */
		*kind = HT_ROOT_STACK;
		*flags = HT_ROOT_PINNING;
		break;
	case MONO_ROOT_SOURCE_HANDLE:
		*kind = HT_ROOT_STACK; /* the runtime's handles on a thread */
		break;
	case MONO_ROOT_SOURCE_FINALIZER_QUEUE:
		*kind = HT_ROOT_FINALIZER;
		break;
	case MONO_ROOT_SOURCE_GC_HANDLE:
		*kind = HT_ROOT_HANDLE;
		break;
	case MONO_ROOT_SOURCE_STATIC:
		/* the range is the class's statics: the slot's offset in it
		 * is the static field's */
		*field = static_field_at((MonoClass *)(uintptr_t)r->id,
					 addr - r->start);
		break;
	default:
		break; /* statics, runtime tables, ...: other, with their id */
	}
}

void on_gc_roots(MonoProfiler *prof, uint64_t count,
		 const mono_byte *const *addresses,
		 MonoObject *const *objects)
{
	ht_id refs[BATCH], ids[BATCH], fields[BATCH];
	uint32_t flags[BATCH];
	uint8_t kinds[BATCH], root_flags[BATCH];

	(void)prof;
	if (!enter())
		return;
	/* the finishing pause of a concurrent major may report its roots
	 * before its END event */
	if (!state.gc_open && flag(&state.in_pause))
		gc_open(state.major_running ? state.max_gen : 0);
	if (state.gc_open && flag(&state.nursery_known)) {
		state.gc_roots_seen = true;
		record_nursery_survivors(count, objects);
	}
	/* The roots themselves only in a major collection begun in a walked
	 * pause: the roots of a minor one before it, or of the end of a
	 * concurrent major that the forced collection finishes first, would
	 * make a dump of their own. */
	if (!state.walk_pause || !state.gc_open || !state.gc_major ||
	    !state.gc_started_here) {
		leave();
		return;
	}
	for (uint64_t done = 0; done < count;) {
		size_t n = batch(count - done);

		for (size_t i = 0; i < n; i++) {
			refs[i] = (ht_id)(uintptr_t)objects[done + i];
			flags[i] = 0;
			classify_root((uintptr_t)addresses[done + i], &kinds[i],
				      &root_flags[i], &ids[i], &fields[i]);
		}
		ht_root_references_fields(state.trace.rec, n, refs, flags,
					  kinds, root_flags, ids, fields,
					  HT_RESULT_OK);
		done += n;
	}
	leave();
}
