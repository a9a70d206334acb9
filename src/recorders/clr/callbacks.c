/*
 * callbacks.c - what the runtime tells the CoreCLR profiler, and what it
 * becomes in the trace (clr-profiler.c says which event is which): GCs
 * and their moves, the heap walk of a GC to dump (roots, dependent
 * handles, objects with their fields and strings' text), allocations,
 * threads. GC callbacks run with the program's threads suspended,
 * possibly inside malloc: this path uses the shim, atomics, and memory
 * allocated before.
 */
#include "recorders/clr/clr.h"
#include "recorders/core/dump_policy.h"

#include <stdio.h>
#include <string.h>

/* ---- the objects of a dump ------------------------------------------------- */

/* An object (with its values when they are recorded: read_values),
 * then the values its dependent handles keep alive, as a continuation
 * with each reference flagged HT_REF_DEPENDENT. */
static void record_object(uint64_t id, uint64_t cls, uint64_t size,
			  size_t n, const ht_id *refs, const ht_id *fields,
			  const struct class_fields *c)
{
	uint64_t values[64];
	uint32_t flags[64];
	size_t k = dependents_of(id, values, 64);
	struct object_values v;

	if (read_values((clr_uptr)id, cls, size, c, &v)) {
		struct ht_event ev = {
			.type = HT_EV_OBJECT_REFERENCES,
			.u.object_references = {
				.id = id, .class_id = cls, .size = size,
				.flags = k ? HT_OBJ_MORE_REFERENCES : 0,
				.count = n, .refs = refs, .ref_fields = fields,
				.result = HT_RESULT_OK,
				.n_values = v.n, .value_fields = v.fields,
				.values = v.values,
				.array = v.has_array ? &v.array : NULL,
			},
		};

		ht_record_event(state.trace.rec, &ev);
	} else {
		ht_object_references_fields(state.trace.rec, id, cls, size,
					    k ? HT_OBJ_MORE_REFERENCES : 0, n,
					    refs, NULL, fields, -1,
					    HT_RESULT_OK);
	}
	if (!k)
		return;
	for (size_t i = 0; i < k; i++)
		flags[i] = HT_REF_DEPENDENT;
	ht_object_references(state.trace.rec, id, cls, size, 0, k, values,
			     flags, -1, HT_RESULT_OK);
}

/* The runtime never frees them: each is also a root, of kind other. */
static void record_frozen_roots(const struct frozen *f)
{
	uint32_t obj_flags[BATCH] = {0};
	uint8_t kinds[BATCH], root_flags[BATCH] = {0};
	ht_id ids[BATCH] = {0};

	memset(kinds, HT_ROOT_OTHER, sizeof(kinds));
	for (size_t done = 0; done < f->n;) {
		size_t m = f->n - done < BATCH ? f->n - done : BATCH;

		ht_root_references(state.trace.rec, m, f->ids + done, obj_flags,
				   kinds, root_flags, ids, HT_RESULT_OK);
		done += m;
	}
}

/* The walk of .NET 8 to 10 reported them already (tables.c): then they
 * are only rooted here. */
static void record_frozen_objects(void)
{
	struct frozen *f;
	bool walked;

	atomic_fetch_add(&state.frozen_readers, 1);
	f = atomic_load(&state.frozen);
	walked = frozen_walked(f);
	for (size_t i = 0; f && !walked && i < f->n; i++) {
		size_t n = f->ref_start[i + 1] - f->ref_start[i];
		static const ht_id none[1];

		record_object(f->ids[i], f->classes[i], f->sizes[i], n,
			      n ? f->refs + f->ref_start[i] : none, NULL,
			      fields_lookup(f->classes[i]));
	}
	if (f)
		record_frozen_roots(f);
	atomic_fetch_sub(&state.frozen_readers, 1);
}

/* A forced dump's GC, or one that qualifies (a major one collects
 * generation 2) and is due (dump_policy.h); never attach.c's first. */
static bool dump_this_gc(uint32_t generations)
{
	if (flag(&state.priming))
		return false;
	if (flag(&state.forced_pending))
		return true;
	if (flag(&state.exiting) ||
	    !dump_qualifies(&state.opt, (generations & (1u << 2)) != 0))
		return false;
	return dump_due(&state.opt, ++state.qualifying);
}

clr_hresult on_collection_started(CLR_THIS, int n, clr_bool collected[],
				  int32_t reason)
{
	uint32_t gens = 0;
	bool recording = enter(), dump, walk;

	(void)self;
	for (int i = 0; i < n && i <= HT_GEN_MAX; i++)
		if (collected[i])
			gens |= 1u << i;
	dump = recording && dump_this_gc(gens);
	/* With the moves from the events (gc_events.c), COR_PRF_MONITOR_GC
	 * is on for a GC that walks the heap alone, a dump's or attach.c's
	 * first: the walk, and its moves from the callbacks (the exit dump's
	 * GC comes after the runtime has shut EventPipe down). Asked for at
	 * the start, it goes at the first GC not walked, before that GC's
	 * walks; the floor, which records nothing, drops it too. */
	walk = dump || (recording && flag(&state.priming));
	if (state.moves_by_events && flag(&state.monitoring_gc) != walk)
		gc_monitoring(walk);
	if (!recording)
		return CLR_S_OK;
	set_flag(&state.gc_by_callbacks, !state.moves_by_events || walk);
	tables_enter_gc();
	if (dump) {
		dependents_clear();
		frozen_walk_begin();
	}
	stacks_enter_gc(dump && flag(&state.forced_pending));
	set_flag(&state.dump_gc, dump);
	/* sampled allocations at their addresses before this GC moves them */
	sites_enter_gc();
	/* The bounds at the start go just before gc_started, which the
	 * shim writes after every other thread's events: recorded after
	 * it, they could be written after the moves of a server GC's other
	 * threads, which the shim orders only at a GC's start and end. */
	record_bounds();
	ht_gc_started(state.trace.rec, atomic_fetch_add(&state.gc_number, 1),
		      gens, reason == 1 ? HT_GC_INDUCED : HT_GC_OTHER);
	leave();
	return CLR_S_OK;
}

/* Blocks as given; failing makes the runtime skip the older callback
 * with 32-bit lengths. */
clr_hresult on_moved(CLR_THIS, clr_ulong n, clr_uptr old_starts[],
		     clr_uptr new_starts[], clr_uptr lengths[])
{
	(void)self;
	if (!flag(&state.gc_by_callbacks) || !enter())
		return CLR_E_FAIL;
	ht_moved_references(state.trace.rec, n, old_starts, new_starts,
			    lengths);
	leave();
	return CLR_E_FAIL;
}

clr_hresult on_surviving(CLR_THIS, clr_ulong n, clr_uptr starts[],
			 clr_uptr lengths[])
{
	(void)self;
	if (!flag(&state.gc_by_callbacks) || !enter())
		return CLR_E_FAIL;
	ht_surviving_references(state.trace.rec, n, starts, lengths);
	leave();
	return CLR_E_FAIL;
}

clr_hresult on_root_references(CLR_THIS, clr_ulong n, clr_uptr refs[],
			       int32_t kinds[], int32_t flags[], clr_uptr ids[])
{
	uint32_t obj_flags[BATCH] = {0};
	uint8_t k8[BATCH], f8[BATCH];
	ht_id r[BATCH], id[BATCH];

	(void)self;
	if (!flag(&state.dump_gc) || !enter())
		return CLR_S_OK;
	for (clr_ulong done = 0; done < n;) {
		size_t m = n - done < BATCH ? n - done : BATCH, kept = 0;

		for (size_t i = 0; i < m; i++) {
			k8[kept] = (uint8_t)kinds[done + i];
			f8[kept] = (uint8_t)flags[done + i];
			if (kinds[done + i] == CLR_ROOT_STACK) {
				saw_method(ids[done + i]);
				/* stacks.c records it with its thread */
				if (stacks_hold(refs[done + i], f8[kept],
						ids[done + i]))
					continue;
			}
			r[kept] = refs[done + i];
			id[kept++] = ids[done + i];
		}
		if (kept)
			ht_root_references(state.trace.rec, kept, r, obj_flags,
					   k8, f8, id, HT_RESULT_OK);
		done += m;
	}
	leave();
	return CLR_S_OK;
}

clr_hresult on_dependents(CLR_THIS, clr_ulong n, clr_uptr keys[],
			  clr_uptr values[], clr_uptr handles[])
{
	(void)self;
	(void)handles;
	if (!flag(&state.dump_gc) || !enter())
		return CLR_S_OK;
	for (clr_ulong i = 0; i < n; i++)
		if (keys[i] && values[i])
			dependent_add(keys[i], values[i]);
	leave();
	return CLR_S_OK;
}

/* Failing stops the walk until the next GC: what a GC not dumped does
 * at its first object. */
clr_hresult on_object_references(CLR_THIS, clr_uptr object, clr_uptr cls,
				 clr_ulong n, clr_uptr refs[])
{
	uint64_t size;
	const struct class_fields *c;
	union array_table now;
	ht_id fields[BATCH];

	(void)self;
	if (flag(&state.priming)) { /* attach.c: the classes alone */
		atomic_fetch_add(&state.primed_objects, 1);
		saw_class(cls);
		return CLR_S_OK;
	}
	if (!flag(&state.dump_gc) || !enter())
		return CLR_E_FAIL;
	size = object_size(object, cls);
	frozen_walk_saw(object);
	saw_class(cls);
	c = fields_lookup(cls);
	if (!c)
		c = array_fields_now(cls, &now);
	if (c && c->elements) {
		struct array_part last;

		if (array_elements(object, cls, size, c, n, refs, &last))
			record_object(object, cls, size, last.n, last.refs,
				      last.fields, c);
		else
			record_object(object, cls, size, n, refs, NULL, c);
	} else if (c && (c->n || c->n_structs) && n <= BATCH) {
		match_fields(c, object, size, n, refs, fields);
		record_object(object, cls, size, n, refs, fields, c);
	} else {
		record_object(object, cls, size, n, refs, NULL, c);
	}
	leave();
	return CLR_S_OK;
}

/* Names the dump's new classes and methods through the recorder thread,
 * which reads metadata while this thread holds the GC. */
static void name_dump(void)
{
	uint64_t ticket, start = ms_now(), took;

	if (!state.thread_started)
		return;
	ticket = atomic_fetch_add(&state.name_asked, 1) + 1;
	request(REQ_NAME);
	if (!wait_counter(&state.name_done, ticket, NAMING_WAIT_MS))
		atomic_fetch_add(&state.naming_late, 1);
	took = ms_now() - start;
	if (took > state.naming_longest_ms)
		state.naming_longest_ms = took;
}

clr_hresult on_collection_finished(CLR_THIS)
{
	bool dump;

	(void)self;
	/* the dump's heap walk is over */
	if (state.moves_by_events && flag(&state.monitoring_gc))
		gc_monitoring(false);
	if (!enter())
		return CLR_S_OK;
	dump = flag(&state.dump_gc);
	if (dump) {
		size_t used = atomic_load(&state.dependents_used);

		if (used > atomic_load(&state.dependents_peak))
			atomic_store(&state.dependents_peak, used);
		frozen_walk_end();
		/* the recorder thread lists the non-GC heap, then names */
		name_dump();
		record_frozen_objects();
		record_static_roots(atomic_load(&state.name_asked));
		stacks_record_dump();
	}
	record_bounds();
	ht_gc_finished(state.trace.rec);
	set_flag(&state.dump_gc, false);
	if (dump && flag(&state.forced_pending)) {
		set_flag(&state.forced_pending, false);
		announce(&state.dumps_done, atomic_load(&state.dumps_asked));
	}
	tables_leave_gc();
	request(REQ_AFTER_GC);
	leave();
	return CLR_S_OK;
}

/* ---- allocations, threads -------------------------------------------------- */

/* On the loading thread, outside any GC: the class's field table, ready
 * before any object of it is walked. */
clr_hresult on_class_loaded(CLR_THIS, clr_uptr cls, clr_hresult status)
{
	(void)self;
	if (CLR_FAILED(status) || !enter())
		return CLR_S_OK;
	find_string_class(cls);
	prepare_fields(cls, true);
	statics_class_loaded(cls);
	name_soon(cls);
	leave();
	return CLR_S_OK;
}

clr_hresult on_allocated(CLR_THIS, clr_uptr object, clr_uptr cls)
{
	uint64_t size;

	(void)self;
	if (!enter())
		return CLR_S_OK;
	size = object_size(object, cls);
	/* a sampled one carries its stack (sites.c) */
	if (!sites_allocated(object, cls, size) && state.opt.allocations)
		ht_object_allocated(state.trace.rec, object, cls, size);
	saw_class(cls);
	leave();
	return CLR_S_OK;
}

clr_hresult on_thread_name(CLR_THIS, clr_uptr thread, clr_ulong n,
			   clr_wchar name[])
{
	char utf8[1024];

	(void)self;
	if (!enter())
		return CLR_S_OK;
	clrn_from_utf16(utf8, sizeof(utf8), name ? name : (clr_wchar *)"\0",
			name ? n : 0);
	ht_thread(state.trace.rec, thread, utf8);
	idset_add(&state.threads_named, thread, false);
	leave();
	return CLR_S_OK;
}

/* A thread is known by its system id until the program names it; a
 * thread named before it starts (new Thread { Name = ... }) keeps its
 * name. */
static void name_by_os_id(clr_uptr thread, clr_ulong os_id)
{
	char name[48];

	snprintf(name, sizeof(name), "thread %lu", (unsigned long)os_id);
	ht_thread(state.trace.rec, thread, name);
}

clr_hresult on_thread_created(CLR_THIS, clr_uptr thread)
{
	clr_ulong os_id = 0;

	(void)self;
	if (!enter())
		return CLR_S_OK;
	if (!idset_contains(&state.threads_named, thread) &&
	    state.info->vtbl->GetThreadInfo(state.info, thread, &os_id) ==
		    CLR_S_OK && os_id)
		name_by_os_id(thread, os_id);
	leave();
	return CLR_S_OK;
}
