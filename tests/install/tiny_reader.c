/*
 * tiny_reader.c - a trace reader in miniature, built against the installed
 * libheaptrace-read through pkg-config: it opens the trace tiny_profiler
 * wrote, replays it and prints what it counted, so that the install test
 * sees the reading half work outside this tree with nothing but its
 * public header.
 */
#include <heaptrace/trace.h>

#include <stdio.h>

struct counts {
	unsigned long long by_type[HT_EV_LAST + 1];
	unsigned long long frames;
};

static int count(void *ctx, const struct ht_event *ev,
		 const struct ht_replay_state *st)
{
	struct counts *c = ctx;

	(void)st;
	c->by_type[ev->type]++;
	if (ev->type == HT_EV_BEGIN_CONTAINER &&
	    ht_container_is_frame(ev->u.begin_container.type))
		c->frames++;
	return 0;
}

int main(int argc, char **argv)
{
	/* what a caller that knows its JVM would pass; a .ht ignores it */
	const struct ht_reader_options options = {
		.compressed_oops = HT_COMPRESSED_OOPS_YES,
	};
	struct ht_replay_callbacks cb = {0};
	struct ht_replay_summary sum = {0};
	struct counts c = {0};
	struct ht_error err;
	struct ht_reader *r;

	if (argc != 2) {
		fprintf(stderr, "usage: tiny_reader TRACE\n");
		return 2;
	}
	r = ht_reader_open_with(argv[1], &options, &err);
	if (!r) {
		fprintf(stderr, "%s\n", err.message);
		return 1;
	}
	for (int t = HT_EV_FIRST; t <= HT_EV_LAST; t++)
		cb.on_event[t] = count;
	if (ht_replay(r, &cb, &c, &sum, &err) != 0) {
		fprintf(stderr, "%s\n", err.message);
		ht_reader_close(r);
		return 1;
	}
	printf("%s (%s): %llu events, %llu dumps, %llu GCs, %llu violations, "
	       "%llu frames\n", ht_reader_path(r), ht_reader_format(r),
	       (unsigned long long)sum.events, (unsigned long long)sum.dumps,
	       (unsigned long long)sum.gcs, (unsigned long long)sum.violations,
	       c.frames);
	for (int t = HT_EV_FIRST; t <= HT_EV_LAST; t++)
		if (c.by_type[t])
			printf("  %s %llu\n", ht_event_name((enum ht_event_type)t),
			       c.by_type[t]);
	ht_reader_close(r);
	return 0;
}
