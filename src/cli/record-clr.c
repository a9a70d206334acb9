/*
 * record-clr.c - `heaptrace record` for .NET (CoreCLR): loads
 * libheaptrace-clr.so into `dotnet APP.dll ...`, `dotnet build ...`, a
 * bare APP.dll (run through dotnet) or a published app (an executable
 * next to its APP.dll and APP.runtimeconfig.json).
 *
 * The runtime loads a profiler named by CORECLR_PROFILER_PATH when
 * CORECLR_ENABLE_PROFILING is 1 and CORECLR_PROFILER holds a GUID; the
 * per-architecture forms of the path variable win over it, so they are
 * removed. The options and the trace's path go in HEAPTRACE_CLR_OPTIONS
 * and HEAPTRACE_OUTPUT. Every variable is changed with env_override: the
 * recorder puts them back as they were once loaded, in the runtime's own
 * copy of the environment too, so that processes the program starts (the
 * compiler server of `dotnet build`, an app that `dotnet run` starts)
 * are not recorded into the same trace.
 */
#include "cli/record.h"
#include "util/alloc.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CLR_RECORDER "libheaptrace-clr.so"
/* Any GUID will do: the recorder answers to every one. This one is ours. */
#define CLR_PROFILER_GUID "{9d3f4b7e-2c61-4a8e-b5d0-7e1a6c2f8b43}"

/* A published app: PROG next to PROG.dll and PROG.runtimeconfig.json. */
static bool apphost(const char *name)
{
	char exe[PATH_MAX], sibling[PATH_MAX + 32];

	if (!resolve_command(name, exe, sizeof(exe)) || !regular_file(exe))
		return false;
	snprintf(sibling, sizeof(sibling), "%s.dll", exe);
	if (!regular_file(sibling))
		return false;
	snprintf(sibling, sizeof(sibling), "%s.runtimeconfig.json", exe);
	return regular_file(sibling);
}

static bool clr_recognizes(char **argv)
{
	return strcmp(command_base_name(argv[0]), "dotnet") == 0 ||
	       has_suffix(argv[0], ".dll") || apphost(argv[0]);
}

/* The variables that name the profiler's library: the plain one, set,
 * and those that would win over it, removed. */
static const char *const arch_paths[] = {
	"CORECLR_PROFILER_PATH_32", "CORECLR_PROFILER_PATH_64",
	"CORECLR_PROFILER_PATH_ARM32", "CORECLR_PROFILER_PATH_ARM64",
};

static int clr_prepare(const struct record_options *o, char ***argv,
		       struct env_edit *env, struct ht_error *err)
{
	struct rec_request r = {
		.dump_on = o->dump_on, .every = o->every,
		.allocations = o->allocations, .values = o->values,
		.report_fd = -1, /* HEAPTRACE_REPORT_FD, below */
	};
	char path[PATH_MAX], *options = NULL;

	if (find_recorder("clr", CLR_RECORDER, path, sizeof(path), err) < 0)
		return -1;
	if (has_suffix((*argv)[0], ".dll") && argv_insert(argv, 0, "dotnet") < 0)
		goto nomem;
	/* the trace's path goes in HEAPTRACE_OUTPUT: see above */
	options = rec_options_format(&r);
	if (!options ||
	    env_override(env, "CORECLR_ENABLE_PROFILING", "1") < 0 ||
	    env_override(env, "CORECLR_PROFILER", CLR_PROFILER_GUID) < 0 ||
	    env_override(env, "CORECLR_PROFILER_PATH", path) < 0 ||
	    env_override(env, "HEAPTRACE_CLR_OPTIONS", options) < 0 ||
	    env_override(env, "HEAPTRACE_OUTPUT", o->output) < 0 ||
	    env_report_fd(env, o->report_fd) < 0)
		goto nomem;
	for (size_t i = 0; i < ARRAY_SIZE(arch_paths); i++)
		if (getenv(arch_paths[i]) &&
		    env_override(env, arch_paths[i], NULL) < 0)
			goto nomem;
	free(options);
	return 0;
nomem:
	free(options);
	return record_error(err, "out of memory");
}

const struct runtime_recorder clr_recorder = {
	.name = "dotnet",
	.not_loaded = "the .NET runtime runs the program even when it cannot "
		      "load the profiler (PAL_OUTPUTDEBUGSTRING=1 shows why)",
	.records_allocations = true,
	.recognizes = clr_recognizes,
	.prepare = clr_prepare,
};
