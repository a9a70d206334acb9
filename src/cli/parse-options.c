/*
 * parse-options.c - a command's option table made into getopt_long's and
 * into the option lines of its --help (parse-options.h), and the parsers
 * of the options most commands share.
 */
#include "analysis/levels.h"
#include "cli/escape.h"
#include "cli/parse-options.h"

#include <assert.h>
#include <getopt.h>
#include <string.h>

/* More than any command has; a table is on the stack, without malloc. */
#define MAX_OPTIONS 16

/* What getopt_long returns for the entry i without a letter: past every
 * character. */
#define LONG_ONLY(i) (0x100 + (i))

static const struct cli_option *find_option(const struct cli_option *options,
					    int c)
{
	for (int i = 0; options[i].type != OPTION_END; i++)
		if (options[i].short_name ? options[i].short_name == c
					  : LONG_ONLY(i) == c)
			return &options[i];
	return NULL;
}

/* For getopt_long's ':' and '?' returns (the option string starts with ':'
 * and opterr is 0, so getopt says nothing itself): names the option and
 * returns EXIT_USAGE. */
static int bad_option(const char *cmd, const struct cli_option *options,
		      int c, char **argv)
{
	const char *opt = argv[optind - 1];
	const struct cli_option *o = c == ':' ? find_option(options, optopt)
					      : NULL;

	if (o && (o->flags & OPTION_GLOBAL)) {
		char name[64];

		/* said as when it was an option of heaptrace rather than of
		 * each command, word for word (heaptrace(1), DIAGNOSTICS) */
		snprintf(name, sizeof(name), "--%s", o->long_name);
		error_msg("option '%s' needs a value", name);
		return EXIT_USAGE;
	}
	if (c == ':')
		return usage_error(cmd, "option '%s' needs a value", opt);
	if (optopt && optopt != '?')
		return usage_error(cmd, "unknown option '-%c'", optopt);
	return usage_error(cmd, "unknown option '%s'", opt);
}

/* "-d, --dump N": its width, printed when out is not NULL. */
static int option_words(const struct cli_option *o, FILE *out)
{
	char letter[8] = "    ";

	if (o->short_name)
		snprintf(letter, sizeof(letter), "-%c, ", o->short_name);
	bool optional = o->flags & OPTION_OPTIONAL_VALUE;

	if (!out)
		return (int)(strlen(letter) + 2 + strlen(o->long_name) +
			     (o->arg_name ? 1 + strlen(o->arg_name) : 0) +
			     (optional ? 2 : 0));
	return fprintf(out, "%s--%s%s%s%s", letter, o->long_name,
		       !o->arg_name ? "" : optional ? "[=" : " ",
		       o->arg_name ? o->arg_name : "",
		       o->arg_name && optional ? "]" : "");
}

/*
 * The usage text, a line per option, then the command's man page: --help
 * is the summary, heaptrace-COMMAND(1) says it all, as git's pages do.
 */
static void print_help(const struct command_usage *usage,
		       const struct cli_option *options)
{
	int column = usage->help_column, widest = 0;

	for (int i = 0; options[i].type != OPTION_END; i++)
		if (!(options[i].flags & OPTION_HIDDEN) &&
		    option_words(&options[i], NULL) > widest)
			widest = option_words(&options[i], NULL);
	if (!column)
		column = 2 + widest + 2;
	fputs(usage->text, stdout);
	fputc('\n', stdout);
	for (int i = 0; options[i].type != OPTION_END; i++) {
		const char *help = options[i].help;
		int at;

		if (options[i].flags & OPTION_HIDDEN)
			continue;
		at = printf("  ") + option_words(&options[i], stdout);
		if (at >= column) {
			fputc('\n', stdout);
			at = 0;
		}
		printf("%*s", column - at, "");
		for (; *help; help++) {
			fputc(*help, stdout);
			if (*help == '\n')
				printf("%*s", column, "");
		}
		fputc('\n', stdout);
	}
	printf("\nSee heaptrace-%s(1).\n", usage->cmd);
}

int parse_options(int argc, char **argv, const struct command_usage *usage,
		  const struct cli_option *options)
{
	struct option longopts[MAX_OPTIONS + 1];
	char shortopts[2 + 2 * MAX_OPTIONS + 1];
	const struct cli_option *o;
	int n, k = 0, c, status;

	if (usage->options_first)
		shortopts[k++] = '+';
	shortopts[k++] = ':';
	for (n = 0; options[n].type != OPTION_END; n++) {
		assert(n < MAX_OPTIONS);
		o = &options[n];
		longopts[n] = (struct option){
			o->long_name,
			!o->arg_name ? no_argument :
			(o->flags & OPTION_OPTIONAL_VALUE) ? optional_argument :
			required_argument,
			NULL,
			o->short_name ? o->short_name : LONG_ONLY(n),
		};
		if (o->short_name) {
			shortopts[k++] = (char)o->short_name;
			if (o->arg_name)
				shortopts[k++] = ':';
		}
	}
	longopts[n] = (struct option){NULL, 0, NULL, 0};
	shortopts[k] = '\0';

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, shortopts, longopts, NULL)) != -1) {
		o = find_option(options, c);
		if (!o)
			return bad_option(usage->cmd, options, c, argv);
		switch (o->type) {
		case OPTION_BOOL:
			*(bool *)o->value = true;
			break;
		case OPTION_STRING:
			*(const char **)o->value = optarg;
			break;
		case OPTION_CALLBACK:
			status = o->parser(usage->cmd, optarg, o->value);
			if (status != EXIT_DONE)
				return status;
			break;
		case OPTION_HELP:
			print_help(usage, options);
			return EXIT_DONE;
		case OPTION_END:
			break;
		}
	}
	return OPTIONS_PARSED;
}

int parse_dump_option(const char *cmd, const char *arg, void *select)
{
	uint64_t n;

	if (parse_u64(arg, &n) < 0 || n > INT64_MAX)
		return usage_error(cmd, "--dump takes a dump number "
				   "(0 is the first)");
	*(int64_t *)select = (int64_t)n;
	return EXIT_DONE;
}

int parse_number_option(const char *cmd, const char *arg, void *limit)
{
	if (parse_u64(arg, limit) < 0)
		return usage_error(cmd, "-n takes a number");
	return EXIT_DONE;
}

size_t limit_shown(uint64_t limit, size_t available)
{
	return limit == 0 || limit > available ? available : (size_t)limit;
}

int parse_retained_option(const char *cmd, const char *arg, void *level)
{
	int l = heap_level_parse(arg);

	if (l < 0)
		return usage_error(cmd, "unknown reachability level '%s' "
				   "(strong, soft, weak, finalizer, phantom "
				   "or all)", arg);
	*(enum heap_level *)level = (enum heap_level)l;
	return EXIT_DONE;
}

int parse_format_option(const char *cmd, const char *arg, void *format)
{
	int f = parse_format(arg);

	if (f < 0)
		return usage_error(cmd, "unknown format '%s'", arg);
	*(int *)format = f;
	return EXIT_DONE;
}

int parse_full_names_option(const char *cmd, const char *arg, void *unused)
{
	(void)cmd;
	(void)arg;
	(void)unused;
	fold_names_off();
	return EXIT_DONE;
}

int parse_hprof_oops_option(const char *cmd, const char *arg, void *opts)
{
	struct ht_reader_options *o = opts;

	(void)cmd;
	if (strcmp(arg, "auto") == 0)
		o->compressed_oops = HT_COMPRESSED_OOPS_AUTO;
	else if (strcmp(arg, "yes") == 0)
		o->compressed_oops = HT_COMPRESSED_OOPS_YES;
	else if (strcmp(arg, "no") == 0)
		o->compressed_oops = HT_COMPRESSED_OOPS_NO;
	else {
		/* as the missing value above: no command name, no hint */
		error_msg("%s takes yes, no or auto, not '%s'",
			  "--hprof-compressed-oops", arg);
		return EXIT_USAGE;
	}
	return EXIT_DONE;
}
