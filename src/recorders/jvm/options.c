/*
 * options.c - parsing the agent's option string (options.h).
 */
#include "recorders/jvm/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parse_count(const char *v, size_t len, unsigned long *n)
{
	char buf[32], *end;

	if (len == 0 || len >= sizeof(buf) || v[0] == '-' || v[0] == '+')
		return -1;
	memcpy(buf, v, len);
	buf[len] = '\0';
	errno = 0;
	*n = strtoul(buf, &end, 10);
	/* the limit of heaptrace record --every and of the Mono recorder */
	return errno || *end || *n == 0 || *n > 1000000000ul ? -1 : 0;
}

static bool key_is(const char *key, size_t len, const char *name)
{
	return strlen(name) == len && memcmp(key, name, len) == 0;
}

/* One KEY=VALUE of length len at p (output= is handled by the caller). */
static int parse_one(const char *p, size_t len, struct agent_options *o,
		     char *err, size_t errlen)
{
	const char *eq = memchr(p, '=', len);
	size_t klen = eq ? (size_t)(eq - p) : len;
	const char *v = eq ? eq + 1 : p + len;
	size_t vlen = eq ? len - klen - 1 : 0;

	if (key_is(p, klen, "dump-on")) {
		if (dump_on_parse(v, vlen, &o->dump_on) == 0)
			return 0;
		snprintf(err, errlen, "dump-on= takes major, every-gc, exit "
			 "or signal, not '%.*s'", (int)vlen, v);
		return -1;
	}
	if (key_is(p, klen, "every")) {
		if (parse_count(v, vlen, &o->every) == 0)
			return 0;
		snprintf(err, errlen, "every= takes a number from 1 to "
			 "1000000000, not '%.*s'", (int)vlen, v);
		return -1;
	}
	if (key_is(p, klen, "control")) {
		if (vlen > 0 && vlen < 4096) {
			free(o->control);
			o->control = strndup(v, vlen);
			if (o->control)
				return 0;
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		snprintf(err, errlen, "control= needs a socket's path");
		return -1;
	}
	if (key_is(p, klen, "report") && eq && vlen > 0 &&
	    vlen < sizeof(o->report) &&
	    strspn(v, "0123456789") >= vlen) {
		memcpy(o->report, v, vlen);
		o->report[vlen] = '\0';
		return 0;
	}
	if (key_is(p, klen, "verbose") && !eq) {
		o->verbose = true;
		return 0;
	}
	if (key_is(p, klen, "values") && !eq) {
		o->values = true;
		return 0;
	}
	snprintf(err, errlen, "unknown option '%.*s' (options: dump-on=WHEN, "
		 "every=N, verbose, values, control=SOCKET, report=FD, "
		 "output=FILE last)",
		 (int)len, p);
	return -1;
}

static int set_output(struct agent_options *o, const char *path, char *err,
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

int options_parse(const char *text, struct agent_options *o, char *err,
		  size_t errlen)
{
	const char *p = text ? text : "";

	memset(o, 0, sizeof(*o));
	o->dump_on = DUMP_ON_MAJOR;
	o->every = 1;
	while (*p) {
		const char *comma;
		size_t len;

		if (strncmp(p, "output=", 7) == 0) {
			if (set_output(o, p + 7, err, errlen) < 0)
				goto fail;
			break;
		}
		comma = strchr(p, ',');
		len = comma ? (size_t)(comma - p) : strlen(p);
		if (len > 0 && parse_one(p, len, o, err, errlen) < 0)
			goto fail;
		p += len + (comma != NULL);
	}
	if (!o->output && set_output(o, DEFAULT_OUTPUT, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	options_free(o);
	return -1;
}

void options_free(struct agent_options *o)
{
	free(o->output);
	o->output = NULL;
	free(o->control);
	o->control = NULL;
}
