/*
 * builtin-cat.c - `heaptrace cat`: the trace as YAML events, in the
 * canonical text form that `convert` reads back (so cat, convert, cat gives
 * the same bytes).
 */
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/parse-options.h"

#include "lib/read/textform.h"

#include <getopt.h>
#include <stdlib.h>

static const struct command_usage usage = {
	.cmd = "cat",
	.text = "usage: heaptrace cat [-o OUT] [FILE]\n"
		"\n"
		"Writes the trace as YAML events (the text form of heaptrace(5)).\n",
};

int cmd_cat(int argc, char **argv)
{
	struct ht_reader_options reader_options = {0};
	const char *output = NULL;
	bool no_values = false;
	struct ht_reader *r;
	struct yaml_writer *w;
	struct ht_event ev;
	struct ht_error err;
	FILE *out = stdout;
	const struct cli_option options[] = {
		OPT_STRING('o', "output", "OUT", &output,
			   "write to OUT instead of standard output"),
		OPT_NO_VALUES(&no_values),
		OPT_HELP(),
		OPT_HPROF_OOPS(&reader_options),
		OPT_END(),
	};
	int rc, status = parse_options(argc, argv, &usage, options);

	if (status != OPTIONS_PARSED)
		return status;
	status = EXIT_DONE;
	if (argc - optind > 1)
		return usage_error("cat", "one FILE at most");
	if (output && same_file(optind < argc ? argv[optind] : DEFAULT_TRACE,
				output))
		return usage_error("cat", "input and output are the same file");
	reader_options.values = !no_values;
	r = open_trace(optind < argc ? argv[optind] : NULL, &reader_options);
	if (!r)
		return EXIT_UNREADABLE;
	if (output && !(out = fopen(output, "w"))) {
		error_msg("%s: cannot create: %m", output);
		ht_reader_close(r);
		return EXIT_UNREADABLE;
	}
	w = yaml_writer_open(out, output ? output : "standard output",
			     ht_reader_header(r), &err);
	if (!w) {
		error_msg("%s", err.message);
		status = EXIT_UNREADABLE;
		goto done;
	}
	while ((rc = ht_reader_next(r, &ev, &err)) > 0) {
		if (yaml_writer_event(w, &ev, &err) < 0) {
			rc = -2;
			break;
		}
	}
	if (rc == -1) {
		/* Damaged input: what was read is written, then why it stopped. */
		error_msg("%s", err.message);
		status = EXIT_UNREADABLE;
	}
	if (rc == -2) {
		error_msg("%s", err.message);
		status = EXIT_UNREADABLE;
		yaml_writer_close(w, NULL);
	} else if (yaml_writer_close(w, &err) < 0) {
		error_msg("%s", err.message);
		status = EXIT_UNREADABLE;
	}
done:
	if (output && fclose(out) != 0 && status == EXIT_DONE) {
		error_msg("%s: cannot write: %m", output);
		status = EXIT_UNREADABLE;
	}
	ht_reader_close(r);
	return status;
}
