/*
 * builtin-flame.c - `heaptrace flame`: the dominator tree of a dump as a
 * flame graph, in folded stacks for flamegraph.pl, inferno or speedscope,
 * or as a self-contained icicle SVG to open in a browser (flame-render.h).
 */
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/describe.h"
#include "cli/flame-render.h"
#include "cli/load-dump.h"

#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

static const char usage[] =
	"usage: heaptrace flame [--svg] [--depth N] [--width PX] [--title TEXT]\n"
	"                       [-o OUT] [--dump N] [FILE]\n"
	"\n"
	"The dominator tree of a dump as a flame graph, each frame as wide as\n"
	"the retained bytes of its objects: one frame per class under each\n"
	"frame, under a top frame per root container or kind. Writes folded\n"
	"stacks (\"C_RT_CLASS;Cache;byte[] 4096\": the frames and the self\n"
	"bytes of the last), which flamegraph.pl, inferno and speedscope read,\n"
	"or with --svg an icicle graph.\n"
	"\n"
	"  -s, --svg          a self-contained SVG instead of folded stacks\n"
	"  -D, --depth N      at most N class frames under a top frame (default\n"
	"                     64, at most 1000); the objects below go to one\n"
	"                     \"...\" frame\n"
	"  -w, --width PX     the SVG's width (default 1200)\n"
	"  -t, --title TEXT   the SVG's title (default: the dump and FILE)\n"
	"  -o, --output OUT   write to OUT, not to standard output\n"
	"  -d, --dump N       the dump to draw (default: the last)\n"
	"  -h, --help         this help\n";

struct flame_cmd {
	const char *path;
	struct ht_reader_options reader_options;
	const char *output;
	const char *title;
	int64_t select;
	bool svg;
	uint64_t depth;
	uint64_t width;
};

static int write_svg(const struct flame_cmd *c, const struct heap *h,
		     const struct flame *f, FILE *out)
{
	char title[512], subtitle[256], size[SIZE_TEXT], objects[48];
	struct flame_svg_options o = {.width = (unsigned)c->width};

	snprintf(title, sizeof(title), "dump %" PRIu64 " of %s", h->dump,
		 c->path);
	snprintf(subtitle, sizeof(subtitle), "dominator tree: %s retained by "
		 "the roots, %s; a frame is as wide as the retained size of "
		 "its objects", exact_size(f->total, size),
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

static int run_flame(const struct flame_cmd *c)
{
	struct loaded_dump ld;
	struct heap_dominators d;
	struct flame f;
	struct ht_error err;
	int status = load_dump(c->path, &c->reader_options, c->select, &ld);

	if (status != EXIT_DONE)
		return status;
	if (heap_dominators(ld.heap, &d, &err) < 0) {
		error_msg("%s", err.message);
		unload_dump(&ld);
		return EXIT_UNREADABLE;
	}
	if (flame_build(ld.heap, &d, (unsigned)c->depth, &f, &err) < 0) {
		error_msg("%s", err.message);
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

static int parse_bounded(const char *opt, const char *arg, uint64_t min,
			 uint64_t max, uint64_t *v)
{
	if (parse_u64(arg, v) < 0 || *v < min || *v > max)
		return usage_error("flame", "%s takes a number from %" PRIu64
				   " to %" PRIu64 ", not '%s'", opt, min, max,
				   arg);
	return EXIT_DONE;
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
	static const struct option options[] = {
		{"svg", no_argument, NULL, 's'},
		{"depth", required_argument, NULL, 'D'},
		{"width", required_argument, NULL, 'w'},
		{"title", required_argument, NULL, 't'},
		{"output", required_argument, NULL, 'o'},
		{"dump", required_argument, NULL, 'd'},
		{"help", no_argument, NULL, 'h'},
		HPROF_OOPS_OPTION,
		MAX_MEMORY_OPTION,
		{NULL, 0, NULL, 0},
	};
	struct flame_cmd c = {
		.select = HEAP_LAST_DUMP,
		.depth = FLAME_DEFAULT_DEPTH,
		.width = 1200,
	};
	int ch, status;

	start_options();
	while ((ch = getopt_long(argc, argv, ":sD:w:t:o:d:h", options,
				 NULL)) != -1) {
		status = EXIT_DONE;
		switch (ch) {
		case 's':
			c.svg = true;
			break;
		case 'D':
			status = parse_bounded("--depth", optarg, 1, 1000,
					       &c.depth);
			break;
		case 'w':
			status = parse_bounded("--width", optarg, 100, 100000,
					       &c.width);
			break;
		case 't':
			c.title = optarg;
			break;
		case 'o':
			c.output = optarg;
			break;
		case 'd':
			status = parse_dump_option("flame", optarg, &c.select);
			break;
		case 'h':
			fputs(usage, stdout);
			return EXIT_DONE;
		case OPT_MAX_MEMORY:
			status = parse_max_memory_option("flame", optarg);
			break;
		case OPT_HPROF_OOPS:
			status = parse_hprof_oops_option(optarg,
							 &c.reader_options);
			break;
		default:
			return bad_option("flame", ch, argv);
		}
		if (status != EXIT_DONE)
			return status;
	}
	status = operands(argc, argv, &c);
	if (status != EXIT_DONE)
		return status;
	return run_flame(&c);
}
