/*
 * record-clr.c - `heaptrace record` for .NET (CoreCLR): loads
 * libheaptrace-clr.so into `dotnet APP.dll ...`, a bare APP.dll (run
 * through dotnet), a published app (an executable next to its APP.dll and
 * APP.runtimeconfig.json), or with --runtime dotnet the SDK (`dotnet
 * build ...`); refuses what would record nothing the user meant.
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
#include "cli/cli.h"
#include "cli/record.h"
#include "util/alloc.h"

#include <errno.h>
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

/*
 * Misuse, refused before anything runs.
 *
 * `dotnet WORD`: the muxer runs WORD as an app when it is a file (a path,
 * APP.dll), else as a command of the SDK (build, run, test, watch,
 * publish, ...), which runs MSBuild. Recording that records the SDK: the
 * app `dotnet run` or `dotnet test` starts is a process of its own, which
 * the recorder leaves alone. So an SDK command is refused, with what to
 * record instead, unless --runtime dotnet says the SDK is what is meant.
 */

/* The muxer's options that come before the app or command, and take a
 * value (dotnet --help, and those of `dotnet exec`). */
static const char *const host_valued[] = {
	"--additionalprobingpath", "--additional-deps", "--depsfile",
	"--fx-version", "--roll-forward", "--roll-forward-on-no-candidate-fx",
	"--runtimeconfig",
};

static bool host_option_takes_value(const char *arg)
{
	for (size_t i = 0; i < ARRAY_SIZE(host_valued); i++)
		if (strcmp(arg, host_valued[i]) == 0)
			return true;
	return false;
}

/* The first word after the muxer's options, from argv[at]: NULL when none. */
static const char *after_host_options(char **argv, size_t at)
{
	for (size_t i = at; argv[i]; i++) {
		if (argv[i][0] != '-')
			return argv[i];
		if (host_option_takes_value(argv[i]) && argv[i + 1])
			i++;
	}
	return NULL;
}

/* The app a command line runs (APP.dll, dotnet [exec] APP.dll); *sdk set
 * to the SDK command's name when it runs one instead. */
static const char *clr_app(char **argv, const char **sdk)
{
	const char *word;

	*sdk = NULL;
	if (strcmp(command_base_name(argv[0]), "dotnet") != 0)
		return has_suffix(argv[0], ".dll") ? argv[0] : NULL;
	word = after_host_options(argv, 1);
	if (!word)
		return NULL; /* dotnet --info and the like */
	if (strcmp(word, "exec") == 0) {
		size_t i = 1;

		while (argv[i] != word)
			i++;
		return after_host_options(argv, i + 1);
	}
	if (strchr(word, '/') || has_suffix(word, ".dll") ||
	    has_suffix(word, ".exe") || regular_file(word))
		return word;
	*sdk = word;
	return NULL;
}

/* Whether the runtime's configuration variable NAME (DOTNET_NAME, else
 * COMPlus_NAME, as the runtime looks them up) is 0: into *var, the one
 * set. Its values are hexadecimal. */
static bool config_zero(const char *name, const char **var)
{
	static char found[64];
	const char *prefixes[] = {"DOTNET_", "COMPlus_"};

	for (size_t i = 0; i < ARRAY_SIZE(prefixes); i++) {
		const char *v;
		char *end;

		snprintf(found, sizeof(found), "%s%s", prefixes[i], name);
		v = getenv(found);
		if (!v || !*v)
			continue;
		*var = found;
		return strtoul(v, &end, 16) == 0 && *end == '\0';
	}
	return false;
}

/* The variables with which the runtime loads no profiler. */
static const char *diagnostics_off(void)
{
	const char *var = NULL;

	if (config_zero("EnableDiagnostics", &var) ||
	    config_zero("EnableDiagnostics_Profiler", &var))
		return var;
	return NULL;
}

static int clr_refuses(char **argv, bool named)
{
	const char *sdk, *app = clr_app(argv, &sdk), *off = diagnostics_off();

	if (off) {
		error_msg("%s=%s is set: the .NET runtime then loads no "
			  "profiler, so nothing would be recorded; unset it "
			  "for the recording (env -u %s heaptrace record ...)",
			  off, getenv(off), off);
		return EXIT_UNREADABLE;
	}
	if (app && !regular_file(app)) {
		error_msg("cannot run '%s': %s", app, strerror(ENOENT));
		return 127;
	}
	if (!sdk || named)
		return 0;
	if (strcmp(sdk, "run") == 0 || strcmp(sdk, "test") == 0 ||
	    strcmp(sdk, "watch") == 0)
		return usage_error("record", "'dotnet %s' runs MSBuild, then "
				   "the app in a process of its own, which is "
				   "not recorded: build it first (dotnet "
				   "build), then record the app itself: "
				   "heaptrace record -- dotnet "
				   "bin/Release/net10.0/App.dll, or its app "
				   "host bin/Release/net10.0/App", sdk);
	return usage_error("record", "'dotnet %s' is a command of the .NET "
			   "SDK, not an app: to record an app, record its "
			   ".dll (heaptrace record -- dotnet "
			   "bin/Release/net10.0/App.dll) or its app host "
			   "(bin/Release/net10.0/App); to record the SDK "
			   "itself (MSBuild), say --runtime dotnet", sdk);
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
		.sites = o->sites, .sites_interval = o->sites_interval,
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
		      "load the profiler (PAL_OUTPUTDEBUGSTRING=1 shows why), "
		      "and loads none when DOTNET_EnableDiagnostics or "
		      "DOTNET_EnableDiagnostics_Profiler is 0 in the "
		      "program's environment",
	.records_allocations = true,
	.recognizes = clr_recognizes,
	.refuses = clr_refuses,
	.prepare = clr_prepare,
};
