/*
 * stress_record.c - many threads recording through the shim at once, with
 * barriers, buffer starvation and threads that come and go, checked by
 * reading the trace back through the public reader.
 *
 * test_writer.c covers the same ground under Criterion; this program
 * exists because Criterion cannot start under ThreadSanitizer (its
 * inheritable arena collides with TSan's memory layout), and the shim's
 * lock-free paths are exactly what TSan should see. It is a plain test:
 * exit status 0 when every scenario holds.
 *
 * What the read-back checks: every event of every thread is there, once,
 * in its thread's order, with every field as recorded; the events of a GC
 * (recorded by all threads at once, as a server GC does) lie between its
 * gc_started and gc_finished, those of a dump between its C_BEGIN and
 * C_END; and every group ends its chunk, so that a crash after it could
 * not cut it.
 *
 * Usage: stress_record DIR
 */
#include <heaptrace/record.h>

#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WORKERS 8
#define ALLOCS 20000
#define GC_OBJECTS 5000
#define CHURN_THREADS 40
#define CHURN_ALLOCS 200
#define MAX_TAGS (WORKERS + CHURN_THREADS + 1)

static const char *dir;
static atomic_int failures;

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void fail(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "stress_record: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	atomic_fetch_add(&failures, 1);
}

#define CHECK(cond, ...)                      \
	do {                                  \
		if (!(cond))                  \
			fail(__VA_ARGS__);    \
	} while (0)

/* Ids carry who recorded them: tag (thread), phase, sequence number. */
static ht_id tagged(unsigned tag, unsigned phase, unsigned seq)
{
	return (ht_id)(tag + 1) << 40 | (ht_id)phase << 32 | (ht_id)seq << 4;
}

static void untag(ht_id id, unsigned *tag, unsigned *phase, unsigned *seq)
{
	*tag = (unsigned)(id >> 40) - 1;
	*phase = (unsigned)(id >> 32) & 0xff;
	*seq = (unsigned)(id >> 4) & 0xfffffff;
}

static struct ht_recorder *open_trace(const char *name,
				      const struct ht_record_options *o,
				      char *path, size_t size)
{
	const struct ht_header header = {
		.version = HT_FORMAT_VERSION,
		.runtime = "stress",
		.pointer_size = 8,
	};
	struct ht_recorder *rec;
	struct ht_error err;

	snprintf(path, size, "%s/%s", dir, name);
	rec = ht_recorder_open(path, &header, o, &err);
	if (!rec) {
		fprintf(stderr, "stress_record: %s\n", err.message);
		exit(1);
	}
	return rec;
}

static void close_trace(struct ht_recorder *rec)
{
	struct ht_error err;

	if (ht_recorder_close(rec, &err) != HT_OK)
		fail("close: %s", err.message);
}

/* The fields every recording of this program gives an event of a tag. */
static bool allocation_intact(const struct ht_event *ev, unsigned tag)
{
	const struct ht_ev_object_allocated *a = &ev->u.object_allocated;

	return a->class_id == tag && a->size == 16;
}

static bool object_intact(const struct ht_event *ev, ht_id class_id,
			  ht_id ref, int generation)
{
	const struct ht_ev_object_references *o = &ev->u.object_references;

	return o->class_id == class_id && o->size == 16 && o->flags == 0 &&
	       o->count == 1 && o->refs[0] == ref && !o->ref_flags &&
	       o->has_generation == (generation >= 0) &&
	       (generation < 0 || o->generation == (uint32_t)generation) &&
	       o->result == HT_RESULT_OK;
}

/* Tracks the chunk of each event (its offset): the event that closes a
 * group must be the last of its chunk. */
struct chunk_ends {
	uint64_t closer_chunk; /* chunk of the last closer, if pending */
	bool pending;
	const char *closer;
};

static void chunk_ends_next(struct chunk_ends *c, struct ht_reader *r,
			    const char *path)
{
	uint64_t chunk = ht_reader_position(r).offset;

	CHECK(!c->pending || chunk != c->closer_chunk,
	      "%s: %s does not end its chunk", path, c->closer);
	c->pending = false;
}

static void chunk_ends_closer(struct chunk_ends *c, struct ht_reader *r,
			      const char *what)
{
	c->closer_chunk = ht_reader_position(r).offset;
	c->pending = true;
	c->closer = what;
}

/* ---- a GC bracketed by the main thread, threads on both sides ---------- */

struct worker {
	struct ht_recorder *rec;
	pthread_barrier_t *barrier;
	unsigned tag;
};

static void allocate(struct ht_recorder *rec, unsigned tag, unsigned phase,
		     unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		CHECK(ht_object_allocated(rec, tagged(tag, phase, i), tag, 16) ==
			      HT_OK, "thread %u: allocation refused", tag);
}

static void *gc_worker(void *arg)
{
	struct worker *w = arg;

	allocate(w->rec, w->tag, 0, ALLOCS);
	pthread_barrier_wait(w->barrier); /* main: gc_started */
	pthread_barrier_wait(w->barrier);
	for (unsigned i = 0; i < GC_OBJECTS; i++) {
		ht_id id = tagged(w->tag, 1, i), ref = id + 16;

		CHECK(ht_object_references(w->rec, id, w->tag, 16, 0, 1, &ref,
					   NULL, 0, HT_RESULT_OK) == HT_OK,
		      "thread %u: object refused", w->tag);
	}
	pthread_barrier_wait(w->barrier); /* main: gc_finished */
	pthread_barrier_wait(w->barrier);
	allocate(w->rec, w->tag, 2, ALLOCS);
	return NULL;
}

static void check_gc_trace(const char *path)
{
	unsigned next[WORKERS][3] = { { 0 } };
	bool started = false, finished = false;
	struct chunk_ends ends = { 0 };
	struct ht_error err;
	struct ht_event ev;
	struct ht_reader *r = ht_reader_open(path, &err);
	int rc;

	if (!r) {
		fail("%s", err.message);
		return;
	}
	while ((rc = ht_reader_next(r, &ev, &err)) == 1) {
		unsigned tag, phase, seq;
		ht_id id;

		chunk_ends_next(&ends, r, path);
		if (ev.type == HT_EV_GC_STARTED) {
			CHECK(!started && ev.u.gc_started.has_gc &&
			      ev.u.gc_started.gc == 0 &&
			      ev.u.gc_started.generations == 1,
			      "%s: gc_started not as recorded", path);
			started = true;
			continue;
		}
		if (ev.type == HT_EV_GC_FINISHED) {
			CHECK(started && !finished, "%s: gc_finished out of "
			      "place", path);
			finished = true;
			chunk_ends_closer(&ends, r, "gc_finished");
			continue;
		}
		if (ev.type != HT_EV_OBJECT_ALLOCATED &&
		    ev.type != HT_EV_OBJECT_REFERENCES) {
			fail("%s: unexpected %s", path, ht_event_name(ev.type));
			continue;
		}
		id = ev.type == HT_EV_OBJECT_ALLOCATED ?
			ev.u.object_allocated.id : ev.u.object_references.id;
		untag(id, &tag, &phase, &seq);
		if (tag >= WORKERS || phase > 2) {
			fail("%s: stray id %#llx", path, (unsigned long long)id);
			break;
		}
		CHECK(seq == next[tag][phase], "%s: thread %u phase %u: %u "
		      "where %u was due", path, tag, phase, seq,
		      next[tag][phase]);
		next[tag][phase] = seq + 1;
		CHECK((phase == 1) == (ev.type == HT_EV_OBJECT_REFERENCES),
		      "%s: thread %u phase %u: %s", path, tag, phase,
		      ht_event_name(ev.type));
		if (ev.type == HT_EV_OBJECT_ALLOCATED)
			CHECK(allocation_intact(&ev, tag), "%s: thread %u: "
			      "allocation %u changed", path, tag, seq);
		else
			CHECK(object_intact(&ev, tag, id + 16, 0), "%s: thread "
			      "%u: object %u changed", path, tag, seq);
		CHECK(phase != 0 || !started, "%s: allocation after gc_started",
		      path);
		CHECK(phase != 1 || (started && !finished),
		      "%s: GC reference outside the GC", path);
		CHECK(phase != 2 || finished,
		      "%s: allocation before gc_finished", path);
	}
	CHECK(rc == 0, "%s: %s", path, err.message);
	for (unsigned t = 0; t < WORKERS; t++)
		CHECK(next[t][0] == ALLOCS && next[t][1] == GC_OBJECTS &&
		      next[t][2] == ALLOCS, "%s: thread %u lost events", path, t);
	ht_reader_close(r);
}

static void gc_bracket(const char *name, const struct ht_record_options *o)
{
	char path[4096];
	struct ht_recorder *rec = open_trace(name, o, path, sizeof(path));
	struct worker w[WORKERS];
	pthread_t th[WORKERS];
	pthread_barrier_t barrier;

	pthread_barrier_init(&barrier, NULL, WORKERS + 1);
	for (unsigned i = 0; i < WORKERS; i++) {
		w[i] = (struct worker){ rec, &barrier, i };
		pthread_create(&th[i], NULL, gc_worker, &w[i]);
	}
	pthread_barrier_wait(&barrier);
	CHECK(ht_gc_started(rec, 0, 1, HT_GC_OTHER) == HT_OK, "gc_started");
	pthread_barrier_wait(&barrier);
	pthread_barrier_wait(&barrier);
	CHECK(ht_gc_finished(rec) == HT_OK, "gc_finished");
	pthread_barrier_wait(&barrier);
	for (unsigned i = 0; i < WORKERS; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&barrier);
	close_trace(rec);
	check_gc_trace(path);
}

/* ---- free running: dumps while threads record and come and go --------- */

struct churn {
	struct ht_recorder *rec;
	unsigned tag;
};

static void *short_lived(void *arg)
{
	struct churn *c = arg;

	allocate(c->rec, c->tag, 0, CHURN_ALLOCS);
	return NULL;
}

/* Threads that record a little and exit, one after another, so that slots
 * are released (and reused) while barriers steal from them. */
static void *churner(void *arg)
{
	struct ht_recorder *rec = arg;
	struct churn c[CHURN_THREADS];

	for (unsigned i = 0; i < CHURN_THREADS; i++) {
		pthread_t th;

		c[i] = (struct churn){ rec, WORKERS + i };
		pthread_create(&th, NULL, short_lived, &c[i]);
		pthread_join(th, NULL);
	}
	return NULL;
}

static void *free_worker(void *arg)
{
	struct worker *w = arg;

	allocate(w->rec, w->tag, 0, ALLOCS);
	return NULL;
}

#define DUMPS 200
#define DUMP_OBJECTS 50
#define MAIN_TAG (MAX_TAGS - 1)

static void check_free_trace(const char *path)
{
	unsigned next[MAX_TAGS] = { 0 }, dumps = 0, in_dump = 0;
	bool open = false, heap = false;
	struct chunk_ends ends = { 0 };
	struct ht_error err;
	struct ht_event ev;
	struct ht_reader *r = ht_reader_open(path, &err);
	int rc;

	if (!r) {
		fail("%s", err.message);
		return;
	}
	while ((rc = ht_reader_next(r, &ev, &err)) == 1) {
		unsigned tag, phase, seq;

		chunk_ends_next(&ends, r, path);
		if (ev.type == HT_EV_BEGIN_CONTAINER) {
			const struct ht_ev_begin_container *c =
				&ev.u.begin_container;

			CHECK(c->id1 == 0 && c->id2 == 0, "%s: container ids "
			      "changed", path);
			if (c->type == HT_C_BEGIN) {
				CHECK(!open, "%s: nested dump", path);
				open = true;
				heap = false;
				in_dump = 0;
			} else if (c->type == HT_C_HEAP) {
				CHECK(open && !heap && in_dump == 0,
				      "%s: C_HEAP out of place", path);
				heap = true;
			} else if (c->type == HT_C_END) {
				CHECK(open && heap && in_dump == DUMP_OBJECTS,
				      "%s: dump %u has %u objects", path, dumps,
				      in_dump);
				open = false;
				dumps++;
				chunk_ends_closer(&ends, r, "C_END");
			} else {
				fail("%s: container %d", path, c->type);
			}
			continue;
		}
		if (ev.type == HT_EV_OBJECT_REFERENCES) {
			ht_id id = ev.u.object_references.id;

			untag(id, &tag, &phase, &seq);
			CHECK(open && heap && tag == MAIN_TAG &&
			      phase == dumps && seq == in_dump,
			      "%s: object out of its dump", path);
			CHECK(object_intact(&ev, 1, id, -1), "%s: dump %u: "
			      "object %u changed", path, dumps, seq);
			in_dump++;
			continue;
		}
		if (ev.type != HT_EV_OBJECT_ALLOCATED) {
			fail("%s: unexpected %s", path, ht_event_name(ev.type));
			continue;
		}
		untag(ev.u.object_allocated.id, &tag, &phase, &seq);
		if (tag >= MAX_TAGS) {
			fail("%s: stray id", path);
			break;
		}
		CHECK(seq == next[tag], "%s: thread %u: %u where %u was due",
		      path, tag, seq, next[tag]);
		CHECK(phase == 0 && allocation_intact(&ev, tag), "%s: thread "
		      "%u: allocation %u changed", path, tag, seq);
		next[tag] = seq + 1;
	}
	CHECK(rc == 0, "%s: %s", path, err.message);
	CHECK(dumps == DUMPS, "%s: %u dumps", path, dumps);
	for (unsigned t = 0; t < WORKERS; t++)
		CHECK(next[t] == ALLOCS, "%s: thread %u lost events", path, t);
	for (unsigned t = WORKERS; t < WORKERS + CHURN_THREADS; t++)
		CHECK(next[t] == CHURN_ALLOCS, "%s: short-lived thread %u "
		      "recorded %u of %u", path, t, next[t], CHURN_ALLOCS);
	ht_reader_close(r);
}

static void free_running(const char *name, const struct ht_record_options *o)
{
	char path[4096];
	struct ht_recorder *rec = open_trace(name, o, path, sizeof(path));
	struct worker w[WORKERS];
	pthread_t th[WORKERS], churn;
	struct ht_record_stats st;

	for (unsigned i = 0; i < WORKERS; i++) {
		w[i] = (struct worker){ rec, NULL, i };
		pthread_create(&th[i], NULL, free_worker, &w[i]);
	}
	pthread_create(&churn, NULL, churner, rec);
	for (unsigned d = 0; d < DUMPS; d++) {
		ht_begin_container(rec, HT_C_BEGIN, 0, 0);
		ht_begin_container(rec, HT_C_HEAP, 0, 0);
		for (unsigned i = 0; i < DUMP_OBJECTS; i++) {
			ht_id id = tagged(MAIN_TAG, d, i);

			ht_object_references(rec, id, 1, 16, 0, 1, &id, NULL,
					     -1, HT_RESULT_OK);
		}
		ht_begin_container(rec, HT_C_END, 0, 0);
	}
	for (unsigned i = 0; i < WORKERS; i++)
		pthread_join(th[i], NULL);
	pthread_join(churn, NULL);
	ht_recorder_stats(rec, &st);
	CHECK(st.dropped_events == 0, "%s: %llu events dropped", path,
	      (unsigned long long)st.dropped_events);
	close_trace(rec);
	check_free_trace(path);
}

int main(int argc, char **argv)
{
	const struct ht_record_options few = { .buffer_size = 128 << 10,
					       .buffers = 3, .max_threads = 16 };

	if (argc < 2) {
		fprintf(stderr, "usage: stress_record DIR\n");
		return 2;
	}
	dir = argv[1];
	gc_bracket("stress-gc.ht", NULL);
	gc_bracket("stress-gc-few.ht", &few);
	free_running("stress-free.ht", NULL);
	free_running("stress-free-few.ht", &few);
	if (atomic_load(&failures))
		return 1;
	printf("stress_record: all scenarios hold\n");
	return 0;
}
