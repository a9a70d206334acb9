/*
 * record-mono.c - `heaptrace record` for Mono: loads
 * libmono-profiler-heaptrace.so into `mono PROG.exe ...` (or a bare
 * PROG.exe, run through mono).
 *
 * Mono loads a profiler named by --profile=NAME:ARGS, which it reads from
 * MONO_ENV_OPTIONS too, from libmono-profiler-NAME.so on the library path.
 * So the recorder's directory goes first on LD_LIBRARY_PATH and the option
 * at the end of MONO_ENV_OPTIONS, which also reaches a mono started by a
 * wrapper script. The trace's path goes in HEAPTRACE_OUTPUT rather than in
 * the option, where a space or a comma in it would be taken apart. The
 * recorder puts the variables back as they were once loaded.
 */
#include "cli/cli.h"
#include "cli/record.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MONO_RECORDER "libmono-profiler-heaptrace.so"

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

static bool mono_recognizes(char **argv)
{
	const char *b = base_name(argv[0]);

	return strcmp(b, "mono") == 0 || strcmp(b, "mono-sgen") == 0 ||
	       ends_with(b, ".exe");
}

/* Appends " WORD" to the variable's current value (or sets it to WORD). */
static int env_append(struct env_edit *env, const char *name,
		      const char *word, const char *sep, bool prepend)
{
	const char *old = env_value(env, name);
	size_t len = (old ? strlen(old) + strlen(sep) : 0) + strlen(word) + 1;
	char *v = malloc(len);
	int rc;

	if (!v)
		return -1;
	if (!old || !*old)
		snprintf(v, len, "%s", word);
	else if (prepend)
		snprintf(v, len, "%s%s%s", word, sep, old);
	else
		snprintf(v, len, "%s%s%s", old, sep, word);
	rc = env_override(env, name, v);
	free(v);
	return rc;
}

static int mono_prepare(const struct record_options *o, char ***argv,
			struct env_edit *env, struct ht_error *err)
{
	char path[PATH_MAX], option[128], *slash;

	if (find_recorder("mono", MONO_RECORDER, path, sizeof(path), err) < 0)
		return -1;
	if (strcmp(base_name((*argv)[0]), "mono") != 0 &&
	    strcmp(base_name((*argv)[0]), "mono-sgen") != 0 &&
	    argv_insert(argv, 0, "mono") < 0)
		goto nomem;
	snprintf(option, sizeof(option),
		 "--profile=heaptrace:dump=%s,every=%u%s",
		 dump_on_name(o->dump_on), o->every ? o->every : 1,
		 o->allocations ? ",alloc" : "");
	/* the module checks that it is the one loaded: Mono prefers a copy in
	 * its own installation directory to the library path */
	if (env_override(env, "HEAPTRACE_MODULE", path) < 0)
		goto nomem;
	slash = strrchr(path, '/');
	*slash = '\0';
	if (env_append(env, "LD_LIBRARY_PATH", path, ":", true) < 0 ||
	    env_append(env, "MONO_ENV_OPTIONS", option, " ", false) < 0 ||
	    env_override(env, "HEAPTRACE_OUTPUT", o->output) < 0)
		goto nomem;
	return 0;
nomem:
	return record_error(err, "out of memory");
}

const struct runtime_recorder mono_recorder = {
	.name = "mono",
	.not_loaded = "Mono runs the program even when it cannot load the "
		      "profiler module",
	.records_allocations = true,
	.recognizes = mono_recognizes,
	.prepare = mono_prepare,
};
