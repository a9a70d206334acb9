/*
 * record-java.c - `heaptrace record` for Java: loads the JVMTI agent
 * libheaptrace-jvmti.so into `java ARGS...`.
 *
 * The agent goes in as -agentpath:FILE=OPTIONS right after the command
 * name, where the launcher reads VM options, rather than through
 * JAVA_TOOL_OPTIONS: that variable is split at spaces (so no path with a
 * space could be given) and would reach every JVM the program starts, each
 * of which would then write the same trace. The trace's path goes last in
 * the options, where the agent takes the rest of the string, commas
 * included.
 *
 * A command that runs java in its turn (a wrapper script, with --runtime
 * java) gets the option through JDK_JAVA_OPTIONS instead, which only the
 * java launcher reads, quotes and all, added to what the environment
 * already holds there; the agent puts the variable back once loaded, so
 * that JVMs the program starts do not record.
 */
#include "cli/record.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JAVA_RECORDER "libheaptrace-jvmti.so"

static bool java_recognizes(char **argv)
{
	const char *slash = strrchr(argv[0], '/');

	return strcmp(slash ? slash + 1 : argv[0], "java") == 0;
}

/* The option in double quotes for JDK_JAVA_OPTIONS, where a space would
 * split it. 0, or -1 with err filled. */
static int launcher_option(struct env_edit *env, const char *option,
			   struct ht_error *err)
{
	size_t len = strlen(option) + 3;
	char *quoted;
	int rc;

	if (strchr(option, '"'))
		return record_error(err, "a path with a '\"' cannot go through "
				    "JDK_JAVA_OPTIONS: %s", option);
	quoted = malloc(len);
	if (!quoted)
		return record_error(err, "out of memory");
	snprintf(quoted, len, "\"%s\"", option);
	rc = env_append(env, "JDK_JAVA_OPTIONS", quoted, " ", false);
	free(quoted);
	return rc < 0 ? record_error(err, "out of memory") : 0;
}

static int java_prepare(const struct record_options *o, char ***argv,
			struct env_edit *env, struct ht_error *err)
{
	struct rec_request r = {
		.dump_on = o->dump_on, .every = o->every, .values = o->values,
		.sites = o->sites, .sites_interval = o->sites_interval,
		.report_fd = o->report_fd, .output = o->output,
	};
	char path[PATH_MAX], *args, *option;
	size_t len;
	int rc;

	if (find_recorder("jvm", JAVA_RECORDER, path, sizeof(path), err) < 0)
		return -1;
	args = rec_options_format(&r);
	len = args ? strlen(path) + strlen(args) + 32 : 0;
	option = args ? malloc(len) : NULL;
	if (!option) {
		free(args);
		return record_error(err, "out of memory");
	}
	snprintf(option, len, "-agentpath:%s=%s", path, args);
	free(args);
	if (!java_recognizes(*argv)) {
		rc = launcher_option(env, option, err);
		free(option);
		return rc;
	}
	rc = argv_insert(argv, 1, option);
	free(option);
	if (rc < 0)
		return record_error(err, "out of memory");
	return 0;
}

const struct runtime_recorder java_recorder = {
	.name = "java",
	.not_loaded = "a JVM that cannot load its agent does not start, "
		      "and says why",
	.records_allocations = false,
	.recognizes = java_recognizes,
	.prepare = java_prepare,
};
