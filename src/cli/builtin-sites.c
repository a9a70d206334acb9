/*
 * builtin-sites.c - `heaptrace sites`: the allocation sites of a trace
 * recorded with --sites, ordered by what their objects retain in a dump,
 * what is live of them there, what they allocated, or what of it died in
 * the oldest generation. The figures are analysis's (sites.h); this file
 * orders and renders them, saying which are estimates and how far off
 * they may be.
 */
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/describe.h"
#include "cli/escape.h"
#include "cli/load-dump.h"
#include "cli/output.h"
#include "cli/parse-options.h"

#include "analysis/dominators.h"
#include "analysis/sites.h"
#include "util/alloc.h"
#include "util/humanize.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct command_usage usage = {
	.cmd = "sites",
	.text = "usage: heaptrace sites [-n N] [--by retained|live|allocated|died-old]\n"
		"                       [--depth N] [--dump N]\n"
		"                       [--format text|yaml|json] [FILE]\n"
		"\n"
		"Lists the allocation sites of a trace recorded with --sites (heaptrace\n"
		"record --sites): per stack that allocated, or its first N frames with\n"
		"--depth N (the allocating method alone with --depth 1), the objects\n"
		"and bytes it allocated, what of them is live in the dump and what\n"
		"they retain there, how many GCs they survived, and how many reached\n"
		"the oldest generation and died there. A sampled recording's figures\n"
		"are estimates, said with their error bound.\n",
};

static const char *const key_names[] = {
	[SITE_RETAINED] = "retained",
	[SITE_LIVE] = "live",
	[SITE_ALLOCATED] = "allocated",
	[SITE_DIED_OLD] = "died-old",
};

struct sites_cmd {
	const char *path;
	struct ht_reader_options reader_options;
	int format;
	int64_t select;
	uint64_t limit;
	enum site_measure by;
	uint64_t depth;
	enum heap_level level;
	struct sites s;
};

/* ---- order ---------------------------------------------------------------- */

static const char *first_method(const struct sites *s, const struct site *x)
{
	if (x->unknown_stack || !x->n_frames)
		return "";
	return s->frames[x->first_frame].method ?
		       s->frames[x->first_frame].method : "";
}

struct order {
	const struct sites *s;
	enum site_measure by;
};

/* Biggest first; ties by the allocating method's name, then by the
 * analysis's order (stable: the sites are numbered by their stacks). */
static int compare_sites(const void *a, const void *b, void *ctx)
{
	const struct order *o = ctx;
	const struct site *x = a, *y = b;
	double kx = site_measure_of(x, o->by), ky = site_measure_of(y, o->by);
	int c;

	if (kx != ky)
		return kx > ky ? -1 : 1;
	c = strcmp(first_method(o->s, x), first_method(o->s, y));
	if (c)
		return c;
	return (x > y) - (x < y);
}

/* ---- text ------------------------------------------------------------------ */

/* "1,234 objects (1.2 MiB)", or estimated "~1,234 ±56 objects (~1.2 MiB
 * ±40 KiB)" */
static void print_figure(const struct sites *s, const struct site_figure *f)
{
	char size[SIZE_TEXT], error[SIZE_TEXT];
	uint64_t objects = site_round(f->objects);

	if (!s->sampled) {
		printf("%llu %s (%s)", (unsigned long long)objects,
		       objects == 1 ? "object" : "objects",
		       human_size(site_round(f->bytes), size));
		return;
	}
	printf("~%llu ±%llu objects (~%s ±%s)", (unsigned long long)objects,
	       (unsigned long long)site_round(site_error(f->var_objects)),
	       human_size(site_round(f->bytes), size),
	       human_size(site_round(site_error(f->var_bytes)), error));
}

static void print_frame(const struct site_frame *f)
{
	char text[FRAME_TEXT];

	printf("    at %s\n", frame_text(f->method, f->id, f->file, f->line,
					 text));
}

static void print_ages(const struct sites *s, const struct site *x)
{
	printf("    GCs survived:");
	for (size_t i = 0; i < x->n_ages; i++)
		printf("%s %llu: %s%llu", i ? "," : "",
		       (unsigned long long)x->ages[i].gcs,
		       s->sampled ? "~" : "",
		       (unsigned long long)site_round(x->ages[i].figure.objects));
	putchar('\n');
}

static void print_site(const struct sites_cmd *c, const struct site *x,
		       size_t rank)
{
	const struct sites *s = &c->s;
	char size[SIZE_TEXT];

	printf("site %zu: retained %s%s", rank, s->sampled ? "at least " : "",
	       human_size(x->retained, size));
	printf("; live ");
	print_figure(s, &x->live);
	printf("; allocated ");
	print_figure(s, &x->allocated);
	putchar('\n');
	if (s->generations_known) {
		printf("    promoted to generation %u: ", s->oldest);
		print_figure(s, &x->promoted);
		printf("; died there: ");
		print_figure(s, &x->died_old);
		putchar('\n');
	}
	if (s->ages_known)
		print_ages(s, x);
	if (x->unknown_stack)
		printf("    at a stack the trace never declared\n");
	else if (!x->n_frames)
		printf("    at a stack of no frames the runtime could name\n");
	for (size_t f = 0; f < x->n_frames; f++)
		print_frame(&s->frames[x->first_frame + f]);
}

static void print_text(const struct sites_cmd *c, size_t shown)
{
	const struct sites *s = &c->s;
	char sites[48], samples[48], interval[SIZE_TEXT];

	printf("dump %llu of %s: %s from %s", (unsigned long long)s->dump,
	       esc_text(c->path), count_of(s->n_sites, "site", "sites", sites),
	       count_of(s->samples, "allocation", "allocations", samples));
	if (s->sampled)
		printf(" sampled every %s on average (figures with ~ are "
		       "estimates, ± their 95%% bound)",
		       human_size(s->interval, interval));
	else
		printf(" (every one recorded)");
	printf("; top %zu by %s", shown, key_names[c->by]);
	if (c->level != HEAP_LEVEL_DEFAULT)
		printf(" at level %s", heap_level_name(c->level));
	putchar('\n');
	for (size_t i = 0; i < shown; i++)
		print_site(c, &s->site[i], i + 1);
}

/* ---- yaml and json --------------------------------------------------------- */

static void out_figure(struct out *o, const char *key, const struct sites *s,
		       const struct site_figure *f)
{
	out_begin_object(o, key);
	out_u64(o, "objects", site_round(f->objects));
	out_u64(o, "bytes", site_round(f->bytes));
	out_bool(o, "estimated", s->sampled);
	if (s->sampled) {
		out_u64(o, "objects_error", site_round(site_error(f->var_objects)));
		out_u64(o, "bytes_error", site_round(site_error(f->var_bytes)));
		out_u64(o, "samples", f->samples);
	}
	out_end_object(o);
}

static void out_site(struct out *o, const struct sites *s,
		     const struct site *x)
{
	out_begin_object(o, NULL);
	out_begin_array(o, "frames");
	for (size_t f = 0; f < x->n_frames; f++) {
		const struct site_frame *fr = &s->frames[x->first_frame + f];

		out_stack_frame(o, fr->method, fr->id, fr->file, fr->line);
	}
	out_end_array(o);
	out_bool(o, "unknown_stack", x->unknown_stack);
	out_figure(o, "allocated", s, &x->allocated);
	out_figure(o, "live", s, &x->live);
	out_begin_object(o, "retained");
	out_u64(o, "bytes", x->retained);
	out_bool(o, "estimated", s->sampled);
	out_bool(o, "lower_bound", s->sampled);
	out_end_object(o);
	if (s->generations_known) {
		out_figure(o, "promoted", s, &x->promoted);
		out_figure(o, "died_old", s, &x->died_old);
	} else {
		out_null(o, "promoted");
		out_null(o, "died_old");
	}
	if (!s->ages_known) {
		out_null(o, "survived");
		out_end_object(o);
		return;
	}
	out_begin_array(o, "survived");
	for (size_t i = 0; i < x->n_ages; i++) {
		out_begin_object(o, NULL);
		out_u64(o, "gcs", x->ages[i].gcs);
		out_u64(o, "objects", site_round(x->ages[i].figure.objects));
		out_u64(o, "bytes", site_round(x->ages[i].figure.bytes));
		out_end_object(o);
	}
	out_end_array(o);
	out_end_object(o);
}

static int print_data(const struct sites_cmd *c, size_t shown)
{
	const struct sites *s = &c->s;
	struct out *o = out_new(stdout, (enum output_format)c->format);

	if (!o)
		return -1;
	out_begin_object(o, NULL);
	out_u64(o, "dump", s->dump);
	out_string(o, "by", key_names[c->by]);
	out_u64(o, "depth", c->depth);
	if (s->sampled)
		out_u64(o, "interval", s->interval);
	else
		out_null(o, "interval");
	out_u64(o, "samples", s->samples);
	if (s->generations_known)
		out_u64(o, "oldest_generation", s->oldest);
	else
		out_null(o, "oldest_generation");
	if (c->level != HEAP_LEVEL_DEFAULT)
		out_string(o, "level", heap_level_name(c->level));
	out_begin_array(o, "sites");
	for (size_t i = 0; i < shown; i++)
		out_site(o, s, &s->site[i]);
	out_end_array(o);
	out_end_object(o);
	return out_finish(o);
}

static int report(const struct sites_cmd *c, size_t shown)
{
	if (c->format != FORMAT_TEXT)
		return print_data(c, shown);
	print_text(c, shown);
	return fflush(stdout) == 0 ? 0 : -1;
}

/* ---- the command ------------------------------------------------------------ */

static int run_sites(struct sites_cmd *c)
{
	struct loaded_dump ld;
	struct heap_dominators d;
	struct ht_error err;
	struct order order = {.s = &c->s, .by = c->by};
	enum sites_result r;
	size_t shown;
	int status;

	status = load_dump_to_label(c->path, &c->reader_options, c->select,
				    &ld);
	if (status != EXIT_DONE)
		return status;
	if (heap_dominators_at(ld.heap, c->level, &d, &err) < 0) {
		analysis_failed(c->path, &err);
		unload_dump(&ld);
		return EXIT_UNREADABLE;
	}
	c->s.depth = (unsigned)c->depth;
	r = sites_find(&c->s, &ld.in, ld.heap, &d);
	heap_dominators_free(&d);
	if (r == SITES_NONE) {
		status = no_allocation_stacks(c->path,
					      ld.damaged || c->s.damaged);
	} else if (r == SITES_FAILED) {
		status = EXIT_UNREADABLE;
	} else {
		qsort_r(c->s.site, c->s.n_sites, sizeof(*c->s.site),
			compare_sites, &order);
		shown = limit_shown(c->limit, c->s.n_sites);
		if (report(c, shown) < 0) {
			error_msg("cannot write the report: %m");
			status = EXIT_UNREADABLE;
		} else {
			status = analysis_status(ld.damaged || c->s.damaged);
		}
	}
	sites_free(&c->s);
	unload_dump(&ld);
	return status;
}

static int parse_key(const char *cmd, const char *arg, void *by)
{
	for (size_t i = 0; i < ARRAY_SIZE(key_names); i++) {
		if (strcmp(arg, key_names[i]) == 0) {
			*(enum site_measure *)by = (enum site_measure)i;
			return EXIT_DONE;
		}
	}
	return usage_error(cmd, "--by takes retained, live, allocated or "
			   "died-old, not '%s'", arg);
}

static int parse_depth(const char *cmd, const char *arg, void *depth)
{
	if (parse_u64(arg, depth) < 0 || *(uint64_t *)depth > HT_STACK_MAX_FRAMES)
		return usage_error(cmd, "--depth takes a number of frames from "
				   "0 (the whole stack) to %u, not '%s'",
				   HT_STACK_MAX_FRAMES, arg);
	return EXIT_DONE;
}

int cmd_sites(int argc, char **argv)
{
	struct sites_cmd c = {
		.select = HEAP_LAST_DUMP, .limit = 20, .by = SITE_RETAINED,
	};
	const struct cli_option options[] = {
		OPT_NUMBER(&c.limit, "list N sites (default 20; 0: all)"),
		OPT_CALLBACK('b', "by", "KEY", &c.by, parse_key,
			     "retained (default), live, allocated or\n"
			     "died-old: what orders the sites"),
		OPT_CALLBACK(0, "depth", "N", &c.depth, parse_depth,
			     "a site is the first N frames of a stack\n"
			     "(default 0: all of it; 1: the method alone)"),
		OPT_RETAINED(&c.level),
		OPT_DUMP(&c.select, "the dump of live and retained (default:\n"
			 "the last)"),
		OPT_FORMAT(&c.format),
		OPT_FULL_NAMES(),
		OPT_HELP(),
		OPT_MAX_MEMORY(),
		OPT_END(),
	};
	int status = parse_options(argc, argv, &usage, options);

	if (status != OPTIONS_PARSED)
		return status;
	status = trace_operand("sites", argc, argv, &c.path);
	if (status != EXIT_DONE)
		return status;
	return run_sites(&c);
}
