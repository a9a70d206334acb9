/*
 * builtin-record.c - `heaptrace record`: runs a program under its
 * runtime's recorder and checks that a trace came out.
 *
 * The runtime parts (record-*.c, through record.h) arrange the loading;
 * this file runs the program with posix_spawn, forwards the signals meant
 * for it, shows progress on a terminal by reading the growing trace, and
 * ends with the program's own exit status, unless the recorder failed: a
 * runtime may ignore a recorder it cannot load, so a missing or empty
 * trace is an error of its own.
 */
#include "cli/budget.h"
#include "cli/builtin.h"
#include "cli/cli.h"
#include "cli/escape.h"
#include "cli/parse-options.h"
#include "cli/record.h"
#include "lib/common/format.h"
#include "util/alloc.h"
#include "util/humanize.h"

#include "ht_config.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

static const struct command_usage usage = {
	.cmd = "record",
	.text = "usage: heaptrace record [-o FILE] [--dump-on WHEN] [--every N]\n"
		"                        [--allocations] [--values] [--runtime NAME]\n"
		"                        [--sites[=INTERVAL]] [-q]\n"
		"                        [--] CMD [ARGS...]\n"
		"   or: heaptrace record --pid PID [--duration SECONDS] [-o FILE]\n"
		"                        [--dump-on WHEN] [--every N] [--values] [-q]\n"
		"\n"
		"Runs CMD, a program of a runtime heaptrace can record, with the\n"
		"runtime's recorder loaded, and writes its GCs and heap dumps to\n"
		"FILE. Runtimes: mono (mono [OPTIONS] PROG.exe ..., or PROG.exe ...),\n"
		"java, and .NET (dotnet APP.dll ..., APP.dll ..., or a published\n"
		"app); --runtime names it for a command that starts one in its turn\n"
		"(the .NET SDK, dotnet build ..., needs it). Exits with CMD's exit status (128+N when signal N\n"
		"killed it), 2 on a usage error, 3 when FILE cannot be written or the\n"
		"recorder cannot be found, did not load, wrote no trace or could not\n"
		"write it, 126 or 127 when CMD cannot be run.\n"
		"\n"
		"With --pid, attaches to the running JVM or .NET process PID instead\n"
		"(through the JDK's jcmd, or the .NET runtime's diagnostics IPC) and\n"
		"records until SIGINT (Ctrl-C) or SIGTERM, the duration's end, or the\n"
		"process's exit, then detaches; SIGUSR1 asks for a dump. Attached,\n"
		"no allocations are recorded, nor anything from before the attach.\n"
		"Exits 0 then, 3 when it cannot attach or the trace is missing.\n",
	/* options end at CMD, whose own options are its business */
	.options_first = true,
};

/* The runtimes, asked in order. */
static const struct runtime_recorder *const runtimes[] = {
	&mono_recorder,
	&java_recorder,
	&clr_recorder,
};
#define N_RUNTIMES ARRAY_SIZE(runtimes)

/* Signals meant for the program when they are sent to us. SIGINT and
 * SIGQUIT from a terminal reach the whole process group, the program
 * included: those we only ignore while it runs. */
static const int forwarded[] = {SIGTERM, SIGHUP, SIGUSR1, SIGUSR2};
static const int ignored[] = {SIGINT, SIGQUIT};
#define N_FORWARDED ARRAY_SIZE(forwarded)
#define N_IGNORED ARRAY_SIZE(ignored)

static volatile sig_atomic_t child_pid;

/* ---- what record.h offers the runtime parts ------------------------------ */

int record_error(struct ht_error *err, const char *fmt, ...)
{
	va_list ap;

	memset(err, 0, sizeof(*err));
	err->code = HT_E_INVALID;
	va_start(ap, fmt);
	vsnprintf(err->message, sizeof(err->message), fmt, ap);
	va_end(ap);
	return -1;
}

const char *command_base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

bool has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

bool regular_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

bool resolve_command(const char *name, char *out, size_t len)
{
	const char *path = getenv("PATH");

	if (strchr(name, '/')) {
		snprintf(out, len, "%s", name);
		return access(out, X_OK) == 0;
	}
	for (const char *p = path; p && *p;) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);

		if ((size_t)snprintf(out, len, "%.*s/%s", (int)n, n ? p : ".",
				     name) < len &&
		    regular_file(out) && access(out, X_OK) == 0)
			return true;
		p = colon ? colon + 1 : NULL;
	}
	return false;
}

static struct env_var *env_find(const struct env_edit *e, const char *name)
{
	for (size_t i = 0; i < e->n; i++)
		if (strcmp(e->vars[i].name, name) == 0)
			return &e->vars[i];
	return NULL;
}

int env_set(struct env_edit *e, const char *name, const char *value)
{
	struct env_var *v = env_find(e, name);
	char *copy = value ? strdup(value) : NULL;

	if (value && !copy)
		return -1;
	if (v) {
		free(v->value);
		v->value = copy;
		return 0;
	}
	if (ALLOC_GROW(e->vars, e->n + 1, e->cap) < 0)
		goto fail;
	e->vars[e->n].name = strdup(name);
	if (!e->vars[e->n].name)
		goto fail;
	e->vars[e->n++].value = copy;
	return 0;
fail:
	free(copy);
	return -1;
}

const char *env_value(const struct env_edit *e, const char *name)
{
	const struct env_var *v = env_find(e, name);

	return v ? v->value : getenv(name);
}

/* Is NAME a word of the space-separated LIST? */
static bool in_list(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ' ');
		size_t len = end ? (size_t)(end - p) : strlen(p);

		if (len == n && strncmp(p, name, n) == 0)
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

/* Saves the inherited value once, for the recorder to put back, and adds
 * NAME to HEAPTRACE_RESTORE; HEAPTRACE_SET_<NAME> says what record set,
 * so that the recorder can tell a wrapper's change from record's. */
int env_override(struct env_edit *e, const char *name, const char *value)
{
	char saved[256], set[256];
	const char *list = env_value(e, "HEAPTRACE_RESTORE");

	snprintf(saved, sizeof(saved), "HEAPTRACE_SAVED_%s", name);
	if (!in_list(list, name)) {
		const char *old = getenv(name);
		size_t len = (list ? strlen(list) + 1 : 0) + strlen(name) + 1;
		char *nlist = malloc(len);
		int rc;

		if (!nlist)
			return -1;
		snprintf(nlist, len, "%s%s%s", list ? list : "",
			 list ? " " : "", name);
		rc = env_set(e, "HEAPTRACE_RESTORE", nlist);
		free(nlist);
		if (rc < 0 || env_set(e, saved, old) < 0)
			return -1;
	}
	snprintf(set, sizeof(set), "HEAPTRACE_SET_%s", name);
	if (env_set(e, set, value) < 0)
		return -1;
	return env_set(e, name, value);
}

int env_append(struct env_edit *env, const char *name, const char *word,
	       const char *sep, bool prepend)
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

int env_report_fd(struct env_edit *e, int fd)
{
	char text[16];

	if (fd < 0)
		return 0;
	snprintf(text, sizeof(text), "%d", fd);
	return env_override(e, "HEAPTRACE_REPORT_FD", text);
}

void env_free(struct env_edit *e)
{
	for (size_t i = 0; i < e->n; i++) {
		free(e->vars[i].name);
		free(e->vars[i].value);
	}
	free(e->vars);
	memset(e, 0, sizeof(*e));
}

int argv_insert(char ***argv, size_t at, const char *arg)
{
	size_t n = 0;
	char **v = *argv, *copy = strdup(arg);

	if (!copy)
		return -1;
	while (v[n])
		n++;
	if (at > n)
		at = n;
	if (RESIZE_ARRAY(v, n + 2) < 0) {
		free(copy);
		return -1;
	}
	memmove(v + at + 1, v + at, (n - at + 1) * sizeof(*v));
	v[at] = copy;
	*argv = v;
	return 0;
}

static bool readable(const char *path)
{
	return access(path, R_OK) == 0;
}

/* The directory of this heaptrace, without the trailing slash. */
static bool self_dir(char *buf, size_t len)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	char *slash;

	if (n <= 0)
		return false;
	buf[n] = '\0';
	slash = strrchr(buf, '/');
	if (!slash)
		return false;
	*slash = '\0';
	return true;
}

int find_recorder(const char *subdir, const char *file, char *path,
		  size_t len, struct ht_error *err)
{
	const char *dir = getenv("HEAPTRACE_RECORDER_DIR");
	char self[PATH_MAX], tried[3][PATH_MAX + 64];
	int n = 0;

	if (dir && *dir) {
		snprintf(path, len, "%s/%s", dir, file);
		if (readable(path))
			return 0;
		return record_error(err, "HEAPTRACE_RECORDER_DIR is %s, which "
				    "holds no readable %s", dir, file);
	}
	if (self_dir(self, sizeof(self))) {
		/* a build tree: build/src/cli/heaptrace and
		 * build/src/recorders/SUBDIR/FILE */
		snprintf(tried[n++], sizeof(tried[0]), "%s/../recorders/%s/%s",
			 self, subdir, file);
		if (HT_LIBDIR_REL[0] != '/')
			snprintf(tried[n++], sizeof(tried[0]), "%s/../%s/%s",
				 self, HT_LIBDIR_REL, file);
	}
	snprintf(tried[n++], sizeof(tried[0]), "%s/%s", HT_LIBDIR, file);
	for (int i = 0; i < n; i++) {
		if (readable(tried[i])) {
			if (!realpath(tried[i], path))
				snprintf(path, len, "%s", tried[i]);
			return 0;
		}
	}
	return record_error(err, "cannot find %s: looked in %s%s%s%s%s (set "
			    "HEAPTRACE_RECORDER_DIR to its directory)", file,
			    tried[0],
			    n > 1 ? ", " : "", n > 1 ? tried[1] : "",
			    n > 2 ? ", " : "", n > 2 ? tried[2] : "");
}

/* ---- options ------------------------------------------------------------- */

struct record_cmd {
	struct record_options opt;
	const struct runtime_recorder *runtime;  /* --runtime, else NULL */
	const char *output_arg;
	bool every_given;
	bool quiet;
	long pid;          /* --pid, 0 without */
	double duration;   /* --duration in seconds, 0 without */
	char output[PATH_MAX];
	char **argv;       /* the program's, malloc'ed */
	struct env_edit env;
	int report[2];     /* the recorder's channel: ours, the program's */
};

static int parse_dump_on(const char *cmd, const char *arg, void *dump_on)
{
	if (dump_on_parse(arg, strlen(arg), dump_on) < 0)
		return usage_error(cmd, "--dump-on takes major, every-gc, exit "
				   "or signal, not '%s'", arg);
	return EXIT_DONE;
}

static int parse_every(const char *cmd, const char *arg, void *record)
{
	struct record_cmd *c = record;
	uint64_t n;

	if (parse_u64(arg, &n) < 0 || n == 0 || n > 1000000000)
		return usage_error(cmd, "--every takes a number from 1 to "
				   "1000000000, not '%s'", arg);
	c->opt.every = (unsigned)n;
	c->every_given = true;
	return EXIT_DONE;
}

/* --sites alone: the runtime's own interval; =all: every allocation;
 * =SIZE: "512KiB", "100kB", as --max-memory takes it (budget.h). */
static int parse_sites(const char *cmd, const char *arg, void *record)
{
	struct record_cmd *c = record;
	uint64_t n;

	c->opt.sites = true;
	if (!arg) {
		c->opt.sites_interval = REC_SITES_DEFAULT;
		return EXIT_DONE;
	}
	if (strcmp(arg, "all") == 0) {
		c->opt.sites_interval = REC_SITES_ALL;
		return EXIT_DONE;
	}
	if (parse_size(arg, &n) < 0 || n == 0 || n > REC_SITES_INTERVAL_MAX)
		return usage_error(cmd, "--sites takes a sampling interval in "
				   "bytes (such as 512k), from 1 to 1T, or all, "
				   "not '%s'", arg);
	c->opt.sites_interval = n;
	return EXIT_DONE;
}

static int parse_pid(const char *cmd, const char *arg, void *pid)
{
	uint64_t n;

	if (parse_u64(arg, &n) < 0 || n == 0 || n > INT_MAX)
		return usage_error(cmd, "--pid takes a process id, not '%s'",
				   arg);
	*(long *)pid = (long)n;
	return EXIT_DONE;
}

static int parse_duration(const char *cmd, const char *arg, void *secs)
{
	char *end;
	double d;

	errno = 0;
	d = strtod(arg, &end);
	if (errno || end == arg || *end || !(d > 0) || d > 1e7)
		return usage_error(cmd, "--duration takes seconds, more than 0 "
				   "and at most 10000000, not '%s'", arg);
	*(double *)secs = d;
	return EXIT_DONE;
}

static int parse_runtime(const char *cmd, const char *arg, void *record)
{
	struct record_cmd *c = record;

	for (size_t i = 0; i < N_RUNTIMES; i++) {
		if (strcmp(runtimes[i]->name, arg) == 0) {
			c->runtime = runtimes[i];
			return EXIT_DONE;
		}
	}
	return usage_error(cmd, "--runtime takes mono, java or dotnet, not "
			   "'%s'", arg);
}

/* The options, and that a program follows (or --pid): OPTIONS_PARSED when
 * it is to run, otherwise the exit status (parse_options). */
static int parse_arguments(struct record_cmd *c, int argc, char **argv)
{
	const struct cli_option options[] = {
		OPT_STRING('o', "output", "FILE", &c->output_arg,
			   "the trace to write (default " DEFAULT_TRACE ")"),
		OPT_CALLBACK('d', "dump-on", "WHEN", &c->opt.dump_on,
			     parse_dump_on,
			     "when to dump the heap: major (at full\n"
			     "collections, the default), every-gc, exit, or\n"
			     "signal (on SIGUSR1); and always one at exit"),
		OPT_CALLBACK('e', "every", "N", c, parse_every,
			     "dump at every Nth collection that qualifies\n"
			     "(with major and every-gc; default 1)"),
		OPT_BOOL('a', "allocations", &c->opt.allocations,
			 "record every allocation as well (slower)"),
		OPT_BOOL(0, "values", &c->opt.values,
			 "record values in each dump: on Java every\n"
			 "primitive field and array, on Mono and .NET each\n"
			 "string's text (a larger trace, a longer pause)"),
		OPT_CALLBACK_OPTIONAL("sites", "INTERVAL", c, parse_sites,
				      "record allocation stacks, sampled once\n"
				      "per INTERVAL bytes allocated on average\n"
				      "(default: the runtime's own), or all of\n"
				      "them with --sites=all (slower)"),
		OPT_CALLBACK('r', "runtime", "NAME", c, parse_runtime,
			     "mono, java or dotnet: the runtime CMD starts,\n"
			     "when it is not one heaptrace recognizes (a\n"
			     "script, a launcher)"),
		OPT_BOOL('q', "quiet", &c->quiet, "no summary at the end"),
		OPT_CALLBACK('p', "pid", "PID", &c->pid, parse_pid,
			     "attach to the running JVM or .NET process PID\n"
			     "rather than run a program"),
		OPT_CALLBACK('t', "duration", "SECONDS", &c->duration,
			     parse_duration,
			     "with --pid: stop after SECONDS (default: at\n"
			     "SIGINT or SIGTERM, or when the process exits)"),
		OPT_HELP(),
		OPT_END(),
	};
	int status = parse_options(argc, argv, &usage, options);

	if (status != OPTIONS_PARSED)
		return status;
	if (c->duration > 0 && !c->pid)
		return usage_error("record", "--duration goes with --pid");
	if (c->pid && optind < argc)
		return usage_error("record", "--pid records a process that runs "
				   "already: no program to run, not '%s'",
				   argv[optind]);
	if (c->pid && c->runtime)
		return usage_error("record", "--runtime goes with a program to "
				   "run: --pid attaches to a running process");
	if (c->pid && c->opt.allocations)
		return usage_error("record", "--allocations is not available "
				   "with --pid: allocations are recorded from a "
				   "program's start only (heaptrace record "
				   "--allocations -- CMD)");
	if (c->pid && c->opt.sites)
		return usage_error("record", "--sites is not available with "
				   "--pid: allocation stacks are recorded from a "
				   "program's start only (heaptrace record "
				   "--sites -- CMD)");
	if (!c->pid && optind >= argc)
		return usage_error("record", "no program to run: heaptrace "
				   "record [options] -- CMD [ARGS...]");
	if (c->every_given && c->opt.dump_on != DUMP_ON_MAJOR &&
	    c->opt.dump_on != DUMP_ON_EVERY_GC)
		return usage_error("record", "--every goes with --dump-on "
				   "major or every-gc");
	return OPTIONS_PARSED;
}

static bool is_directory(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* false with errno set otherwise (a regular file in the way, no write
 * permission, a read-only file system). */
static bool writable_directory(const char *path)
{
	if (!is_directory(path)) {
		errno = ENOTDIR;
		return false;
	}
	return access(path, W_OK) == 0;
}

/* The trace's absolute path: the recorder runs in the program's working
 * directory, which the program may change. A trace that cannot be written
 * there is refused before the program runs: the recorder, inside it, could
 * only say so on the program's standard error. */
static int absolute_output(struct record_cmd *c)
{
	const char *arg = c->output_arg ? c->output_arg : DEFAULT_TRACE;
	char dir[PATH_MAX], real[PATH_MAX];
	const char *slash = strrchr(arg, '/'), *base = slash ? slash + 1 : arg;

	if (!*base || is_directory(arg))
		return usage_error("record", "'%s' names a directory, not a "
				   "file", arg);
	if (slash) /* "/x.ht" is in "/" */
		snprintf(dir, sizeof(dir), "%.*s",
			 (int)(slash - arg + (slash == arg)), arg);
	else
		snprintf(dir, sizeof(dir), ".");
	if (!realpath(dir, real) || !writable_directory(real)) {
		error_msg("%s: cannot write: %s", arg, strerror(errno));
		return EXIT_UNREADABLE;
	}
	if ((size_t)snprintf(c->output, sizeof(c->output), "%s/%s",
			     strcmp(real, "/") ? real : "", base) >=
	    sizeof(c->output))
		return usage_error("record", "%s: path too long", arg);
	c->opt.output = c->output;
	return 0;
}

static char **copy_argv(char **argv)
{
	size_t n = 0;
	char **v;

	while (argv[n])
		n++;
	v = calloc(n + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		v[i] = strdup(argv[i]);
		if (!v[i]) {
			while (i--)
				free(v[i]);
			free(v);
			return NULL;
		}
	}
	return v;
}

static void free_argv(char **v)
{
	if (!v)
		return;
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

/* NAME runs nothing: no such file (with a slash), none on PATH. */
static bool command_missing(const char *name)
{
	char exe[PATH_MAX];

	if (strchr(name, '/'))
		return access(name, F_OK) != 0 && errno == ENOENT;
	return !resolve_command(name, exe, sizeof(exe));
}

static const struct runtime_recorder *find_runtime(char **argv)
{
	for (size_t i = 0; i < N_RUNTIMES; i++)
		if (runtimes[i]->recognizes(argv))
			return runtimes[i];
	return NULL;
}

/* ---- an output that is not the program's --------------------------------- */

/* Whether path names the file of *out (by device and inode, after every
 * link). */
static bool names_file(const char *path, const struct stat *out)
{
	struct stat st;

	return *path && stat(path, &st) == 0 && st.st_dev == out->st_dev &&
	       st.st_ino == out->st_ino;
}

/* Whether a word of the program's command line (or a class path) names the
 * file of *out: whole, after its first '=' (--file=PATH, -Dx=PATH), or as
 * one of the ':'-separated entries of either (-cp a.jar:b, CLASSPATH). */
static bool mentions_file(const char *word, const struct stat *out)
{
	const char *eq = strchr(word, '=');
	const char *parts[2] = {word, eq ? eq + 1 : NULL};
	char entry[PATH_MAX];

	for (int i = 0; i < 2 && parts[i]; i++) {
		const char *p = parts[i], *colon;

		if (names_file(p, out))
			return true;
		for (; (colon = strchr(p, ':')); p = colon + 1) {
			size_t n = (size_t)(colon - p);

			if (n < sizeof(entry)) {
				memcpy(entry, p, n);
				entry[n] = '\0';
				if (names_file(entry, out))
					return true;
			}
		}
		if (p != parts[i] && names_file(p, out))
			return true;
	}
	return false;
}

/* Whether the file at path holds a .ht trace as far as it goes: empty, or
 * its first bytes those of HT_MAGIC (a recording cut short). A file that
 * cannot be read is let be: removing it is what decides. */
static bool may_be_trace(const char *path)
{
	unsigned char head[HT_MAGIC_LEN];
	FILE *f = fopen(path, "rb");
	size_t n;

	if (!f)
		return true;
	n = fread(head, 1, sizeof(head), f);
	fclose(f);
	return memcmp(head, HT_MAGIC, n) == 0;
}

/* The trace replaces what -o names (run removes it first): refused, before
 * anything runs, when that is a file the program needs. `record -o
 * Hello.class -- java -cp . Hello` would remove the class and run the
 * trace as it. A file that is not a trace is never the trace of an earlier
 * run (the program, a class, a jar, a source); one the program's command
 * line or CLASSPATH names is its input, even a trace. A trace in a
 * directory of the class path (heaptrace.ht in -cp .) is fine: the JVM
 * reads classes and jars there, not traces. */
static int output_not_the_programs(const struct record_cmd *c,
				   const struct runtime_recorder *rt,
				   char **argv)
{
	const char *shown = c->output_arg ? c->output_arg : DEFAULT_TRACE;
	const char *classpath = rt == &java_recorder ? getenv("CLASSPATH")
						     : NULL;
	struct stat out;

	if (stat(c->output, &out) != 0 || !S_ISREG(out.st_mode))
		return 0;
	for (size_t i = 0; argv[i]; i++)
		if (mentions_file(argv[i], &out))
			return usage_error("record", "'%s' is named by the "
					   "program's command line; the trace "
					   "would replace it", shown);
	if (classpath && mentions_file(classpath, &out))
		return usage_error("record", "'%s' is on the CLASSPATH; the "
				   "trace would replace it", shown);
	if (!may_be_trace(c->output))
		return usage_error("record", "'%s' exists and is not a "
				   "heaptrace trace; the trace would replace "
				   "it", shown);
	return 0;
}

/* ---- running the program ------------------------------------------------- */

/* environ with the edits applied; the strings of environ are shared, so
 * only the array and the edited entries are freed (free_envp). */
static char **build_envp(const struct env_edit *e, char ***owned,
			 size_t *n_owned)
{
	size_t n = 0, k = 0, o = 0;
	char **envp, **own;

	while (environ[n])
		n++;
	envp = calloc(n + e->n + 1, sizeof(*envp));
	own = calloc(e->n + 1, sizeof(*own));
	if (!envp || !own)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t len = eq ? (size_t)(eq - environ[i]) : 0;
		bool edited = false;

		for (size_t j = 0; eq && j < e->n; j++)
			if (strlen(e->vars[j].name) == len &&
			    strncmp(environ[i], e->vars[j].name, len) == 0)
				edited = true;
		if (!edited)
			envp[k++] = environ[i];
	}
	for (size_t j = 0; j < e->n; j++) {
		size_t len;

		if (!e->vars[j].value)
			continue;
		len = strlen(e->vars[j].name) + strlen(e->vars[j].value) + 2;
		own[o] = malloc(len);
		if (!own[o])
			goto fail;
		snprintf(own[o], len, "%s=%s", e->vars[j].name,
			 e->vars[j].value);
		envp[k++] = own[o++];
	}
	*owned = own;
	*n_owned = o;
	return envp;
fail:
	for (size_t i = 0; own && i < o; i++)
		free(own[i]);
	free(own);
	free(envp);
	return NULL;
}

static void forward_signal(int sig)
{
	int saved = errno;

	if (child_pid > 0)
		kill((pid_t)child_pid, sig);
	errno = saved;
}

struct saved_signals {
	struct sigaction fwd[N_FORWARDED], ign[N_IGNORED];
};

static void take_signals(struct saved_signals *s)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_RESTART;
	sa.sa_handler = forward_signal;
	for (size_t i = 0; i < N_FORWARDED; i++)
		sigaction(forwarded[i], &sa, &s->fwd[i]);
	sa.sa_handler = SIG_IGN;
	for (size_t i = 0; i < N_IGNORED; i++)
		sigaction(ignored[i], &sa, &s->ign[i]);
}

static void give_back_signals(const struct saved_signals *s)
{
	for (size_t i = 0; i < N_FORWARDED; i++)
		sigaction(forwarded[i], &s->fwd[i], NULL);
	for (size_t i = 0; i < N_IGNORED; i++)
		sigaction(ignored[i], &s->ign[i], NULL);
}

/* The program starts with default dispositions and an empty mask, not
 * with our handlers. The forwarded signals stay blocked here until its
 * pid is known, so that none is lost in between. */
static int spawn(struct record_cmd *c, char **envp, pid_t *pid)
{
	posix_spawnattr_t attr;
	sigset_t defaults, empty, block, old;
	int rc;

	sigemptyset(&defaults);
	sigemptyset(&block);
	for (size_t i = 0; i < N_FORWARDED; i++) {
		sigaddset(&defaults, forwarded[i]);
		sigaddset(&block, forwarded[i]);
	}
	for (size_t i = 0; i < N_IGNORED; i++)
		sigaddset(&defaults, ignored[i]);
	sigemptyset(&empty);
	posix_spawnattr_init(&attr);
	posix_spawnattr_setsigdefault(&attr, &defaults);
	posix_spawnattr_setsigmask(&attr, &empty);
	posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGDEF |
					 POSIX_SPAWN_SETSIGMASK);
	sigprocmask(SIG_BLOCK, &block, &old);
	rc = posix_spawnp(pid, c->argv[0], NULL, &attr, c->argv, envp);
	if (rc == 0)
		child_pid = *pid;
	sigprocmask(SIG_SETMASK, &old, NULL);
	posix_spawnattr_destroy(&attr);
	return rc;
}

/* ---- progress, and what the trace holds ---------------------------------- */

struct trace_summary {
	bool exists;
	bool readable;
	uint64_t events, gcs, dumps, bytes;
	char why[512];
};

/* Reads what is there, a trailing chunk still being written included: the
 * counts are those of the intact part. Unless FULL, it stops at the first
 * event: then s->events is 0 or 1, and the rest is not counted. */
static void summarize(const char *path, struct trace_summary *s, bool full)
{
	struct ht_replay_callbacks cb = {0};
	struct ht_replay_summary sum = {0};
	struct ht_error err;
	struct ht_reader *r;
	struct stat st;

	memset(s, 0, sizeof(*s));
	if (stat(path, &st) != 0) {
		snprintf(s->why, sizeof(s->why), "%s", strerror(errno));
		return;
	}
	s->exists = true;
	s->bytes = (uint64_t)st.st_size;
	r = ht_reader_open(path, &err);
	if (!r) {
		snprintf(s->why, sizeof(s->why), "%s", err.message);
		return;
	}
	s->readable = true;
	if (!full) {
		struct ht_event ev;

		s->events = ht_reader_next(r, &ev, &err) == 1;
		ht_reader_close(r);
		return;
	}
	ht_replay(r, &cb, NULL, &sum, &err);
	s->events = sum.events;
	s->gcs = sum.gcs;
	s->dumps = sum.dumps;
	ht_reader_close(r);
}

static double now_seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Re-reading the trace costs time in proportion to its size: the next
 * look waits at least ten times as long as this one took. */
void record_progress_tick(struct progress_line *p, const char *path)
{
	struct trace_summary s;
	double t0 = now_seconds(), took;
	char bytes[SIZE_TEXT], gcs[48], dumps[48];
	struct stat st;

	if (!p->line || t0 < p->next)
		return;
	if (stat(path, &st) != 0 || (uint64_t)st.st_size == p->last_bytes) {
		p->next = t0 + 0.25;
		return;
	}
	p->last_bytes = (uint64_t)st.st_size;
	summarize(path, &s, true);
	took = now_seconds() - t0;
	p->next = now_seconds() + (took * 10 > 0.25 ? took * 10 : 0.25);
	progress_show(p->line, "%s, %s, %s written",
		      count_of(s.gcs, "GC", "GCs", gcs),
		      count_of(s.dumps, "dump", "dumps", dumps),
		      format_size(s.bytes, SIZE_FROM_TEN, bytes));
}

static int wait_for(pid_t pid, const char *path, int *status)
{
	struct progress_line p = {
		.line = progress_start("heaptrace record", NULL)};
	struct timespec tick = {0, 50 * 1000 * 1000};

	for (;;) {
		pid_t w = waitpid(pid, status, p.line ? WNOHANG : 0);

		if (w == pid)
			break;
		if (w < 0 && errno != EINTR) {
			progress_end(p.line);
			return -1;
		}
		if (w == 0) {
			record_progress_tick(&p, path);
			nanosleep(&tick, NULL);
		}
	}
	progress_end(p.line);
	return 0;
}

static int exit_status_of(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return EXIT_UNREADABLE;
}

/* How the program ended, for messages: "exited with status 1". */
static void describe_end(int status, char *buf, size_t len)
{
	if (WIFSIGNALED(status))
		snprintf(buf, len, "was killed by signal %d", WTERMSIG(status));
	else
		snprintf(buf, len, "exited with status %d",
			 WEXITSTATUS(status));
}

/* "wrote FILE: 3 GCs, 1 dump, 120 events, 2.0 KiB" */
static void print_summary(const char *path, const struct trace_summary *s)
{
	char bytes[SIZE_TEXT], gcs[48], dumps[48], events[48];

	format_size(s->bytes, SIZE_FROM_TEN, bytes);
	fprintf(stderr, "heaptrace record: wrote %s: %s, %s, %s, %s\n",
		esc_text(path),
		count_of(s->gcs, "GC", "GCs", gcs),
		count_of(s->dumps, "dump", "dumps", dumps),
		count_of(s->events, "event", "events", events), bytes);
}

int record_check_trace(const char *output, const struct runtime_recorder *rt,
		       const char *end, bool quiet)
{
	struct trace_summary s;

	summarize(output, &s, !quiet);
	if (!s.exists) {
		error_msg("the %s recorder did not record: no trace at %s (the "
			  "program %s)", rt->name, output, end);
		error_msg("%s: see FILES in heaptrace(1)", rt->not_loaded);
		return -1;
	}
	if (!s.readable) {
		error_msg("the %s recorder wrote an unreadable trace: %s",
			  rt->name, s.why);
		return -1;
	}
	if (s.events == 0) {
		error_msg("the %s recorder loaded but recorded nothing into %s "
			  "before the program %s", rt->name, output, end);
		return -1;
	}
	if (!quiet)
		print_summary(output, &s);
	return 0;
}

/* 0 when the trace holds something; the error otherwise. The recorder's
 * own message, if it could give one, came before, on the program's
 * standard error. */
static int check_trace(const struct record_cmd *c,
		       const struct runtime_recorder *rt, int status)
{
	char end[64];

	describe_end(status, end, sizeof(end));
	return record_check_trace(c->output, rt, end, c->quiet);
}

/* ---- the recorder's word ------------------------------------------------- */

/* The channel on which the recorder says that it could not write the
 * trace (recorders/report.h): a socket pair, our end close-on-exec, the
 * program's end inherited by it. Without one (no descriptor to be had)
 * the program is recorded all the same, and only the trace tells. */
static void open_report_channel(struct record_cmd *c)
{
	c->opt.report_fd = -1;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, c->report) != 0) {
		c->report[0] = c->report[1] = -1;
		return;
	}
	/* a descriptor of 0 to 2 would be the program's standard stream */
	if (c->report[1] <= STDERR_FILENO ||
	    fcntl(c->report[1], F_SETFD, 0) != 0) {
		close(c->report[0]);
		close(c->report[1]);
		c->report[0] = c->report[1] = -1;
		return;
	}
	c->opt.report_fd = c->report[1];
}

static void close_report_channel(struct record_cmd *c)
{
	for (int i = 0; i < 2; i++)
		if (c->report[i] >= 0)
			close(c->report[i]);
	c->report[0] = c->report[1] = -1;
}

/* What the recorder said, once the program has ended: its lines into
 * buf, "" when nothing. A process the program started may still hold its
 * end, so this takes what is there and does not wait for more. */
static void read_report(const struct record_cmd *c, char *buf, size_t len)
{
	size_t n = 0;
	ssize_t got;

	buf[0] = '\0';
	if (c->report[0] < 0)
		return;
	while (n + 1 < len &&
	       (got = recv(c->report[0], buf + n, len - 1 - n,
			   MSG_DONTWAIT)) > 0)
		n += (size_t)got;
	buf[n] = '\0';
}

/* The recorder's failures, one message each, with how the program ended:
 * true when there was one. */
static bool recorder_failed(const struct record_cmd *c,
			    const struct runtime_recorder *rt, int status)
{
	char text[4096], end[64], *save = NULL;
	bool any = false;

	read_report(c, text, sizeof(text));
	describe_end(status, end, sizeof(end));
	for (char *line = strtok_r(text, "\n", &save); line;
	     line = strtok_r(NULL, "\n", &save)) {
		error_msg("the %s recorder could not write the trace: %s (the "
			  "program %s)", rt->name, esc_text(line), end);
		any = true;
	}
	return any;
}

static int run(struct record_cmd *c, const struct runtime_recorder *rt)
{
	struct saved_signals saved;
	size_t n_owned = 0;
	char **owned = NULL, **envp = build_envp(&c->env, &owned, &n_owned);
	int rc, status = 0, code;
	pid_t pid;

	if (!envp) {
		error_msg("out of memory");
		return EXIT_UNREADABLE;
	}
	/* a trace left from an earlier run must not pass for this one's: one
	 * that stays would, when the recorder cannot write it either */
	if (unlink(c->output) != 0 && errno != ENOENT) {
		error_msg("%s: cannot remove the old trace: %s", c->output,
			  strerror(errno));
		code = EXIT_UNREADABLE;
		goto out;
	}
	take_signals(&saved);
	rc = spawn(c, envp, &pid);
	if (rc != 0) {
		give_back_signals(&saved);
		error_msg("cannot run '%s': %s", c->argv[0], strerror(rc));
		code = rc == ENOENT ? 127 : 126;
		goto out;
	}
	/* only the program holds its end now: the recorder's word is all
	 * that comes through */
	if (c->report[1] >= 0)
		close(c->report[1]);
	c->report[1] = -1;
	rc = wait_for(pid, c->output, &status);
	child_pid = 0;
	give_back_signals(&saved);
	if (rc < 0) {
		error_msg("waiting for '%s': %s", c->argv[0], strerror(errno));
		code = EXIT_UNREADABLE;
		goto out;
	}
	code = exit_status_of(status);
	if (recorder_failed(c, rt, status) || check_trace(c, rt, status) < 0)
		code = EXIT_UNREADABLE;
out:
	for (size_t i = 0; i < n_owned; i++)
		free(owned[i]);
	free(owned);
	free(envp);
	return code;
}

int cmd_record(int argc, char **argv)
{
	struct record_cmd c = {.opt = {.dump_on = DUMP_ON_MAJOR, .every = 1}};
	const struct runtime_recorder *rt;
	struct ht_error err;
	int rc;

	rc = parse_arguments(&c, argc, argv);
	if (rc != OPTIONS_PARSED)
		return rc;
	if ((rc = absolute_output(&c)) != 0)
		return rc;
	if (c.pid)
		return record_attach(&c.opt, (pid_t)c.pid, c.duration, c.quiet);
	rt = c.runtime ? c.runtime : find_runtime(argv + optind);
	if (!rt && command_missing(argv[optind])) {
		/* as spawn's ENOENT would say, not "not a command" */
		error_msg("cannot run '%s': %s", argv[optind], strerror(ENOENT));
		return 127;
	}
	if (!rt)
		return usage_error("record", "'%s' is not a command heaptrace "
				   "can record: it knows mono (mono PROG.exe, "
				   "PROG.exe, or a script that runs one under "
				   "mono), java and dotnet (dotnet "
				   "APP.dll, APP.dll, or a published app); "
				   "--runtime says which one a command starts",
				   argv[optind]);
	if (c.opt.allocations && !rt->records_allocations)
		return usage_error("record", "--allocations is not available "
				   "for %s: its recorder records GCs and heap "
				   "dumps only", rt->name);
	if (rt->refuses &&
	    (rc = rt->refuses(argv + optind, c.runtime != NULL)) != 0)
		return rc;
	/* A command named with --runtime, looked for before it is spawned:
	 * an exec that fails is not always told back (a tool such as
	 * valgrind that follows children runs the exec itself). A command
	 * the runtime recognized runs through the runtime (APP.dll through
	 * dotnet), whose recorder looks for the program itself. */
	if (c.runtime && command_missing(argv[optind])) {
		error_msg("cannot run '%s': %s", argv[optind], strerror(ENOENT));
		return 127;
	}
	if ((rc = output_not_the_programs(&c, rt, argv + optind)) != 0)
		return rc;
	c.argv = copy_argv(argv + optind);
	if (!c.argv) {
		error_msg("out of memory");
		return EXIT_UNREADABLE;
	}
	open_report_channel(&c);
	if (rt->prepare(&c.opt, &c.argv, &c.env, &err) < 0) {
		error_msg("cannot record %s: %s", rt->name, err.message);
		rc = EXIT_UNREADABLE;
	} else {
		rc = run(&c, rt);
	}
	close_report_channel(&c);
	free_argv(c.argv);
	env_free(&c.env);
	return rc;
}
