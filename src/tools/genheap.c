/*
 * genheap.c - ht-genheap: a synthetic heap, recorded through the shim as a
 * Microsoft VM heap dump, for the analyses' tests and benchmarks.
 *
 * The heap is meant to look like a real one, so that the analyses meet
 * the shapes, sizes and orders they will meet in the field:
 *  - ids are addresses handed out in allocation order; an object's size
 *    comes from its class (a few hundred of them) or its array length;
 *  - fan-out follows a power law: most objects have 0..4 fields, a few
 *    arrays have hundreds, a few huge ones 10^4..10^6;
 *  - most objects are owned by an object allocated just before them (a
 *    program builds its data depth-first), so the heap is a forest of
 *    shallow trees hanging off thread frames, class statics and JNI
 *    pointers; the other fields point near by (often back: cycles), to a
 *    few popular objects (shared subgraphs), far away, or are null;
 *  - huge arrays (caches) hold whole trees, so that a few objects retain
 *    a large share of the heap, as in the heaps people look into;
 *  - long linked lists, some doubly linked or circular;
 *  - about 5% garbage, in runs, that no live object points to;
 *  - the C_HEAP walk reports objects depth-first from the roots, the
 *    garbage last, as a runtime's heap walker would.
 *
 * This file is the command; the classes, the heap's arrays and the plan
 * are genheap_plan.c, the passes that lay the heap out genheap_build.c,
 * the roots and the recording genheap_record.c, what they share
 * genheap_internal.h.
 */
#include "tools/genheap_internal.h"

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>

/* ---- Small helpers ------------------------------------------------------- */

void die(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROGRAM ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* ---- The command --------------------------------------------------------- */

static const char usage[] =
	"usage: " PROGRAM " -n OBJECTS [-r REFS_PER_OBJECT] [-s SEED] "
	"[-o OUT.ht] [--dumps K]\n"
	"                  [--fields]\n"
	"\n"
	"Records a synthetic Microsoft-VM-style heap dump through the shim:\n"
	"allocation-ordered ids, a few hundred classes, power-law fan-out,\n"
	"linked lists, huge arrays, cycles, shared objects, ~5% garbage.\n"
	"The same options give the same file.\n"
	"\n"
	"  -n, --objects N   objects in the (last) dump\n"
	"  -r, --refs R      non-null references per object (default 3)\n"
	"  -s, --seed S      random seed (default 1)\n"
	"  -o, --output F    the trace (default heaptrace.ht)\n"
	"      --dumps K     K dumps of the growing heap, the last one whole\n"
	"                    (default 1)\n"
	"      --fields      declare each class's fields and name the field\n"
	"                    of every reference (format version 2)\n"
	"  -h, --help        this help\n";

static void usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2), noreturn));

static void usage_error(const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, PROGRAM ": ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nsee '" PROGRAM " --help'\n");
	exit(2);
}

static uint64_t parse_count(const char *opt, const char *arg, uint64_t min,
			    uint64_t max)
{
	char *end;
	unsigned long long v;

	errno = 0;
	v = strtoull(arg, &end, 0);
	if (errno || end == arg || *end || arg[0] == '-' || v < min ||
	    v > max)
		usage_error("%s wants a number from %" PRIu64 " to %" PRIu64
			    ", not '%s'", opt, min, max, arg);
	return v;
}

static double parse_refs(const char *arg)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (errno || end == arg || *end || !(v >= 0 && v <= 100)) {
		usage_error("-r wants a number from 0 to 100, not '%s'", arg);
	}
	return v;
}

static void parse_options(int argc, char **argv, struct options *o)
{
	static const struct option longopts[] = {
		{"objects", required_argument, NULL, 'n'},
		{"refs", required_argument, NULL, 'r'},
		{"seed", required_argument, NULL, 's'},
		{"output", required_argument, NULL, 'o'},
		{"dumps", required_argument, NULL, 'd'},
		{"fields", no_argument, NULL, 'f'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	int c;

	*o = (struct options){ .refs = 3, .seed = 1, .out = "heaptrace.ht",
			       .dumps = 1 };
	while ((c = getopt_long(argc, argv, "n:r:s:o:h", longopts, NULL)) !=
	       -1) {
		switch (c) {
		case 'n':
			o->objects = parse_count("-n", optarg, 1, MAX_OBJECTS);
			break;
		case 'r':
			o->refs = parse_refs(optarg);
			break;
		case 's':
			o->seed = parse_count("-s", optarg, 0, UINT64_MAX);
			break;
		case 'o':
			o->out = optarg;
			break;
		case 'd':
			o->dumps = (unsigned)parse_count("--dumps", optarg, 1,
							 1000);
			break;
		case 'f':
			o->fields = true;
			break;
		case 'h':
			fputs(usage, stdout);
			exit(0);
		default: /* getopt said what is wrong */
			fprintf(stderr, "see '" PROGRAM " --help'\n");
			exit(2);
		}
	}
	if (optind < argc)
		usage_error("unexpected argument '%s'", argv[optind]);
	if (o->objects == 0)
		usage_error("-n OBJECTS is required");
	if (o->dumps > o->objects)
		o->dumps = (unsigned)o->objects;
}

int main(int argc, char **argv)
{
	struct options o;
	struct rng r;
	struct catalogue *cat = xcalloc(1, sizeof(*cat));
	struct plan plan;
	struct heap h;
	struct index_list orphans = { 0 };
	struct roots roots;
	double started = now();

	parse_options(argc, argv, &o);
	r.state = o.seed;
	catalogue_build(cat, &r);
	plan_build(&plan, &o, &r);
	genheap_alloc(&h, o.objects, o.refs);
	lay_out_heap(&h, cat, &plan, &r);
	assign_owners(&h, &r, &orphans);
	hold_trees_in_tables(&h, &orphans, &r);
	fill_fields(&h, &r, o.refs);
	plan_roots(&roots, &h, cat, &orphans, &r);
	record_trace(&o, &h, cat, &roots, &r, started);
	roots_free(&roots);
	free(orphans.v);
	genheap_free(&h);
	free(plan.features);
	free(cat);
	return 0;
}
