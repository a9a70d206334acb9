/*
 * threads.h - the threads of a dump, as a Java developer's thread
 * overview shows them: each thread with its object, its stack frame by
 * frame from the top, the roots each frame's locals are, and what the
 * thread retains (doc/design.md section 5, `threads`).
 *
 * The stacks come from the dump's thread and frame containers
 * (h->stack), so that frames whose locals hold nothing are listed too;
 * the roots from the containers they were reported in. What a thread
 * retains is read off the dominator tree: every object a strong root
 * holds is a child of the virtual root, so the subtrees of the distinct
 * objects the thread's roots hold never overlap and their retained sizes
 * add up.
 */
#ifndef HT_THREADS_H
#define HT_THREADS_H

#include "analysis/dominators.h"
#include "analysis/heap.h"

#include <stddef.h>
#include <stdint.h>

/* One frame of a thread's stack.
 * This struct is not an API; it may change from one release to the next. */
struct thread_frame {
	uint8_t type;         /* its container type (C_RT_JIT, ...) */
	ht_id id;             /* the container's id1 */
	ht_id method;         /* id2: its method, named by heap_method_name */
	size_t first, n;      /* its roots: indices into heap_threads.roots */
};

/* This struct is not an API; it may change from one release to the next. */
struct thread_view {
	ht_id id;                 /* id1 of its C_RT_THREAD container */
	uint32_t object;          /* the object whose id is the thread's id
				     (its java.lang.Thread), HEAP_NONE if
				     the dump has none */
	uint64_t object_retained; /* that object's retained size */
	/* the retained sizes of the distinct other objects the thread's
	 * roots hold (its frames' locals, its roots outside frames), each
	 * held by a strong root and so a child of the virtual root */
	uint64_t locals_retained;
	uint64_t retained;        /* the two added: what the thread keeps */
	size_t first_frame, n_frames; /* into heap_threads.frames, top first */
	size_t first_own, n_own;  /* its roots outside frames, the thread
				     object's left out: into roots */
};

/* This struct is not an API; it may change from one release to the next. */
struct heap_threads {
	size_t n_threads;
	struct thread_view *threads;  /* by retained, largest first, then id */
	size_t n_frames;
	struct thread_frame *frames;
	size_t n_roots;
	size_t *roots;                /* indices into h->roots, each frame's
					 and thread's in report order */
	uint64_t charged;             /* to the memory budget */
};

/* The threads of h, with d's retained sizes. 0, or -1 with err filled
 * (out of memory). A dump without thread containers (a GC dump, the
 * CLR's) has no threads: 0 with t->n_threads 0. */
int heap_threads(const struct heap *h, const struct heap_dominators *d,
		 struct heap_threads *t, struct ht_error *err);
void heap_threads_free(struct heap_threads *t);

#endif
