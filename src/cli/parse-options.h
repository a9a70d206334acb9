/*
 * parse-options.h - one table of options per command, from which both its
 * getopt_long parsing and the option lines of its --help are made, as git's
 * parse-options.h does: an option's letter, name, argument, what it sets
 * and how it is explained are said once, so that what --help says and what
 * the command takes cannot drift apart. The synopsis and the paragraph
 * above the option lines stay prose, written by hand in each command.
 *
 * Also the entries most commands share (--dump, --format, --full-names,
 * --help, --hprof-compressed-oops) and the parsers of their values.
 */
#ifndef HT_PARSE_OPTIONS_H
#define HT_PARSE_OPTIONS_H

#include "analysis/levels.h"
#include "cli/cli.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Parses an option's value, arg, into what value points to, or says why
 * it cannot (usage_error with cmd, the command's name). Returns EXIT_DONE,
 * or the exit status once said: the command then returns it at once.
 */
typedef int option_parser(const char *cmd, const char *arg, void *value);

/* What an entry does with its option when the command line has it. */
enum option_type {
	OPTION_END,      /* ends a table */
	OPTION_BOOL,     /* sets *(bool *)value */
	OPTION_STRING,   /* stores the argument in *(const char **)value */
	OPTION_CALLBACK, /* parser(cmd, argument, value) */
	OPTION_HELP,     /* prints the command's --help; it exits 0 */
};

enum option_flags {
	/* not in --help: documented in the man page only */
	OPTION_HIDDEN = 1 << 0,
	/* an option of heaptrace rather than of the command, which every
	 * command takes: a missing value is said "heaptrace: option '--NAME'
	 * needs a value", without the command's name or the hint to --help
	 * (heaptrace(1), DIAGNOSTICS) */
	OPTION_GLOBAL = 1 << 1,
	/* its value may be left out: "--NAME=VALUE" or "--NAME" alone, when
	 * the parser gets NULL (getopt_long's optional_argument: a value
	 * after a space is the next word, not the option's); long only */
	OPTION_OPTIONAL_VALUE = 1 << 2,
};

/* This struct is not an API; it may change from one release to the next. */
/*
 * One option: an entry of a table that OPT_END() ends. Written with the
 * OPT_* macros below rather than by hand.
 */
struct cli_option {
	enum option_type type;
	int short_name;        /* 'd' for -d; 0 when it has none */
	const char *long_name; /* "dump" for --dump */
	const char *arg_name;  /* "N" in "--dump N"; NULL: it takes none */
	/*
	 * Its lines in --help, '\n' between them (none at the end): the first
	 * follows the option, the others are indented as far.
	 */
	const char *help;
	void *value;           /* what it sets, or what parser is given */
	option_parser *parser; /* OPTION_CALLBACK's */
	unsigned flags;        /* enum option_flags */
};

/* This struct is not an API; it may change from one release to the next. */
/*
 * What a command's --help says besides its option lines, and how those
 * are laid out.
 */
struct command_usage {
	const char *cmd;  /* "stats": messages say "heaptrace stats: ..." */
	/*
	 * "usage: heaptrace CMD ..." and the paragraph that says what the
	 * command does, every line ending in '\n'. --help prints it, a blank
	 * line, then a line per option that is not hidden:
	 * "  -d, --dump N      the dump to look in".
	 */
	const char *text;
	/*
	 * The column at which the help of every option starts; 0: two past
	 * the end of the longest "-d, --dump N". An option that reaches it
	 * has its help on the next line.
	 */
	int help_column;
	/* options end at the first operand, as with getopt's '+': record's
	 * CMD, whose options are its own */
	bool options_first;
};

/* value as a void *, once checked to be a type * */
#define OPTION_VALUE(type, v) ((void *)_Generic((v), type *: (v)))

#define OPT_END() {.type = OPTION_END}
#define OPT_BOOL(s, l, v, h) \
	{.type = OPTION_BOOL, .short_name = (s), .long_name = (l), \
	 .help = (h), .value = OPTION_VALUE(bool, v)}
#define OPT_STRING(s, l, a, v, h) \
	{.type = OPTION_STRING, .short_name = (s), .long_name = (l), \
	 .arg_name = (a), .help = (h), .value = OPTION_VALUE(const char *, v)}
#define OPT_CALLBACK(s, l, a, v, fn, h) \
	{.type = OPTION_CALLBACK, .short_name = (s), .long_name = (l), \
	 .arg_name = (a), .help = (h), .value = (v), .parser = (fn)}

/* An option whose value may be left out (OPTION_OPTIONAL_VALUE): --help
 * shows it "--NAME[=ARG]" */
#define OPT_CALLBACK_OPTIONAL(l, a, v, fn, h) \
	{.type = OPTION_CALLBACK, .long_name = (l), .arg_name = (a), \
	 .help = (h), .value = (v), .parser = (fn), \
	 .flags = OPTION_OPTIONAL_VALUE}

/* The entries that most commands share. */
#define OPT_HELP() \
	{.type = OPTION_HELP, .short_name = 'h', .long_name = "help", \
	 .help = "this help"}
/* --dump N, into an int64_t; h: which dump N is, for this command */
#define OPT_DUMP(v, h) \
	OPT_CALLBACK('d', "dump", "N", OPTION_VALUE(int64_t, v), \
		     parse_dump_option, h)
/* -n N, how many rows to list, into a uint64_t (0: all); h says of
 * what and the default */
#define OPT_NUMBER(v, h) \
	OPT_CALLBACK('n', "number", "N", OPTION_VALUE(uint64_t, v), \
		     parse_number_option, h)
/* --format text|yaml|json, into an int (enum output_format) */
#define OPT_FORMAT(v) \
	OPT_CALLBACK('f', "format", "FMT", OPTION_VALUE(int, v), \
		     parse_format_option, "text (default), yaml or json")
/*
 * --retained LEVEL, into an enum heap_level: the reachability level at
 * which a command computes dominators, retained sizes and root paths
 * (heaptrace(1), Reachability levels); the default is strong.
 */
#define OPT_RETAINED(v) \
	OPT_CALLBACK(0, "retained", "LEVEL", \
		     OPTION_VALUE(enum heap_level, v), parse_retained_option, \
		     "follow references as strong as LEVEL: strong\n" \
		     "(default), soft, weak, finalizer, phantom or all")
/*
 * --hprof-compressed-oops yes|no|auto, which every command that reads a
 * trace takes: how the JVM of an HPROF input laid out references, which
 * the dump does not record (heaptrace(1), INPUT FORMATS). Into a struct
 * ht_reader_options.
 */
#define OPT_HPROF_OOPS(v) \
	{.type = OPTION_CALLBACK, .long_name = "hprof-compressed-oops", \
	 .arg_name = "yes|no|auto", \
	 .value = OPTION_VALUE(struct ht_reader_options, v), \
	 .parser = parse_hprof_oops_option, \
	 .flags = OPTION_HIDDEN | OPTION_GLOBAL}

/*
 * --no-values, into a bool: cat and convert keep an HPROF dump's values
 * (ht_reader_options.values) unless told, since they are what a dump is
 * kept for and cat shows what convert keeps (doc/design.md, values).
 */
#define OPT_NO_VALUES(v) \
	OPT_BOOL(0, "no-values", v, \
		 "leave out an HPROF dump's values (primitive fields\n" \
		 "and array contents), kept by default")

/*
 * --full-names, which every command that prints class names as text takes:
 * the text leaves them whole rather than folded for reading (escape.h,
 * fold_name; heaptrace(1), OUTPUT, Long class names). yaml and json keep
 * them whole anyway. The setting is the process's, as --max-memory's.
 */
#define OPT_FULL_NAMES() \
	OPT_CALLBACK(0, "full-names", NULL, NULL, parse_full_names_option, \
		     "print class names whole in text, not folded")

/* The parsers of the shared entries' values (option_parser). */
int parse_dump_option(const char *cmd, const char *arg, void *select);
int parse_format_option(const char *cmd, const char *arg, void *format);
int parse_number_option(const char *cmd, const char *arg, void *limit);
/* How many of `available` rows a limit such as -n's lists: all when it
 * is 0 or more than there are, else the limit. */
size_t limit_shown(uint64_t limit, size_t available);
int parse_retained_option(const char *cmd, const char *arg, void *level);
/* takes no value: arg is NULL */
int parse_full_names_option(const char *cmd, const char *arg, void *unused);
/* says what is wrong as heaptrace, not as cmd (OPTION_GLOBAL) */
int parse_hprof_oops_option(const char *cmd, const char *arg, void *opts);

/* parse_options's return when the command goes on */
#define OPTIONS_PARSED (-1)

/*
 * Parses the options of argv (argv[0] is the command's name) by the table
 * options, which OPT_END() ends, entry by entry as they come. Returns
 * OPTIONS_PARSED with optind at the first operand, or the exit status the
 * command returns at once: EXIT_DONE once --help is printed, EXIT_USAGE
 * once said what is wrong, or what a parser returned.
 */
int parse_options(int argc, char **argv, const struct command_usage *usage,
		  const struct cli_option *options);

#endif
