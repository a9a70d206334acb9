/*
 * builtin-flame.c - `heaptrace flame`: the dominator tree of a dump as a
 * flame graph, in folded stacks for flamegraph.pl, inferno or speedscope,
 * or as a self-contained icicle SVG to open in a browser (flame-render.h).
 */
#include "analysis/dominators.h"
#include "analysis/levels.h"
#include "analysis/sites.h"
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/describe.h"
#include "cli/escape.h"
#include "cli/flame-render.h"
#include "cli/load-dump.h"
#include "cli/parse-options.h"
#include "util/alloc.h"

#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const struct command_usage usage = {
	.cmd = "flame",
	.text = "usage: heaptrace flame [--svg] [--depth N] [--width PX] [--title TEXT]\n"
		"                       [-o OUT] [--dump N] [FILE]\n"
		"   or: heaptrace flame --sites [--by allocated|live|retained] [--svg]\n"
		"                       [--width PX] [--title TEXT] [-o OUT] [--dump N] [FILE]\n"
		"\n"
		"The dominator tree of a dump as a flame graph, each frame as wide as\n"
		"the retained bytes of its objects: one frame per class under each\n"
		"frame, under a top frame per static field, root container or kind.\n"
		"Writes folded stacks (\"C_RT_CLASS;Cache;byte[] 4096\": the frames\n"
		"and the self bytes of the last), which flamegraph.pl, inferno and\n"
		"speedscope read, or with --svg an icicle graph. With --sites, the\n"
		"allocation stacks of a trace recorded with --sites instead, each as\n"
		"wide as the bytes its site allocated, has live or retains.\n",
	/* a column wider than the options need */
	.help_column = 21,
};

struct flame_cmd {
	const char *path;
	struct ht_reader_options reader_options;
	const char *output;
	const char *title;
	int64_t select;
	bool svg;
	uint64_t depth;
	uint64_t width;
	enum heap_level level;
	bool sites;               /* allocation stacks, not the dominator tree */
	enum site_measure by;
	bool by_given;
};

static const char *const measure_names[] = {
	[SITE_ALLOCATED] = "allocated",
	[SITE_LIVE] = "live",
	[SITE_RETAINED] = "retained",
};

static int write_svg(const struct flame_cmd *c, const struct heap *h,
		     const struct flame *f, FILE *out)
{
	char title[512], subtitle[256], size[SIZE_TEXT], objects[48];
	struct flame_svg_options o = {.width = (unsigned)c->width};

	snprintf(title, sizeof(title), "dump %" PRIu64 " of %s", h->dump,
		 c->path);
	/* a level other than the default changes every width: say so */
	if (c->sites)
		snprintf(subtitle, sizeof(subtitle), "allocation sites: %s "
			 "%s, %s; a frame is as wide as the bytes its stacks' "
			 "objects %s", exact_size(f->total, size),
			 measure_names[c->by],
			 count_of(f->objects, "object", "objects", objects),
			 c->by == SITE_ALLOCATED ? "took" :
			 c->by == SITE_LIVE ? "take in the dump" :
			 "retain in the dump");
	else
		snprintf(subtitle, sizeof(subtitle), "dominator tree%s%s: %s "
			 "retained by the roots, %s; a frame is as wide as the "
			 "retained size of its objects",
			 c->level == HEAP_LEVEL_STRONG ? "" : " at --retained ",
			 c->level == HEAP_LEVEL_STRONG ? "" :
			 heap_level_name(c->level),
			 exact_size(f->total, size),
			 count_of(f->objects, "object", "objects", objects));
	o.title = c->title ? c->title : title;
	o.subtitle = subtitle;
	return flame_write_svg(f, &o, out);
}

static int write_flame(const struct flame_cmd *c, const struct heap *h,
		       const struct flame *f)
{
	FILE *out = stdout;
	int rc;

	if (c->output && !(out = fopen(c->output, "w"))) {
		error_msg("%s: cannot create: %m", c->output);
		return -1;
	}
	rc = c->svg ? write_svg(c, h, f, out) : flame_write_folded(f, out);
	if (out != stdout && fclose(out) != 0)
		rc = -1;
	if (rc < 0)
		error_msg("%s: cannot write: %m",
			  c->output ? c->output : "standard output");
	return rc;
}

/* The sites' flame graph: the dump with its input kept for the replay
 * of the sites. */
static int run_sites_flame(const struct flame_cmd *c)
{
	struct loaded_dump ld;
	struct heap_dominators d;
	struct sites s = {0};
	struct flame f;
	struct ht_error err;
	enum sites_result r;
	int status = load_dump_to_label(c->path, &c->reader_options, c->select,
					&ld);

	if (status != EXIT_DONE)
		return status;
	if (heap_dominators_at(ld.heap, c->level, &d, &err) < 0) {
		analysis_failed(c->path, &err);
		unload_dump(&ld);
		return EXIT_UNREADABLE;
	}
	r = sites_find(&s, &ld.in, ld.heap, &d);
	heap_dominators_free(&d);
	if (r == SITES_NONE) {
		status = no_allocation_stacks(c->path, ld.damaged || s.damaged);
	} else if (r == SITES_FAILED) {
		status = EXIT_UNREADABLE;
	} else if (sites_flame(&s, c->by, &f) < 0) {
		error_msg("out of memory");
		status = EXIT_UNREADABLE;
	} else {
		status = write_flame(c, ld.heap, &f) < 0
			? EXIT_UNREADABLE : analysis_status(ld.damaged || s.damaged);
		flame_free(&f);
	}
	sites_free(&s);
	unload_dump(&ld);
	return status;
}

static int run_flame(const struct flame_cmd *c)
{
	struct loaded_dump ld;
	struct heap_dominators d;
	struct flame f;
	struct ht_error err;
	int status = load_dump(c->path, &c->reader_options, c->select, &ld);

	if (status != EXIT_DONE)
		return status;
	if (heap_dominators_at(ld.heap, c->level, &d, &err) < 0) {
		analysis_failed(c->path, &err);
		unload_dump(&ld);
		return EXIT_UNREADABLE;
	}
	if (flame_build(ld.heap, &d, (unsigned)c->depth, &f, &err) < 0) {
		analysis_failed(c->path, &err);
		status = EXIT_UNREADABLE;
	} else {
		status = write_flame(c, ld.heap, &f) < 0
			? EXIT_UNREADABLE : analysis_status(ld.damaged);
		flame_free(&f);
	}
	heap_dominators_free(&d);
	unload_dump(&ld);
	return status;
}

static int parse_bounded(const char *cmd, const char *opt, const char *arg,
			 uint64_t min, uint64_t max, uint64_t *v)
{
	if (parse_u64(arg, v) < 0 || *v < min || *v > max)
		return usage_error(cmd, "%s takes a number from %" PRIu64
				   " to %" PRIu64 ", not '%s'", opt, min, max,
				   arg);
	return EXIT_DONE;
}

static int parse_depth(const char *cmd, const char *arg, void *depth)
{
	return parse_bounded(cmd, "--depth", arg, 1, 1000, depth);
}

static int parse_measure(const char *cmd, const char *arg, void *cmd_)
{
	struct flame_cmd *c = cmd_;

	for (size_t i = 0; i < ARRAY_SIZE(measure_names); i++) {
		if (strcmp(arg, measure_names[i]) == 0) {
			c->by = (enum site_measure)i;
			c->by_given = true;
			return EXIT_DONE;
		}
	}
	return usage_error(cmd, "--by takes allocated, live or retained, not "
			   "'%s'", arg);
}

static int parse_width(const char *cmd, const char *arg, void *width)
{
	return parse_bounded(cmd, "--width", arg, 100, 100000, width);
}

static int operands(int argc, char **argv, struct flame_cmd *c)
{
	int status = trace_operand("flame", argc, argv, &c->path);

	if (status != EXIT_DONE)
		return status;
	if (c->output && same_file(c->path, c->output))
		return usage_error("flame", "input and output are the same "
				   "file");
	return EXIT_DONE;
}

int cmd_flame(int argc, char **argv)
{
	struct flame_cmd c = {
		.select = HEAP_LAST_DUMP,
		.depth = FLAME_DEFAULT_DEPTH,
		.width = 1200,
	};
	const struct cli_option options[] = {
		OPT_BOOL('s', "svg", &c.svg,
			 "a self-contained SVG instead of folded stacks"),
		OPT_CALLBACK('D', "depth", "N", &c.depth, parse_depth,
			     "at most N class frames under a top frame (default\n"
			     "64, at most 1000); the objects below go to one\n"
			     "\"...\" frame"),
		OPT_BOOL(0, "sites", &c.sites,
			 "allocation stacks (record --sites), not the\n"
			 "dominator tree"),
		OPT_CALLBACK('b', "by", "KEY", &c, parse_measure,
			     "with --sites: allocated (default), live or\n"
			     "retained bytes"),
		OPT_CALLBACK('w', "width", "PX", &c.width, parse_width,
			     "the SVG's width (default 1200)"),
		OPT_STRING('t', "title", "TEXT", &c.title,
			   "the SVG's title (default: the dump and FILE)"),
		OPT_STRING('o', "output", "OUT", &c.output,
			   "write to OUT, not to standard output"),
		OPT_DUMP(&c.select, "the dump to draw (default: the last)"),
		OPT_RETAINED(&c.level),
		OPT_FULL_NAMES(),
		OPT_HELP(),
		OPT_MAX_MEMORY(),
		OPT_HPROF_OOPS(&c.reader_options),
		OPT_END(),
	};
	int status = parse_options(argc, argv, &usage, options);

	if (status != OPTIONS_PARSED)
		return status;
	if (c.by_given && !c.sites)
		return usage_error("flame", "--by goes with --sites");
	status = operands(argc, argv, &c);
	if (status != EXIT_DONE)
		return status;
	return c.sites ? run_sites_flame(&c) : run_flame(&c);
}
