/*
 * genhistory.c - a CLR-like trace of many GCs, for timing `heaptrace
 * history`: a heap of old objects that every GC compacts from one space
 * to the other in scrambled chunks, young objects allocated between GCs
 * of which one in each batch survives (the others die inside generation
 * 0's bounds), and one object, the traveller, that moves between two
 * addresses of its own at every GC, so that its id names it alone.
 *
 * Usage: genhistory [-g GCS] [-n OLD] [-y YOUNG] -o FILE
 * Prints the traveller's first id, the one to ask `history` about.
 */
#include <heaptrace/record.h>

#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define SPACE_A 0x7f0000000000ULL
#define SPACE_B 0x7f4000000000ULL
#define TRAVELLER_HOME 0x7eff00000000ULL
#define TRAVELLER_AWAY 0x7eff00001000ULL
#define OBJECT_SIZE 32
#define CHUNK 100
#define STEP 7919
#define OLD_CLASS 0x7ff00100
#define YOUNG_CLASS 0x7ff00200
#define TRAVELLER_CLASS 0x7ff00300

struct blocks {
	ht_id *old, *new_;
	uint64_t *length;
	size_t n, cap;
};

static void fail(const char *what, const struct ht_error *err)
{
	fprintf(stderr, "genhistory: %s%s%s\n", what, err ? ": " : "",
		err ? err->message : "");
	exit(1);
}

static void check(enum ht_error_code rc, struct ht_recorder *rec)
{
	struct ht_error err;

	if (rc != HT_OK) {
		ht_recorder_error(rec, &err);
		fail("recording failed", &err);
	}
}

static void add_block(struct blocks *b, ht_id old, ht_id to, uint64_t length)
{
	if (b->n == b->cap) {
		b->cap = b->cap ? 2 * b->cap : 1024;
		b->old = realloc(b->old, b->cap * sizeof(*b->old));
		b->new_ = realloc(b->new_, b->cap * sizeof(*b->new_));
		b->length = realloc(b->length, b->cap * sizeof(*b->length));
		if (!b->old || !b->new_ || !b->length)
			fail("out of memory", NULL);
	}
	b->old[b->n] = old;
	b->new_[b->n] = to;
	b->length[b->n++] = length;
}

static void bounds(struct ht_recorder *rec, ht_id start, uint64_t objects)
{
	struct ht_generation_range r = {0, start, objects * OBJECT_SIZE,
					objects * OBJECT_SIZE};

	check(ht_generation_bounds(rec, 1, &r), rec);
}

/* The old objects in chunks, each landing at a scrambled place of the
 * other space; the objects past the last whole chunk, and after them the
 * young survivor, keep their places at the end. */
static void compaction(struct blocks *b, ht_id from, ht_id to, uint64_t old,
		       uint64_t young)
{
	uint64_t whole = old / CHUNK, rest = old % CHUNK + (young ? 1 : 0);

	b->n = 0;
	for (uint64_t c = 0; c < whole; c++)
		add_block(b, from + c * CHUNK * OBJECT_SIZE,
			  to + c * STEP % whole * CHUNK * OBJECT_SIZE,
			  CHUNK * OBJECT_SIZE);
	if (rest)
		add_block(b, from + whole * CHUNK * OBJECT_SIZE,
			  to + whole * CHUNK * OBJECT_SIZE, rest * OBJECT_SIZE);
}

int main(int argc, char **argv)
{
	uint64_t gcs = 10000, old = 10000, young = 100;
	const char *path = NULL;
	struct ht_header header = {
		.version = HT_FORMAT_VERSION,
		.runtime = "clr",
		.runtime_version = "synthetic",
		.pointer_size = 8,
		.reports_survivors = true,
	};
	struct blocks b = {0};
	struct ht_recorder *rec;
	struct ht_error err;
	ht_id space = SPACE_A, traveller = TRAVELLER_HOME;
	int ch;

	while ((ch = getopt(argc, argv, "g:n:y:o:")) != -1) {
		switch (ch) {
		case 'g':
			gcs = strtoull(optarg, NULL, 10);
			break;
		case 'n':
			old = strtoull(optarg, NULL, 10);
			break;
		case 'y':
			young = strtoull(optarg, NULL, 10);
			break;
		case 'o':
			path = optarg;
			break;
		default:
			fprintf(stderr, "usage: genhistory [-g GCS] [-n OLD] "
				"[-y YOUNG] -o FILE\n");
			return 2;
		}
	}
	if (!path || !old)
		fail("usage: genhistory [-g GCS] [-n OLD] [-y YOUNG] -o FILE",
		     NULL);
	rec = ht_recorder_open(path, &header, NULL, &err);
	if (!rec)
		fail("cannot record", &err);
	check(ht_class(rec, OLD_CLASS, "Synthetic.Old", true, OBJECT_SIZE),
	      rec);
	check(ht_class(rec, YOUNG_CLASS, "Synthetic.Young", true, OBJECT_SIZE),
	      rec);
	check(ht_class(rec, TRAVELLER_CLASS, "Synthetic.Traveller", true,
		       OBJECT_SIZE), rec);
	check(ht_object_allocated(rec, traveller, TRAVELLER_CLASS, OBJECT_SIZE),
	      rec);
	for (uint64_t i = 0; i < old; i++)
		check(ht_object_allocated(rec, space + i * OBJECT_SIZE,
					  OLD_CLASS, OBJECT_SIZE), rec);
	for (uint64_t g = 0; g < gcs; g++) {
		ht_id other = space == SPACE_A ? SPACE_B : SPACE_A;
		ht_id there = traveller == TRAVELLER_HOME ? TRAVELLER_AWAY
							  : TRAVELLER_HOME;

		for (uint64_t i = 0; i < young; i++)
			check(ht_object_allocated(rec, space + (old + i) *
						  OBJECT_SIZE, YOUNG_CLASS,
						  OBJECT_SIZE), rec);
		check(ht_gc_started(rec, (int64_t)g + 1, 0x7, HT_GC_OTHER),
		      rec);
		bounds(rec, space, old + young);
		compaction(&b, space, other, old, young);
		add_block(&b, traveller, there, OBJECT_SIZE);
		check(ht_moved_references(rec, b.n, b.old, b.new_, b.length),
		      rec);
		old += young ? 1 : 0;
		bounds(rec, other, old);
		check(ht_gc_finished(rec), rec);
		space = other;
		traveller = there;
	}
	if (ht_recorder_close(rec, &err) != HT_OK)
		fail("cannot finish the trace", &err);
	printf("0x%" PRIx64 "\n", (uint64_t)TRAVELLER_HOME);
	free(b.old);
	free(b.new_);
	free(b.length);
	return 0;
}
