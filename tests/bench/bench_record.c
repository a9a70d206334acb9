/*
 * bench_record.c - what recording a heap dump through the shim costs: the
 * callback path's time per object_references call, the throughput in
 * events per second, and the file's bytes per object and per reference,
 * compressed (zlib level 1, the default) and stored (level 0).
 *
 * The synthetic heap has 1M objects laid out as a bump allocator would:
 * ids grow by plausible object sizes; each object has about three refs,
 * mostly to objects close by, some far away, some null. One container dump
 * (C_BEGIN, thread roots, C_HEAP, the objects, C_END).
 *
 * Usage: bench_record [OBJECTS]   (files go to $TMPDIR or /tmp)
 */
#include <heaptrace/record.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_REFS 8
#define ROOTS 2000

struct heap {
	size_t n;
	ht_id *ids;
	ht_id *classes;
	uint64_t *sizes;
	uint8_t *n_refs;
	ht_id *refs; /* MAX_REFS per object */
	size_t total_refs;
};

/* xorshift: the same heap on every run */
static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Most objects are small; a few are arrays. */
static uint64_t object_size(void)
{
	uint64_t r = next_random() % 100;

	if (r < 60)
		return 24 + 8 * (next_random() % 4);
	if (r < 95)
		return 56 + 8 * (next_random() % 16);
	return 256 + 8 * (next_random() % 512);
}

static ht_id pick_ref(const struct heap *h, size_t i)
{
	uint64_t r = next_random() % 100;
	size_t j;

	if (r < 10)
		return 0;
	if (r < 80) { /* near: within 64 objects either way */
		size_t lo = i > 64 ? i - 64 : 0;
		size_t hi = i + 64 < h->n ? i + 64 : h->n - 1;

		j = lo + next_random() % (hi - lo + 1);
	} else {
		j = next_random() % h->n;
	}
	return h->ids[j];
}

static void heap_build(struct heap *h, size_t n)
{
	ht_id at = 0x7f1200000000u;

	h->n = n;
	h->ids = malloc(n * sizeof(*h->ids));
	h->classes = malloc(n * sizeof(*h->classes));
	h->sizes = malloc(n * sizeof(*h->sizes));
	h->n_refs = malloc(n);
	h->refs = malloc(n * MAX_REFS * sizeof(*h->refs));
	if (!h->ids || !h->classes || !h->sizes || !h->n_refs || !h->refs) {
		fprintf(stderr, "bench_record: out of memory\n");
		exit(1);
	}
	for (size_t i = 0; i < n; i++) {
		h->ids[i] = at;
		h->sizes[i] = object_size();
		h->classes[i] = 0x7f1100000000u + 0x40 * (next_random() % 300);
		at += h->sizes[i];
	}
	h->total_refs = 0;
	for (size_t i = 0; i < n; i++) {
		/* 1 to 5 refs, 3 on average */
		h->n_refs[i] = (uint8_t)(1 + next_random() % 5);
		for (unsigned k = 0; k < h->n_refs[i]; k++)
			h->refs[i * MAX_REFS + k] = pick_ref(h, i);
		h->total_refs += h->n_refs[i];
	}
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

struct result {
	double seconds_calls; /* the object_references calls alone */
	double seconds_total; /* open to close, writer included */
	uint64_t events;
	uint64_t file_bytes;
	uint64_t raw_bytes;
	uint64_t waits;
};

static int record_heap(const struct heap *h, int level, const char *path,
		       struct result *res)
{
	const struct ht_header header = {
		.version = HT_FORMAT_VERSION,
		.runtime = "bench",
		.pointer_size = 8,
	};
	const struct ht_record_options options = { .compression_level = level };
	ht_id roots[ROOTS];
	uint32_t flags[ROOTS] = { 0 };
	struct ht_record_stats st;
	struct ht_error err;
	struct ht_recorder *rec;
	double t0, t1, t2;

	for (size_t i = 0; i < ROOTS; i++)
		roots[i] = h->ids[(i * 7919) % h->n];
	t0 = now();
	rec = ht_recorder_open(path, &header, &options, &err);
	if (!rec) {
		fprintf(stderr, "bench_record: %s\n", err.message);
		return -1;
	}
	ht_begin_container(rec, HT_C_BEGIN, 0, 0);
	ht_begin_container(rec, HT_C_RT_THREAD, 1, 0);
	ht_root_references(rec, ROOTS, roots, flags, NULL, NULL, NULL,
			   HT_RESULT_OK);
	ht_begin_container(rec, HT_C_HEAP, 0, 0);
	t1 = now();
	for (size_t i = 0; i < h->n; i++)
		ht_object_references(rec, h->ids[i], h->classes[i], h->sizes[i],
				     0, h->n_refs[i], &h->refs[i * MAX_REFS],
				     NULL, -1, HT_RESULT_OK);
	t2 = now();
	ht_begin_container(rec, HT_C_END, 0, 0);
	ht_recorder_stats(rec, &st);
	if (ht_recorder_close(rec, &err) != HT_OK) {
		fprintf(stderr, "bench_record: %s\n", err.message);
		return -1;
	}
	res->seconds_total = now() - t0;
	res->seconds_calls = t2 - t1;
	res->events = st.events;
	res->raw_bytes = st.bytes_uncompressed;
	res->waits = st.waits;
	{
		FILE *f = fopen(path, "rb");

		if (!f || fseek(f, 0, SEEK_END) != 0)
			return -1;
		res->file_bytes = (uint64_t)ftell(f);
		fclose(f);
	}
	return 0;
}

/* The best of a few runs: the machine's noise only ever adds time. */
static int measure(const struct heap *h, int level, const char *path,
		   struct result *best)
{
	for (int run = 0; run < 3; run++) {
		struct result r;

		if (record_heap(h, level, path, &r) < 0)
			return -1;
		if (run == 0 || r.seconds_calls < best->seconds_calls) {
			best->seconds_calls = r.seconds_calls;
			best->waits = r.waits;
		}
		if (run == 0 || r.seconds_total < best->seconds_total)
			best->seconds_total = r.seconds_total;
		best->events = r.events;
		best->file_bytes = r.file_bytes;
		best->raw_bytes = r.raw_bytes;
	}
	return 0;
}

static void report(const char *title, const struct heap *h,
		   const struct result *r)
{
	printf("  %s\n", title);
	printf("    object_references call    %8.1f ns\n",
	       r->seconds_calls * 1e9 / (double)h->n);
	printf("    events/s, calls alone     %8.2f M\n",
	       (double)h->n / r->seconds_calls / 1e6);
	printf("    events/s, open to close   %8.2f M  (%.3f s, writer "
	       "included)\n", (double)r->events / r->seconds_total / 1e6,
	       r->seconds_total);
	printf("    file                      %8.2f MB  (%llu bytes, "
	       "%.2f MB encoded)\n", (double)r->file_bytes / 1e6,
	       (unsigned long long)r->file_bytes, (double)r->raw_bytes / 1e6);
	printf("    bytes per object          %8.2f\n",
	       (double)r->file_bytes / (double)h->n);
	printf("    bytes per reference       %8.2f\n",
	       (double)r->file_bytes / (double)h->total_refs);
	printf("    waits for a free buffer   %8llu\n",
	       (unsigned long long)r->waits);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 1000000;
	const char *dir = getenv("TMPDIR");
	char path[4096];
	struct result z = { 0 }, raw = { 0 };
	struct heap h;

	if (n < 100)
		n = 100;
	snprintf(path, sizeof(path), "%s/bench_record-%d.ht",
		 dir && *dir ? dir : "/tmp", (int)getpid());
	heap_build(&h, n);
	if (measure(&h, 1, path, &z) < 0 || measure(&h, 0, path, &raw) < 0) {
		unlink(path);
		return 1;
	}
	unlink(path);
	printf("heaptrace record benchmark: %zu objects, %zu references "
	       "(%.2f per object, %u roots), one thread, best of 3\n",
	       h.n, h.total_refs, (double)h.total_refs / (double)h.n, ROOTS);
	report("zlib level 1 (default)", &h, &z);
	report("level 0 (stored, uncompressed)", &h, &raw);
	printf("  compressed / uncompressed size  %.3f\n",
	       (double)z.file_bytes / (double)raw.file_bytes);
	return 0;
}
