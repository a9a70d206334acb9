/*
 * bench_relocation.c - what following objects across GCs costs: a
 * made-up heap of N tracked objects through G GCs, fed straight into the
 * replay and the relocation tracker (no file), timing each GC's
 * application (at its gc_finished) and the whole run, with the peak
 * resident memory.
 *
 * The heap is a semispace of N objects of 16 bytes. Each GC collects
 * generations 0 to 2, with generation 0's bounds at its start covering
 * the space in use: it cuts the space into chunks of CHUNK objects, kills
 * the last object of every chunk (so the bounds prove it dead) and moves
 * the others, one block per chunk, to the other space, where the chunks
 * land in a scrambled order (chunk c goes to place c * STEP mod R) so
 * that the moved objects must be put back in order: the worst case. With
 * "sliding" they land in order, as a compacting GC slides objects down.
 * Then as many objects as died are allocated after the survivors, and
 * the space is full again. Every GC thus has N / CHUNK blocks and deaths
 * and moves every object.
 *
 * Usage: bench_relocation [OBJECTS [GCS [sliding]]]  (default 1000000 1000)
 * Exits 1 when the tracker's totals are not what the heap did.
 */
#include "analysis/relocation.h"
#include "lib/read/replay.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#define SPACE_A 0x10000000000ULL
#define SPACE_B 0x20000000000ULL
#define OBJECT_SIZE 16
#define CHUNK 100
#define STEP 7919 /* prime: scrambles the chunks' places */
#define CLASS 0x7f00

static double seconds(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Wall time, and the CPU time of this process: the machine may be
 * shared, and the CPU time says what the work cost. */
static double now(void)
{
	return seconds(CLOCK_MONOTONIC);
}

static double cpu(void)
{
	return seconds(CLOCK_PROCESS_CPUTIME_ID);
}

static double peak_rss_mib(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_maxrss / 1024.0;
}

static void feed(struct replayer *r, const struct ht_event *ev)
{
	if (replayer_feed(r, ev, NULL) != 0) {
		fprintf(stderr, "bench_relocation: the replay stopped\n");
		exit(2);
	}
}

static void allocate(struct replayer *r, ht_id base, uint64_t from,
		     uint64_t to)
{
	struct ht_event ev = {.type = HT_EV_OBJECT_ALLOCATED};

	ev.u.object_allocated.class_id = CLASS;
	ev.u.object_allocated.size = OBJECT_SIZE;
	for (uint64_t i = from; i < to; i++) {
		ev.u.object_allocated.id = base + i * OBJECT_SIZE;
		feed(r, &ev);
	}
}

static void bounds(struct replayer *r, ht_id base, uint64_t objects)
{
	struct ht_generation_range range = {0, base, objects * OBJECT_SIZE,
					    objects * OBJECT_SIZE};
	struct ht_event ev = {.type = HT_EV_GENERATION_BOUNDS};

	ev.u.generation_bounds.count = 1;
	ev.u.generation_bounds.ranges = &range;
	feed(r, &ev);
}

/* The blocks of one GC from `from` to `to`: chunk c's live objects land
 * at place (c * STEP) mod chunks of the compacted space. */
static void make_blocks(struct ht_moved_block *b, uint64_t chunks,
			ht_id from, ht_id to, bool sliding)
{
	for (uint64_t c = 0; c < chunks; c++) {
		uint64_t place = sliding ? c : c * STEP % chunks;

		b[c].old_id = from + c * CHUNK * OBJECT_SIZE;
		b[c].new_id = to + place * (CHUNK - 1) * OBJECT_SIZE;
		b[c].length = (CHUNK - 1) * OBJECT_SIZE;
	}
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	uint64_t gcs = argc > 2 ? strtoull(argv[2], NULL, 10) : 1000;
	bool sliding = argc > 3 && strcmp(argv[3], "sliding") == 0;
	uint64_t chunks, dead;
	struct ht_replay_callbacks cb = {0};
	struct reloc *t = reloc_new(true, NULL);
	struct replayer *r;
	struct ht_moved_block *blocks;
	struct ht_event ev;
	struct reloc_totals totals;
	double start, start_cpu, in_gc = 0, in_gc_cpu = 0, worst = 0;
	ht_id space = SPACE_A;

	n -= n % CHUNK;
	chunks = n / CHUNK;
	dead = chunks;
	if (!t || !n || chunks % STEP == 0) {
		fprintf(stderr, "bench_relocation: bad sizes\n");
		return 2;
	}
	reloc_callbacks(&cb);
	r = replayer_new(&cb, t);
	blocks = malloc(chunks * sizeof(*blocks));
	if (!r || !blocks)
		return 2;
	start = now();
	start_cpu = cpu();
	bounds(r, space, n);
	allocate(r, space, 0, n);
	for (uint64_t g = 0; g < gcs; g++) {
		ht_id other = space == SPACE_A ? SPACE_B : SPACE_A;
		double t0, c0;

		ev = (struct ht_event){.type = HT_EV_GC_STARTED};
		ev.u.gc_started.generations = 0x7;
		feed(r, &ev);
		bounds(r, space, n);
		make_blocks(blocks, chunks, space, other, sliding);
		ev = (struct ht_event){.type = HT_EV_MOVED_REFERENCES};
		ev.u.moved_references.count = chunks;
		ev.u.moved_references.blocks = blocks;
		feed(r, &ev);
		bounds(r, other, n - dead);
		ev = (struct ht_event){.type = HT_EV_GC_FINISHED};
		t0 = now();
		c0 = cpu();
		feed(r, &ev);
		in_gc_cpu += cpu() - c0;
		t0 = now() - t0;
		in_gc += t0;
		if (t0 > worst)
			worst = t0;
		allocate(r, other, n - dead, n);
		space = other;
	}
	replayer_finish(r, NULL);
	reloc_finish(t);
	reloc_get_totals(t, &totals);
	start = now() - start;
	start_cpu = cpu() - start_cpu;
	printf("relocation: %" PRIu64 " tracked objects, %" PRIu64
	       " GCs of %" PRIu64 " blocks each, landing %s\n", n, gcs, chunks,
	       sliding ? "in order (sliding)" : "scrambled");
	printf("  applying a GC: %.2f ms CPU on average (%.1f ns per object); "
	       "wall %.2f ms on average, %.2f ms at worst\n",
	       in_gc_cpu / (double)gcs * 1e3,
	       in_gc_cpu / (double)gcs / (double)n * 1e9,
	       in_gc / (double)gcs * 1e3, worst * 1e3);
	printf("  total: %.2f s CPU, %.2f s wall (%.2f s CPU applying GCs, "
	       "the rest feeding %" PRIu64 " allocations and the GCs' "
	       "events)\n", start_cpu, start, in_gc_cpu, n + gcs * dead);
	printf("  peak RSS: %.1f MiB (%.1f bytes per tracked object)\n",
	       peak_rss_mib(), peak_rss_mib() * 1048576.0 / (double)n);
	printf("  objects: %" PRIu64 " tracked, %" PRIu64 " at the end, %"
	       PRIu64 " died, %" PRIu64 " lost\n", totals.objects,
	       totals.alive, totals.died, totals.lost);
	replayer_free(r);
	reloc_free(t);
	free(blocks);
	if (totals.alive != n || totals.died != gcs * dead || totals.lost ||
	    totals.objects != n + gcs * dead) {
		fprintf(stderr, "bench_relocation: the tracker lost count\n");
		return 1;
	}
	return 0;
}
