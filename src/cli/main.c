/*
 * main.c - the heaptrace command: global options and the one table that
 * dispatches to the commands (builtin-*.c).
 */
#include "cli/builtin.h"
#include "cli/cli.h"
#include "util/alloc.h"

#include <heaptrace/trace.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const struct command commands[] = {
	{"record", cmd_record, "run a program under its runtime's recorder"},
	{"convert", cmd_convert, "YAML or a foreign dump to .ht"},
	{"cat", cmd_cat, "the trace as YAML events"},
	{"check", cmd_check, "format and protocol validation"},
	{"stats", cmd_stats, "per dump and per GC figures, per class"},
	{"top", cmd_top, "the biggest retainers of a dump"},
	{"object", cmd_object, "one object: sizes, dominator, referrers, refs"},
	{"paths", cmd_paths, "how roots reach an object"},
	{"threads", cmd_threads, "each thread: its stack, locals, retained size"},
	{"history", cmd_history, "an id's objects through GCs: moves, deaths"},
	{"diff", cmd_diff, "what grew between two dumps; budgets"},
	{"flame", cmd_flame, "the dominator tree as a flame graph"},
	{"waste", cmd_waste, "duplicate strings and arrays: bytes wasted"},
	{"sites", cmd_sites, "which code allocated what lives and retains"},
};

#define N_COMMANDS ARRAY_SIZE(commands)

static void print_usage(FILE *f)
{
	fprintf(f,
		"usage: heaptrace [--version] [--help] COMMAND [options] [FILE]\n"
		"\n"
		"Records what a managed runtime tells a memory profiler about its\n"
		"heap and GCs, and answers questions about it. FILE defaults to\n"
		"%s; it may be a .ht trace, its YAML text form, or a Java\n"
		"heap dump (HPROF).\n"
		"\n"
		"Commands:\n",
		DEFAULT_TRACE);
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f, "\n'heaptrace COMMAND --help' sums up a command, and "
		   "heaptrace-COMMAND(1)\nsays it all; heaptrace(1) says what "
		   "they share.\n");
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < N_COMMANDS; i++)
		if (strcmp(commands[i].name, name) == 0)
			return &commands[i];
	return NULL;
}

static int dispatch(int argc, char **argv)
{
	const struct command *cmd;

	if (argc < 2) {
		print_usage(stderr);
		return EXIT_USAGE;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		if (argc > 2 && (cmd = find_command(argv[2]))) {
			char *help_argv[] = {argv[2], "--help", NULL};

			return cmd->run(2, help_argv);
		}
		print_usage(stdout);
		return EXIT_DONE;
	}
	if (strcmp(argv[1], "--version") == 0 || strcmp(argv[1], "-V") == 0) {
		printf("heaptrace %s (trace format %d)\n", ht_version(),
		       HT_FORMAT_VERSION);
		return EXIT_DONE;
	}
	cmd = find_command(argv[1]);
	if (!cmd) {
		error_msg("'%s' is not a command. See 'heaptrace --help'.",
			  argv[1]);
		return EXIT_USAGE;
	}
	return cmd->run(argc - 1, argv + 1);
}

/*
 * A report that could not be written must not pass for one that was: a
 * command that saw its write fail says so and exits 3; this catches the
 * writes nobody checked (check's report, --help, --version), whose data
 * stdio still held or had lost.
 */
static int check_output(int status)
{
	int unflushed = fflush(stdout) != 0;
	int e = errno;

	if (!unflushed && !ferror(stdout))
		return status;
	if (status != EXIT_DONE && status != EXIT_FINDING)
		return status; /* the command said why already */
	if (unflushed) {
		errno = e;
		error_msg("standard output: cannot write: %m");
	} else {
		/* an earlier write failed: its errno is gone */
		error_msg("standard output: cannot write");
	}
	return EXIT_UNREADABLE;
}

int main(int argc, char **argv)
{
	return check_output(dispatch(argc, argv));
}
