/*
 * record-mono.c - `heaptrace record` for Mono: loads
 * libmono-profiler-heaptrace.so into `mono PROG.exe ...`, a bare
 * PROG.exe (run through mono), or a wrapper script that runs an .exe
 * under mono (mcs, csharp, xsp4 on Debian).
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

static bool is_mono(const char *word)
{
	const char *b = command_base_name(word);

	return strcmp(b, "mono") == 0 || strcmp(b, "mono-sgen") == 0;
}

/* Does the line hold a word naming mono and a later one ending in .exe
 * (quotes aside)? The line is taken apart. */
static bool runs_exe_under_mono(char *line)
{
	bool mono = false;
	char *save = NULL;

	for (char *w = strtok_r(line, " \t", &save); w;
	     w = strtok_r(NULL, " \t", &save)) {
		size_t n = strlen(w);

		if (n >= 2 && (w[0] == '"' || w[0] == '\'') && w[n - 1] == w[0]) {
			w[n - 1] = '\0';
			w++;
		}
		if (is_mono(w))
			mono = true;
		else if (mono && has_suffix(w, ".exe"))
			return true;
	}
	return false;
}

/*
 * Is NAME a shell script that runs an .exe under mono, as Debian starts
 * its Mono programs (mcs, csharp, xsp4, nuget, xbuild: exec /usr/bin/mono
 * $MONO_OPTIONS /usr/lib/mono/4.5/mcs.exe "$@")? Such a script is run as
 * it is: MONO_ENV_OPTIONS reaches the mono it starts. Only its first
 * 4 KiB are read.
 */
static bool mono_wrapper(const char *name)
{
	char path[PATH_MAX], text[4096], *save = NULL;
	size_t n;
	FILE *f;

	if (!resolve_command(name, path, sizeof(path)) || !regular_file(path))
		return false;
	f = fopen(path, "r");
	if (!f)
		return false;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	if (n < 2 || text[0] != '#' || text[1] != '!')
		return false;
	for (char *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save))
		if (runs_exe_under_mono(line))
			return true;
	return false;
}

static bool mono_recognizes(char **argv)
{
	return is_mono(argv[0]) || has_suffix(argv[0], ".exe") ||
	       mono_wrapper(argv[0]);
}

static int mono_prepare(const struct record_options *o, char ***argv,
			struct env_edit *env, struct ht_error *err)
{
	struct rec_request r = {
		.dump_on = o->dump_on, .every = o->every,
		.allocations = o->allocations, .values = o->values,
		.sites = o->sites, .sites_interval = o->sites_interval,
		.report_fd = -1, /* HEAPTRACE_REPORT_FD, below */
	};
	char path[PATH_MAX], *slash, *args, *option;
	size_t len;
	int rc;

	if (find_recorder("mono", MONO_RECORDER, path, sizeof(path), err) < 0)
		return -1;
	/* a bare PROG.exe runs through mono; mono itself and a wrapper
	 * script run as they are */
	if (!is_mono((*argv)[0]) && has_suffix((*argv)[0], ".exe") &&
	    argv_insert(argv, 0, "mono") < 0)
		goto nomem;
	/* the trace's path goes in HEAPTRACE_OUTPUT: see above */
	args = rec_options_format(&r);
	len = args ? strlen(args) + 32 : 0;
	option = args ? malloc(len) : NULL;
	if (!option) {
		free(args);
		goto nomem;
	}
	snprintf(option, len, "--profile=heaptrace:%s", args);
	free(args);
	/* the module checks that it is the one loaded: Mono prefers a copy in
	 * its own installation directory to the library path */
	if (env_override(env, "HEAPTRACE_MODULE", path) < 0)
		goto nomem;
	slash = strrchr(path, '/');
	*slash = '\0';
	rc = env_append(env, "LD_LIBRARY_PATH", path, ":", true) < 0 ||
	     env_append(env, "MONO_ENV_OPTIONS", option, " ", false) < 0 ||
	     env_override(env, "HEAPTRACE_OUTPUT", o->output) < 0 ||
	     env_report_fd(env, o->report_fd) < 0;
	free(option);
	if (rc)
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
