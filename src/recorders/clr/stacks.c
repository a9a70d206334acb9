/*
 * stacks.c - which managed thread and frame each stack root of a forced
 * dump belongs to, so that `threads` lists each thread's stack and a local
 * says its thread (doc/design.md section 1, the CLR).
 *
 * RootReferences2 gives a stack root's FunctionID, not its thread, and
 * the runtime offers no way to ask within the GC: DoStackSnapshot of
 * another thread is refused on Linux unless the profiler itself suspended
 * the runtime (the runtime cannot suspend one thread safely there). So
 * the thread that forces a dump first suspends the runtime
 * (ICorProfilerInfo10::SuspendRuntime), lists the managed threads
 * (EnumThreads, in the thread store's order) and each one's managed
 * frames from the top (DoStackSnapshot), resumes, then forces the GC.
 *
 * The GC's root scan (GcScanRootsForProfilerAndETW) walks the same thread
 * store in the same order, each stack from the top, before the finalizer
 * queue and the handles, and the profiler's buffer is not flushed per
 * thread. So the stack roots, in order, are a chain through the frames of
 * the snapshot, in order: number the frames of all threads one after
 * another and each root sits at a frame of its own method, never before
 * the frame of the root before it. The earliest chain (each root at the
 * first such frame from its predecessor's) and the latest (each at the
 * last such frame before its successor's) bound every chain; a root whose
 * bounds meet is at that frame in every chain, so its thread and frame
 * are certain. Otherwise (two threads parked in the same methods, one of
 * them holding nothing; recursion) it is said to be of no known thread
 * rather than guessed, and so are all roots when no chain exists (a
 * thread ran on between the snapshot and the GC). A root whose method no
 * frame of the snapshot has constrains nothing and has no thread.
 *
 * The GC callbacks may not allocate: the snapshot and the roots held back
 * live in tables of fixed size, and what does not fit goes out as before,
 * without a thread. A snapshot that is not whole (a table full, a stack
 * the runtime would not walk) places no root: a missing frame could make
 * a wrong chain look like the only one. The held roots are recorded when the GC finishes,
 * after the others: each thread a C_RT_THREAD container (id1 its
 * ThreadID, which the thread events name), each of its frames a C_RT_JIT
 * container (id1 the frame's number, id2 its place, which the method
 * events name: Holder.Park at Parked.cs:24, or its FunctionID where no
 * PDB gives the line; places.c finds them from each frame's instruction
 * pointer once the runtime is resumed, before the GC) with its roots
 * inside, every frame begun so that the stack is whole. Only forced dumps
 * have a snapshot; the dumps of --dump-on gc keep their stack roots
 * without threads.
 */
#include "recorders/clr/chain.h"
#include "recorders/clr/clr.h"
#include "recorders/core/say.h"

#include <stdlib.h>

#define STACK_THREADS_MAX 4096
#define STACK_FRAMES_MAX 65536
#define STACK_ROOTS_MAX 65536

/* The snapshot: threads in the scan's order, frames of all threads one
 * after another, each thread's from the top. Allocated at the first
 * forced dump, before the runtime is suspended (a suspended thread may
 * hold malloc's lock), and kept. */
static struct snapshot {
	size_t n_threads, n_frames;
	uint64_t thread[STACK_THREADS_MAX];
	size_t first[STACK_THREADS_MAX + 1]; /* into fid */
	uint64_t fid[STACK_FRAMES_MAX];
	uint64_t ip[STACK_FRAMES_MAX];
	uint64_t method[STACK_FRAMES_MAX];   /* the frame's place, or fid */
	bool cut;                            /* a table was full */
} *snap_of;

/* The stack roots of this GC's walk, held back until it finishes. */
static _Atomic size_t held_n;
static struct held_roots {
	size_t n; /* held_n once the GC is done with it */
	uint64_t ref[STACK_ROOTS_MAX], fid[STACK_ROOTS_MAX];
	uint8_t flags[STACK_ROOTS_MAX];
	int64_t lo[STACK_ROOTS_MAX], hi[STACK_ROOTS_MAX]; /* frame or -1 */
} *held_of;

/* snap is written by the forcing thread before the GC and read by the
 * GC's threads: published by this flag. */
static _Atomic bool snap_ready;
static _Atomic bool holding;

/* For HEAPTRACE_VERBOSE: snapshots taken, those not whole (a table full,
 * a stack the runtime would not walk: no local of that dump is placed),
 * and the longest time the runtime stayed suspended for one (the forcing
 * thread's alone); locals placed and not (the GC's). */
static uint64_t snapshots, snapshots_cut, snapshot_longest_us;
static uint64_t places_longest_us; /* placing one snapshot's frames */
static _Atomic uint64_t roots_placed, roots_unplaced;

static uint64_t us_now(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000 + (uint64_t)t.tv_nsec / 1000;
}

static clr_hresult on_frame(clr_uptr function, clr_uptr ip,
			    clr_uptr frame_info, uint32_t context_size,
			    uint8_t context[], void *data)
{
	(void)frame_info;
	(void)context_size;
	(void)context;
	(void)data;
	if (!function)
		return CLR_S_OK; /* a run of native frames: no roots of ours */
	if (snap_of->n_frames == STACK_FRAMES_MAX) {
		snap_of->cut = true;
		return CLR_S_OK;
	}
	snap_of->ip[snap_of->n_frames] = ip;
	snap_of->fid[snap_of->n_frames++] = function;
	return CLR_S_OK;
}

void stacks_snapshot(void)
{
	struct clr_object_enum *threads = NULL;
	clr_uptr tid;
	clr_ulong got;
	uint64_t start, took;
	size_t before;

	atomic_store(&snap_ready, false);
	if (state.info_level < 10)
		return;
	if (!snap_of)
		snap_of = calloc(1, sizeof(*snap_of));
	if (!held_of)
		held_of = calloc(1, sizeof(*held_of));
	if (!snap_of || !held_of)
		return;
	start = us_now();
	if (CLR_FAILED(state.info->vtbl->SuspendRuntime(state.info)))
		return;
	snap_of->n_threads = snap_of->n_frames = 0;
	snap_of->cut = false;
	if (state.info->vtbl->EnumThreads(state.info, &threads) == CLR_S_OK &&
	    threads) {
		while (threads->vtbl->Next(threads, 1, &tid, &got) == CLR_S_OK &&
		       got == 1) {
			if (snap_of->n_threads == STACK_THREADS_MAX) {
				snap_of->cut = true;
				break;
			}
			snap_of->thread[snap_of->n_threads] = tid;
			snap_of->first[snap_of->n_threads++] = snap_of->n_frames;
			/* a stack cut short could hide the frames its roots
			 * sit at: then the proof does not hold. A walk that
			 * fails before any frame is a thread with nothing
			 * managed on its stack (E_FAIL: the finalizer's and
			 * the runtime's own waiting threads, a thread whose
			 * Main has returned). */
			before = snap_of->n_frames;
			if (CLR_FAILED(state.info->vtbl->DoStackSnapshot(
				    state.info, tid, on_frame, 0, NULL, NULL,
				    0)) && snap_of->n_frames != before)
				snap_of->cut = true;
		}
		threads->vtbl->Release(threads);
	}
	snap_of->first[snap_of->n_threads] = snap_of->n_frames;
	state.info->vtbl->ResumeRuntime(state.info);
	took = us_now() - start;
	if (took > snapshot_longest_us)
		snapshot_longest_us = took;
	snapshots++;
	for (size_t i = 0; i < snap_of->n_frames; i++) {
		saw_method(snap_of->fid[i]);
		snap_of->method[i] = snap_of->fid[i];
	}
	/* metadata, the JIT's maps and the PDBs, with the runtime running
	 * again: places.c */
	start = us_now();
	if (enter()) {
		for (size_t i = 0; i < snap_of->n_frames; i++)
			snap_of->method[i] = frame_place(snap_of->fid[i],
							 snap_of->ip[i]);
		ht_recorder_hand_off(state.trace.rec);
		leave();
	}
	took = us_now() - start;
	if (took > places_longest_us)
		places_longest_us = took;
	if (snap_of->cut)
		snapshots_cut++;
	atomic_store(&snap_ready, snap_of->n_threads > 0 && !snap_of->cut);
}

void stacks_enter_gc(bool forced)
{
	atomic_store(&held_n, 0);
	atomic_store(&holding, forced && atomic_load(&snap_ready));
}

bool stacks_hold(uint64_t ref, uint8_t flags, uint64_t fid)
{
	size_t i;

	if (!atomic_load(&holding))
		return false;
	/* one walk thread reports the roots; the index is claimed all the
	 * same, should another ever join it */
	i = atomic_fetch_add(&held_n, 1);
	if (i >= STACK_ROOTS_MAX)
		return false;
	held_of->ref[i] = ref;
	held_of->fid[i] = fid;
	held_of->flags[i] = flags;
	return true;
}

static void record_root(size_t i)
{
	uint32_t obj_flags = 0;
	uint8_t kind = CLR_ROOT_STACK;
	ht_id ref = held_of->ref[i], id = held_of->fid[i];

	ht_root_references(state.trace.rec, 1, &ref, &obj_flags, &kind,
			   &held_of->flags[i], &id, HT_RESULT_OK);
}

void stacks_record_dump(void)
{
	bool chained;
	size_t i, next = 0;

	if (!atomic_exchange(&holding, false))
		return;
	atomic_store(&snap_ready, false);
	held_of->n = atomic_load(&held_n);
	if (held_of->n > STACK_ROOTS_MAX)
		held_of->n = STACK_ROOTS_MAX;
	chained = chain_bound(snap_of->fid, snap_of->n_frames, held_of->fid,
			      held_of->n, held_of->lo, held_of->hi);
	/* the roots of no known thread first, in no container */
	for (i = 0; i < held_of->n; i++) {
		if (!chained || !chain_certain(held_of->lo, held_of->hi, i)) {
			record_root(i);
			atomic_fetch_add(&roots_unplaced, 1);
		}
	}
	/* then every thread, every frame, and the roots certain of it: a
	 * chain is in frame order */
	for (size_t t = 0; t < snap_of->n_threads; t++) {
		ht_begin_container(state.trace.rec, HT_C_RT_THREAD,
				   snap_of->thread[t], 0);
		for (size_t g = snap_of->first[t]; g < snap_of->first[t + 1]; g++) {
			ht_begin_container(state.trace.rec, HT_C_RT_JIT,
					   (ht_id)g + 1, snap_of->method[g]);
			for (; chained && next < held_of->n; next++) {
				if (!chain_certain(held_of->lo, held_of->hi, next))
					continue;
				if (held_of->lo[next] != (int64_t)g)
					break;
				record_root(next);
				atomic_fetch_add(&roots_placed, 1);
			}
		}
	}
	held_of->n = 0;
	atomic_store(&held_n, 0);
}

void stacks_report(void)
{
	say("stacks: %llu snapshot%s, %llu not whole (the runtime suspended "
	    "at most %llu us), %llu local%s placed in a thread, %llu of no "
	    "known thread",
	    (unsigned long long)snapshots, snapshots == 1 ? "" : "s",
	    (unsigned long long)snapshots_cut,
	    (unsigned long long)snapshot_longest_us,
	    (unsigned long long)atomic_load(&roots_placed),
	    atomic_load(&roots_placed) == 1 ? "" : "s",
	    (unsigned long long)atomic_load(&roots_unplaced));
	places_report(places_longest_us);
}
