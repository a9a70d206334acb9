/*
 * options.c - parses the Mono and CLR recorders' arguments (options.h).
 * Runs once, at load, before the runtime starts: it may allocate.
 */
#include "recorders/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Does the item [s, s + n) spell "key=" and if so where is its value? */
static const char *value_of(const char *s, size_t n, const char *key)
{
	size_t k = strlen(key);

	if (n > k && strncmp(s, key, k) == 0 && s[k] == '=')
		return s + k + 1;
	return NULL;
}

static int parse_every(const char *v, size_t n, struct rec_options *o)
{
	char buf[16], *end;
	unsigned long x;

	if (n == 0 || n >= sizeof(buf) || v[0] < '0' || v[0] > '9')
		return -1;
	memcpy(buf, v, n);
	buf[n] = '\0';
	errno = 0;
	x = strtoul(buf, &end, 10);
	if (errno || *end || x == 0 || x > 1000000000ul)
		return -1;
	o->every = (unsigned)x;
	return 0;
}

/* One item of the list, [s, s + n), other than output=. */
static int parse_item(const char *s, size_t n, struct rec_options *o,
		      char *err, size_t errlen)
{
	const char *v;

	if ((v = value_of(s, n, "dump"))) {
		if (dump_on_parse(v, n - (size_t)(v - s), &o->dump_on) == 0)
			return 0;
		snprintf(err, errlen, "dump= takes major, every-gc, exit or "
			 "signal, not '%.*s'", (int)(n - (size_t)(v - s)), v);
		return -1;
	}
	if ((v = value_of(s, n, "every"))) {
		if (parse_every(v, n - (size_t)(v - s), o) == 0)
			return 0;
		snprintf(err, errlen, "every= takes a number from 1 to "
			 "1000000000, not '%.*s'", (int)(n - (size_t)(v - s)),
			 v);
		return -1;
	}
	if ((n == 5 && strncmp(s, "alloc", 5) == 0) ||
	    (n == 11 && strncmp(s, "allocations", 11) == 0)) {
		o->allocations = true;
		return 0;
	}
	if (n == 6 && strncmp(s, "values", 6) == 0) {
		o->values = true;
		return 0;
	}
	snprintf(err, errlen, "unknown option '%.*s' (options: dump=WHEN, "
		 "every=N, alloc, values, output=FILE last)", (int)n, s);
	return -1;
}

int rec_parse_options(const char *args, struct rec_options *o, char *err,
		       size_t errlen)
{
	const char *p = args ? args : "";

	memset(o, 0, sizeof(*o));
	o->dump_on = DUMP_ON_MAJOR;
	o->every = 1;
	while (*p) {
		const char *comma;
		size_t n;

		if (strncmp(p, "output=", 7) == 0) {
			if (!p[7]) {
				snprintf(err, errlen,
					 "output= needs a file name");
				goto fail;
			}
			o->output = strdup(p + 7);
			if (!o->output) {
				snprintf(err, errlen, "out of memory");
				goto fail;
			}
			return 0;
		}
		comma = strchr(p, ',');
		n = comma ? (size_t)(comma - p) : strlen(p);
		if (n && parse_item(p, n, o, err, errlen) < 0)
			goto fail;
		p += n + (comma != NULL);
	}
	return 0;
fail:
	rec_free_options(o);
	return -1;
}

void rec_free_options(struct rec_options *o)
{
	free(o->output);
	o->output = NULL;
}
