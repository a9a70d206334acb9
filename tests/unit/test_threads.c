/*
 * test_threads.c - the threads of a dump (src/analysis/threads.c): the
 * stacks the heap keeps (h->stack), each thread's frames from the top
 * with a frame begun again counted once, the roots of each frame and
 * outside frames, what a thread retains, the order of the threads; a dump
 * without threads; the CLR recorder's threads in a GC dump; and the
 * answers written down in testdata/analysis/threads.yaml and
 * threads-clr.yaml.
 */
#include <criterion/criterion.h>

#include "analysis/dominators.h"
#include "analysis/heap.h"
#include "analysis/threads.h"
#include "testheap.h"
#include "testutil.h"

#include <stdlib.h>
#include <string.h>

struct answer {
	struct heap *h;
	struct heap_dominators d;
	struct heap_threads t;
};

static void answer(struct answer *a, const char *name)
{
	struct ht_error err;

	a->h = testheap_load(testdata(name), HEAP_LAST_DUMP, NULL);
	cr_assert_eq(heap_dominators(a->h, &a->d, &err), 0, "%s",
		     err.message);
	cr_assert_eq(heap_threads(a->h, &a->d, &a->t, &err), 0, "%s",
		     err.message);
}

static void answer_free(struct answer *a)
{
	heap_threads_free(&a->t);
	heap_dominators_free(&a->d);
	heap_free(a->h);
}

/* The ids the roots of t.roots[first..first + n) hold, in order. */
static void assert_roots(const struct answer *a, size_t first, size_t n,
			 const ht_id *want, size_t n_want)
{
	cr_assert_eq(n, n_want, "%zu roots, not %zu", n, n_want);
	for (size_t i = 0; i < n; i++)
		cr_assert_eq(a->h->roots[a->t.roots[first + i]].ref, want[i],
			     "root %zu holds 0x%llx, not 0x%llx", i,
			     (unsigned long long)a->h->roots[a->t.roots[first + i]].ref,
			     (unsigned long long)want[i]);
}

#define ROOTS(a, first, n, ...)                                           \
	assert_roots(a, first, n, (const ht_id[]){__VA_ARGS__},            \
		     sizeof((const ht_id[]){__VA_ARGS__}) / sizeof(ht_id))

static void assert_frame(const struct answer *a, const struct thread_view *v,
			 size_t i, ht_id id, ht_id method, uint8_t type)
{
	const struct thread_frame *f;

	cr_assert_lt(i, v->n_frames);
	f = &a->t.frames[v->first_frame + i];
	cr_assert_eq(f->id, id, "frame %zu is 0x%llx, not 0x%llx", i,
		     (unsigned long long)f->id, (unsigned long long)id);
	cr_assert_eq(f->method, method);
	cr_assert_eq(f->type, type);
}

Test(threads, the_heap_keeps_every_thread_and_frame_begun)
{
	struct heap *h = testheap_load(testdata("analysis/threads.yaml"),
				       HEAP_LAST_DUMP, NULL);

	/* 3 threads, 6 frames, one of them begun twice */
	cr_assert_eq(h->n_stack, 10);
	cr_assert_eq(h->stack[0].type, HT_C_RT_THREAD);
	cr_assert_eq(h->stack[0].id1, 0x1000);
	cr_assert_eq(h->stack[1].type, HT_C_RT_INTERPRETED);
	cr_assert_eq(h->stack[1].id2, 0x920);
	cr_assert(h->stack[1].has_thread);
	cr_assert_eq(h->stack[1].thread, 0x1000);
	/* begun again after reaper's containers, still main's */
	cr_assert_eq(h->stack[9].id1, 0x11);
	cr_assert_eq(h->stack[9].thread, 0x1000);
	heap_free(h);
}

Test(threads, written_answer)
{
	struct answer a;
	const struct thread_view *v;

	answer(&a, "analysis/threads.yaml");
	cr_assert_eq(a.t.n_threads, 3);
	cr_assert_eq(a.t.n_frames, 6);

	v = &a.t.threads[0];
	cr_assert_eq(v->id, 0x1000);
	cr_assert_eq(heap_id(a.h, v->object), 0x1000);
	cr_assert_eq(v->object_retained, 100);
	cr_assert_eq(v->locals_retained, 1322, "%llu",
		     (unsigned long long)v->locals_retained);
	cr_assert_eq(v->retained, 1422);
	cr_assert_eq(v->n_frames, 3);
	assert_frame(&a, v, 0, 0x10, 0x920, HT_C_RT_INTERPRETED);
	assert_frame(&a, v, 1, 0x11, 0x910, HT_C_RT_JIT);
	assert_frame(&a, v, 2, 0x12, 0x900, HT_C_RT_INTERPRETED);
	cr_assert_eq(a.t.frames[v->first_frame].n, 0);
	ROOTS(&a, a.t.frames[v->first_frame + 1].first,
	      a.t.frames[v->first_frame + 1].n, 0x2000, 0x2100, 0x2500);
	ROOTS(&a, a.t.frames[v->first_frame + 2].first,
	      a.t.frames[v->first_frame + 2].n, 0x2100, 0x2200);
	/* the thread object is the thread, not one of its roots */
	ROOTS(&a, v->first_own, v->n_own, 0x3000);

	v = &a.t.threads[1];
	cr_assert_eq(v->id, 0x1100);
	cr_assert_eq(v->retained, 600);
	cr_assert_eq(v->locals_retained, 500);
	assert_frame(&a, v, 0, 0x20, 0x940, HT_C_RT_NATIVE);
	assert_frame(&a, v, 1, 0x21, 0x930, HT_C_RT_INTERPRETED);
	ROOTS(&a, a.t.frames[v->first_frame + 1].first,
	      a.t.frames[v->first_frame + 1].n, 0x2300, 0x9999);
	cr_assert_eq(v->n_own, 0);

	v = &a.t.threads[2];
	cr_assert_eq(v->id, 0x7);
	cr_assert_eq(v->object, HEAP_NONE);
	cr_assert_eq(v->object_retained, 0);
	cr_assert_eq(v->retained, 80);
	cr_assert_eq(v->n_frames, 1);
	answer_free(&a);
}

Test(threads, a_clr_dump_has_none)
{
	struct answer a;

	answer(&a, "analysis/cli-clr.yaml");
	cr_assert_eq(a.t.n_threads, 0);
	cr_assert_eq(a.t.n_frames, 0);
	cr_assert_eq(a.t.n_roots, 0);
	answer_free(&a);
}

/* The CLR recorder's threads and frames inside a GC dump: the stack
 * roots it placed are their frames', the one it could not place no
 * thread's. */
Test(threads, a_clr_gc_dump_with_the_recorders_stacks)
{
	struct answer a;
	const struct thread_view *v;

	answer(&a, "analysis/threads-clr.yaml");
	cr_assert(a.h->gc_dump);
	cr_assert_eq(a.t.n_threads, 2);
	cr_assert_eq(a.t.n_frames, 3);
	v = &a.t.threads[0];
	cr_assert_eq(v->id, 0x51);
	cr_assert_eq(v->object, HEAP_NONE);
	cr_assert_eq(v->retained, 156);
	assert_frame(&a, v, 0, 1, 0x901, HT_C_RT_JIT);
	assert_frame(&a, v, 1, 2, 0x902, HT_C_RT_JIT);
	ROOTS(&a, a.t.frames[v->first_frame].first,
	      a.t.frames[v->first_frame].n, 0x2000, 0x2100);
	ROOTS(&a, a.t.frames[v->first_frame + 1].first,
	      a.t.frames[v->first_frame + 1].n, 0x2000);
	cr_assert_eq(v->n_own, 0);
	v = &a.t.threads[1];
	cr_assert_eq(v->id, 0x52);
	cr_assert_eq(v->retained, 0);
	assert_frame(&a, v, 0, 3, 0x903, HT_C_RT_JIT);
	cr_assert_eq(a.t.frames[v->first_frame].n, 0);
	answer_free(&a);
}

/* The Microsoft VM names threads by number: no object is the thread's,
 * and its roots are all listed */
Test(threads, threads_named_by_number)
{
	struct answer a;

	answer(&a, "analysis/msvm-threads.yaml");
	cr_assert_eq(a.t.n_threads, 2);
	cr_assert_eq(a.t.threads[0].id, 0x1);
	cr_assert_eq(a.t.threads[0].object, HEAP_NONE);
	ROOTS(&a, a.t.threads[0].first_own, a.t.threads[0].n_own, 0x2000);
	/* 0x2000 and 0x2100 (which retains 136 of the 176) are both roots */
	cr_assert_eq(a.t.threads[0].retained, 40 + 136);
	cr_assert_eq(a.t.threads[1].retained, 40);
	answer_free(&a);
}
