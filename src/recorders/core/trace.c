/*
 * trace.c - opening and closing a recorder's trace (trace.h).
 */
#include "recorders/core/trace.h"

#include "recorders/core/cmdline.h"
#include "recorders/core/report.h"
#include "recorders/core/say.h"
#include "util/alloc.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

struct ht_recorder *trace_open(const char *path, struct ht_header *h,
			       const struct ht_record_options *ro)
{
	char *cmd = process_command_line();
	struct ht_recorder *rec;
	struct ht_error err;

	h->version = HT_FORMAT_VERSION;
	h->pointer_size = (uint32_t)sizeof(void *);
	h->command_line = cmd;
	h->has_start_time = true;
	h->start_time = (int64_t)time(NULL);
	rec = ht_recorder_open(path, h, ro, &err);
	h->command_line = NULL;
	free(cmd);
	if (!rec) {
		say("cannot record: %s", err.message);
		report_failure(err.message);
	}
	return rec;
}

void trace_metadata_of(struct trace_metadata *tm, const char *recorder,
		       const struct rec_options *o, const char *values)
{
	snprintf(tm->every, sizeof(tm->every), "%u", o->every);
	snprintf(tm->pid, sizeof(tm->pid), "%ld", (long)getpid());
	tm->n = 0;
	tm->m[tm->n++] = (struct ht_metadata){"recorder", recorder};
	tm->m[tm->n++] = (struct ht_metadata){"dump_on",
					      dump_on_name(o->dump_on)};
	tm->m[tm->n++] = (struct ht_metadata){"every", tm->every};
	tm->m[tm->n++] = (struct ht_metadata){"allocations",
					      o->allocations ? "yes" : "no"};
	tm->m[tm->n++] = (struct ht_metadata){"pid", tm->pid};
	if (values && tm->n < ARRAY_SIZE(tm->m))
		tm->m[tm->n++] = (struct ht_metadata){"values", values};
}

bool trace_close_recorder(struct ht_recorder *rec)
{
	struct ht_error err;

	if (ht_recorder_close(rec, &err) == HT_OK)
		return true;
	say("%s", err.message);
	report_failure(err.message);
	return false;
}

void trace_finish(struct rec_trace *t, void (*stats)(void))
{
	struct timespec tick = {0, 1000 * 1000};

	for (int i = 0; i < 2000 && guard_inflight(&t->guard) > 0; i++)
		nanosleep(&tick, NULL);
	if (guard_inflight(&t->guard) > 0) {
		say("%s: a thread is still recording; the trace is left "
		    "without its index", t->output);
		return;
	}
	if (stats)
		stats();
	trace_close_recorder(t->rec);
}

const char *plural_s(unsigned long long n)
{
	return n == 1 ? "" : "s";
}
