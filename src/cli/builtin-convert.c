/*
 * builtin-convert.c - `heaptrace convert IN -o OUT.ht`: any input the
 * reader understands (the YAML form, a .ht, a foreign dump) written as a
 * .ht trace through the recording shim, so the result is exactly what a
 * recording of the same events would be.
 */
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/parse-options.h"
#include "lib/common/error.h"

#include <heaptrace/record.h>

#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const struct command_usage usage = {
	.cmd = "convert",
	.text = "usage: heaptrace convert IN -o OUT.ht [--level N]\n"
		"\n"
		"Writes IN (a YAML trace, a .ht trace, or a supported foreign dump)\n"
		"as a .ht trace. Protocol violations in IN are kept (and counted).\n",
};

/* Buffers large enough that objects with millions of references stay one
 * event (the shim splits an event only when it exceeds a whole buffer). */
#define CONVERT_BUFFER_SIZE (64u << 20)
#define CONVERT_BUFFERS 4

static int copy_events(struct ht_reader *r, struct ht_recorder *rec,
		       const char *in, const char *out)
{
	struct progress *progress = progress_start("convert", in);
	struct ht_event ev;
	struct ht_error err;
	enum ht_error_code code;
	uint64_t n = 0;
	int rc, status = EXIT_DONE;

	while ((rc = ht_reader_next(r, &ev, &err)) > 0) {
		code = ht_record_event(rec, &ev);
		if (code != HT_OK) {
			struct ht_error werr;

			ht_recorder_error(rec, &werr);
			if (werr.code != HT_OK)
				error_msg("%s", werr.message);
			else
				error_msg("%s: event %llu: cannot be recorded (%s)",
					  in, (unsigned long long)n,
					  code == HT_E_INVALID ? "a field is out of range"
							       : "recorder error");
			status = EXIT_UNREADABLE;
			break;
		}
		n++;
		progress_update(progress, n, ht_reader_position(r).offset);
	}
	progress_end(progress);
	if (rc < 0) {
		error_msg("%s", err.message);
		error_msg("%s: the %llu events before the %s were written", out,
			  (unsigned long long)n,
			  err_is_damage(&err) ? "damage" : "error");
		status = EXIT_UNREADABLE;
	}
	return status;
}

static int parse_level(const char *cmd, const char *arg, void *level)
{
	uint64_t n;

	if (parse_u64(arg, &n) < 0 || n > 9)
		return usage_error(cmd, "--level takes 0 to 9, not '%s'", arg);
	*(int *)level = (int)n;
	return EXIT_DONE;
}

int cmd_convert(int argc, char **argv)
{
	struct ht_record_options ropts = {
		.buffer_size = CONVERT_BUFFER_SIZE,
		.buffers = CONVERT_BUFFERS,
		.compression_level = 6,
	};
	struct ht_reader_options reader_options = {0};
	const char *output = NULL, *input;
	bool no_values = false;
	struct ht_reader *r;
	struct ht_recorder *rec;
	struct ht_error err;
	const struct cli_option options[] = {
		OPT_STRING('o', "output", "OUT", &output,
			   "the .ht file to write (required)"),
		OPT_CALLBACK('l', "level", "N", &ropts.compression_level,
			     parse_level,
			     "zlib compression level, 0 (none) to 9 (default 6)"),
		OPT_NO_VALUES(&no_values),
		OPT_HELP(),
		OPT_HPROF_OOPS(&reader_options),
		OPT_END(),
	};
	int status = parse_options(argc, argv, &usage, options);

	if (status != OPTIONS_PARSED)
		return status;
	if (!output)
		return usage_error("convert", "-o OUT is required");
	if (argc - optind != 1)
		return usage_error("convert", "exactly one input file is needed");
	input = argv[optind];
	reader_options.values = !no_values;
	if (same_file(input, output))
		return usage_error("convert", "input and output are the same file");
	r = open_trace(input, &reader_options);
	if (!r)
		return EXIT_UNREADABLE;
	rec = ht_recorder_open(output, ht_reader_header(r), &ropts, &err);
	if (!rec) {
		error_msg("%s", err.message);
		ht_reader_close(r);
		return EXIT_UNREADABLE;
	}
	status = copy_events(r, rec, input, output);
	if (ht_recorder_close(rec, &err) != HT_OK) {
		error_msg("%s", err.message);
		status = EXIT_UNREADABLE;
	}
	ht_reader_close(r);
	return status;
}
