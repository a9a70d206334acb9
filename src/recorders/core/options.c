/*
 * options.c - the recorders' option grammar, read and written (options.h).
 *
 * One table of keys serves the three recorders: each says by a mask which
 * of them it takes, and how its message for an unknown option lists
 * them. The parser and the writer share the keys' spellings, so that what
 * `heaptrace record` writes is what the recorders read.
 */
#include "recorders/core/options.h"

#include "util/alloc.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- dump modes ------------------------------------------------------------ */

static const char *const dump_on_names[] = {
	[DUMP_ON_MAJOR] = "major",
	[DUMP_ON_EVERY_GC] = "every-gc",
	[DUMP_ON_EXIT] = "exit",
	[DUMP_ON_SIGNAL] = "signal",
};

const char *dump_on_name(enum dump_on d)
{
	return (unsigned)d < ARRAY_SIZE(dump_on_names) ? dump_on_names[d]
							: "?";
}

int dump_on_parse(const char *s, size_t n, enum dump_on *out)
{
	for (size_t i = 0; i < ARRAY_SIZE(dump_on_names); i++) {
		if (strlen(dump_on_names[i]) == n &&
		    memcmp(dump_on_names[i], s, n) == 0) {
			*out = (enum dump_on)i;
			return 0;
		}
	}
	return -1;
}

/* ---- the keys -------------------------------------------------------------- */

enum key {
	KEY_DUMP_ON,
	KEY_EVERY,
	KEY_ALLOC,
	KEY_VALUES,
	KEY_SITES,
	KEY_VERBOSE,
	KEY_CONTROL,
	KEY_REPORT,
	KEY_OUTPUT,
};

/* The spellings; a key with a value is written KEY=VALUE. "dump" and
 * "allocations" are old spellings, still read so that option strings
 * written for earlier recorders (and by hand, after heaptrace-record(1)) keep
 * their meaning: the Mono and CLR recorders took dump= where the agent
 * and `record --dump-on` said dump-on=. */
static const struct {
	const char *name;
	enum key key;
	bool has_value;
} spellings[] = {
	{"dump-on", KEY_DUMP_ON, true},
	{"dump", KEY_DUMP_ON, true},  /* the old spelling */
	{"every", KEY_EVERY, true},
	{"alloc", KEY_ALLOC, false},
	{"allocations", KEY_ALLOC, false},
	{"values", KEY_VALUES, false},
	{"sites", KEY_SITES, false},
	{"sites", KEY_SITES, true},
	{"verbose", KEY_VERBOSE, false},
	{"control", KEY_CONTROL, true},
	{"report", KEY_REPORT, true},
};

/* What one recorder takes: a mask of 1 << KEY_*, and the list its
 * message for an unknown option gives (its words as heaptrace-record(1)'s
 * DIAGNOSTICS catalogs them). This struct is not an API; it may change
 * from one release to the next. */
struct rec_grammar {
	unsigned keys;
	const char *usage;
	const char *default_output;  /* NULL: the caller picks one */
};

#define KEYS(k) (1u << (k))

static const struct rec_grammar runtime_grammar = {
	.keys = KEYS(KEY_DUMP_ON) | KEYS(KEY_EVERY) | KEYS(KEY_ALLOC) |
		KEYS(KEY_VALUES) | KEYS(KEY_SITES) | KEYS(KEY_OUTPUT),
	.usage = "dump=WHEN, every=N, alloc, values, sites[=BYTES|all], "
		 "output=FILE last",
};

static const struct rec_grammar agent_grammar = {
	.keys = KEYS(KEY_DUMP_ON) | KEYS(KEY_EVERY) | KEYS(KEY_VERBOSE) |
		KEYS(KEY_VALUES) | KEYS(KEY_SITES) | KEYS(KEY_CONTROL) |
		KEYS(KEY_REPORT) | KEYS(KEY_OUTPUT),
	.usage = "dump-on=WHEN, every=N, verbose, values, sites[=BYTES|all], "
		 "control=SOCKET, report=FD, output=FILE last",
	.default_output = REC_DEFAULT_OUTPUT,
};

/* ---- reading --------------------------------------------------------------- */

/* every=N: 1 to 1000000000, the limit of heaptrace record --every. */
static int parse_every(const char *v, size_t n, unsigned *every)
{
	char buf[32], *end;
	unsigned long x;

	if (n == 0 || n >= sizeof(buf) || strspn(v, "0123456789") < n)
		return -1;
	memcpy(buf, v, n);
	buf[n] = '\0';
	errno = 0;
	x = strtoul(buf, &end, 10);
	if (errno || *end || x == 0 || x > 1000000000ul)
		return -1;
	*every = (unsigned)x;
	return 0;
}

/* sites=BYTES: 1 to REC_SITES_INTERVAL_MAX; sites=all: REC_SITES_ALL. */
static int parse_sites(const char *v, size_t n, uint64_t *interval)
{
	char buf[32], *end;
	unsigned long long x;

	if (n == 3 && memcmp(v, "all", 3) == 0) {
		*interval = REC_SITES_ALL;
		return 0;
	}
	if (n == 0 || n >= sizeof(buf) || strspn(v, "0123456789") < n)
		return -1;
	memcpy(buf, v, n);
	buf[n] = '\0';
	errno = 0;
	x = strtoull(buf, &end, 10);
	if (errno || *end || x == 0 || x > REC_SITES_INTERVAL_MAX)
		return -1;
	*interval = x;
	return 0;
}

/* The value of item [s, s + n) for key k: 0, or -1 with a message. key
 * and klen: the key as the item spells it, for the message. */
static int parse_value(enum key k, const char *key, size_t klen,
		       const char *v, size_t vlen, struct rec_options *o,
		       char *err, size_t errlen)
{
	switch (k) {
	case KEY_DUMP_ON:
		if (dump_on_parse(v, vlen, &o->dump_on) == 0)
			return 0;
		snprintf(err, errlen, "%.*s= takes major, every-gc, exit or "
			 "signal, not '%.*s'", (int)klen, key, (int)vlen, v);
		return -1;
	case KEY_EVERY:
		if (parse_every(v, vlen, &o->every) == 0)
			return 0;
		snprintf(err, errlen, "every= takes a number from 1 to "
			 "1000000000, not '%.*s'", (int)vlen, v);
		return -1;
	case KEY_SITES:
		o->sites = true;
		if (parse_sites(v, vlen, &o->sites_interval) == 0)
			return 0;
		snprintf(err, errlen, "sites= takes a number of bytes from 1 "
			 "to %llu or all, not '%.*s'",
			 (unsigned long long)REC_SITES_INTERVAL_MAX, (int)vlen, v);
		return -1;
	case KEY_CONTROL:
		if (vlen == 0 || vlen >= 4096) {
			snprintf(err, errlen, "control= needs a socket's path");
			return -1;
		}
		free(o->control);
		o->control = strndup(v, vlen);
		if (o->control)
			return 0;
		snprintf(err, errlen, "out of memory");
		return -1;
	default:
		return -1;
	}
}

/* One item of the list, [s, s + n), other than output=. */
static int parse_item(const struct rec_grammar *g, const char *s, size_t n,
		      struct rec_options *o, char *err, size_t errlen)
{
	const char *eq = memchr(s, '=', n);
	size_t klen = eq ? (size_t)(eq - s) : n;
	const char *v = eq ? eq + 1 : s + n;
	size_t vlen = eq ? n - klen - 1 : 0;

	for (size_t i = 0; i < ARRAY_SIZE(spellings); i++) {
		enum key k = spellings[i].key;

		if (strlen(spellings[i].name) != klen ||
		    memcmp(spellings[i].name, s, klen) != 0 ||
		    !(g->keys & KEYS(k)) || spellings[i].has_value != !!eq)
			continue;
		switch (k) {
		case KEY_ALLOC:
			o->allocations = true;
			return 0;
		case KEY_VALUES:
			o->values = true;
			return 0;
		case KEY_SITES:
			if (eq)
				return parse_value(k, s, klen, v, vlen, o, err,
						   errlen);
			o->sites = true;
			o->sites_interval = REC_SITES_DEFAULT;
			return 0;
		case KEY_VERBOSE:
			o->verbose = true;
			return 0;
		case KEY_REPORT:
			if (vlen == 0 || vlen >= sizeof(o->report) ||
			    strspn(v, "0123456789") < vlen)
				break; /* unknown, as any other word */
			memcpy(o->report, v, vlen);
			o->report[vlen] = '\0';
			return 0;
		default:
			return parse_value(k, s, klen, v, vlen, o, err, errlen);
		}
		break;
	}
	snprintf(err, errlen, "unknown option '%.*s' (options: %s)", (int)n,
		 s, g->usage);
	return -1;
}

static int set_output(struct rec_options *o, const char *path, char *err,
		      size_t errlen)
{
	char *copy;

	if (!*path) {
		snprintf(err, errlen, "output= needs a file name");
		return -1;
	}
	copy = strdup(path);
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	free(o->output);
	o->output = copy;
	return 0;
}

static int parse(const struct rec_grammar *g, const char *args,
		 struct rec_options *o, char *err, size_t errlen)
{
	const char *p = args ? args : "";

	memset(o, 0, sizeof(*o));
	o->dump_on = DUMP_ON_MAJOR;
	o->every = 1;
	while (*p) {
		const char *comma;
		size_t n;

		if (strncmp(p, "output=", 7) == 0) {
			if (set_output(o, p + 7, err, errlen) < 0)
				goto fail;
			break;
		}
		comma = strchr(p, ',');
		n = comma ? (size_t)(comma - p) : strlen(p);
		if (n && parse_item(g, p, n, o, err, errlen) < 0)
			goto fail;
		p += n + (comma != NULL);
	}
	if (!o->output && g->default_output &&
	    set_output(o, g->default_output, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	rec_free_options(o);
	return -1;
}

int rec_parse_options(const char *args, struct rec_options *o, char *err,
		      size_t errlen)
{
	return parse(&runtime_grammar, args, o, err, errlen);
}

int rec_parse_agent_options(const char *args, struct rec_options *o,
			    char *err, size_t errlen)
{
	return parse(&agent_grammar, args, o, err, errlen);
}

void rec_free_options(struct rec_options *o)
{
	free(o->output);
	o->output = NULL;
	free(o->control);
	o->control = NULL;
}

/* ---- writing --------------------------------------------------------------- */

char *rec_options_format(const struct rec_request *r)
{
	char report[32] = "", sites[40] = "";
	size_t len = 128 + (r->control ? strlen(r->control) : 0) +
		     (r->output ? strlen(r->output) : 0);
	char *out = malloc(len);

	if (!out)
		return NULL;
	if (r->report_fd >= 0)
		snprintf(report, sizeof(report), ",report=%d", r->report_fd);

	if (r->sites && r->sites_interval == REC_SITES_DEFAULT)
		snprintf(sites, sizeof(sites), ",sites");
	else if (r->sites && r->sites_interval == REC_SITES_ALL)
		snprintf(sites, sizeof(sites), ",sites=all");
	else if (r->sites)
		snprintf(sites, sizeof(sites), ",sites=%llu",
			 (unsigned long long)r->sites_interval);
	snprintf(out, len, "dump-on=%s,every=%u%s%s%s%s%s%s%s%s",
		 dump_on_name(r->dump_on), r->every ? r->every : 1,
		 r->allocations ? ",alloc" : "", r->values ? ",values" : "",
		 sites,
		 r->control ? ",control=" : "", r->control ? r->control : "",
		 report, r->output ? ",output=" : "",
		 r->output ? r->output : "");
	return out;
}
