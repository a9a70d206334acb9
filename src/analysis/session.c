/*
 * session.c - a dump session (session.h): inputs read more than once,
 * the dump picked and loaded, and read again for the values its labels
 * need. Every message goes through the caller's voice, so that the words
 * are those of heaptrace(1) and this file knows nothing of the CLI.
 */
#include "analysis/session.h"

#include "analysis/labels.h"
#include "analysis/relocation.h"

#include "lib/read/forms.h"
#include "lib/read/pass_log.h"
#include "util/alloc.h"
#include "util/membudget.h"

#include <errno.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

void session_budget(uint64_t max_memory, uint64_t bytes)
{
	mem_budget_set(max_memory ? max_memory
				  : mem_budget_default(bytes, mem_budget_ram()));
}

/* The budget of an input of `bytes`, by the voice's --max-memory. */
static void set_budget(const struct input *in, uint64_t bytes)
{
	session_budget(in->voice->max_memory ? *in->voice->max_memory : 0,
		       bytes);
}

/* ---- inputs read more than once ------------------------------------------ */

static bool is_stdin(const char *path)
{
	return strcmp(path, "-") == 0;
}

/* Where standard input started when first opened: rewinding to 0 would be
 * wrong for `(head -c 10 >/dev/null; heaptrace stats -) < FILE`. */
static off_t stdin_origin = -1;
static bool stdin_opened;

/*
 * Copies f to a temporary file, unlinked, that becomes standard input.
 * path names it in messages ("-" for standard input). Its first bytes are
 * looked at before anything is copied: a stream that no input form starts
 * as (/dev/zero, a random device) is refused at once with the reader's
 * own words, as `heaptrace check` refuses it, instead of
 * filling the temporary directory until the disk is full.
 */
static int spool_to_stdin(FILE *f, const char *path,
			  const struct session_voice *voice)
{
	const char *name = is_stdin(path) ? "standard input" : path;
	char buf[1 << 16];
	FILE *tmp;
	size_t n = 0, got;

	while (n < HT_SNIFF_MAX &&
	       (got = fread(buf + n, 1, HT_SNIFF_MAX - n, f)) > 0)
		n += got;
	if (n > 0 && !reader_sniff_form((const unsigned char *)buf, n)) {
		voice->error("%s: %s", path, HT_NOT_A_TRACE);
		return -1;
	}
	tmp = tmpfile();
	if (!tmp) {
		voice->error("%s: cannot make a temporary copy: %m", name);
		return -1;
	}
	if (n > 0 && fwrite(buf, 1, n, tmp) != n)
		n = 0; /* ferror(tmp) says why, below */
	else
		n = ferror(f) ? 0 : fread(buf, 1, sizeof(buf), f);
	for (; n > 0; n = fread(buf, 1, sizeof(buf), f)) {
		if (fwrite(buf, 1, n, tmp) != n)
			break;
	}
	if (ferror(f) || ferror(tmp) || fflush(tmp) != 0 ||
	    dup2(fileno(tmp), STDIN_FILENO) < 0) {
		voice->error("%s: cannot make a temporary copy: %m", name);
		fclose(tmp);
		return -1;
	}
	fclose(tmp);
	clearerr(stdin);
	if (fseeko(stdin, 0, SEEK_SET) != 0) {
		voice->error("%s: cannot read the temporary copy: %m", name);
		return -1;
	}
	return 0;
}

/* Which file the input is now, and what it holds: 0, or -1. */
static int identify(const struct input *in, struct stat *st)
{
	if (is_stdin(in->open_path))
		return fstat(STDIN_FILENO, st);
	return stat(in->open_path, st);
}

static void remember(struct input *in, const struct stat *st)
{
	in->known = true;
	in->dev = st->st_dev;
	in->ino = st->st_ino;
	in->size = st->st_size;
	in->mtime = st->st_mtim;
}

static bool same_input(const struct input *in, const struct stat *st)
{
	return in->dev == st->st_dev && in->ino == st->st_ino &&
	       in->size == st->st_size &&
	       in->mtime.tv_sec == st->st_mtim.tv_sec &&
	       in->mtime.tv_nsec == st->st_mtim.tv_nsec;
}

int session_input_prepare(struct input *in, const char *path,
			  const struct ht_reader_options *opts,
			  const struct session_voice *voice)
{
	struct stat st;
	FILE *f;
	int rc;

	memset(in, 0, sizeof(*in));
	in->name = path;
	in->open_path = path;
	in->options = opts;
	in->voice = voice;
	if (is_stdin(path)) {
		if (fstat(STDIN_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {
			remember(in, &st);
			set_budget(in, (uint64_t)st.st_size);
			return 0;
		}
		rc = spool_to_stdin(stdin, path, voice);
		if (rc == 0 && fstat(STDIN_FILENO, &st) == 0)
			set_budget(in, (uint64_t)st.st_size);
		return rc;
	}
	set_budget(in, 0);
	/* a file that is missing or a directory is reported when opened */
	if (stat(path, &st) != 0 || S_ISDIR(st.st_mode))
		return 0;
	if (S_ISREG(st.st_mode)) {
		remember(in, &st);
		set_budget(in, (uint64_t)st.st_size);
		return 0;
	}
	f = fopen(path, "rb");
	if (!f)
		return 0;
	rc = spool_to_stdin(f, path, voice);
	fclose(f);
	in->open_path = "-";
	if (rc == 0 && fstat(STDIN_FILENO, &st) == 0)
		set_budget(in, (uint64_t)st.st_size);
	return rc;
}

struct ht_reader *input_open(struct input *in)
{
	struct ht_reader *r;
	struct stat st;

	if (is_stdin(in->open_path)) {
		if (!stdin_opened) {
			stdin_origin = ftello(stdin);
			stdin_opened = true;
		} else if (stdin_origin >= 0) {
			clearerr(stdin);
			if (fseeko(stdin, stdin_origin, SEEK_SET) != 0) {
				in->voice->error("%s: cannot read it again: %m",
					  in->name);
				return NULL;
			}
		}
	}
	r = in->voice->open(in->open_path, in->options);
	/* checked once open, so that the file checked is the one read */
	if (r && in->known && (identify(in, &st) != 0 || !same_input(in, &st))) {
		ht_reader_close(r);
		in->voice->error("%s: the file changed while it was read",
				 in->name);
		return NULL;
	}
	if (r)
		reader_log_passes(r, &in->log);
	return r;
}

bool input_changed(const struct input *in)
{
	struct stat st;

	return in->log.changed ||
	       (in->known && (identify(in, &st) != 0 || !same_input(in, &st)));
}

int input_end_pass(const struct input *in)
{
	if (!input_changed(in))
		return 0;
	in->voice->error("%s: the file changed while it was read", in->name);
	return -1;
}

void input_release(struct input *in)
{
	pass_log_free(&in->log);
}

/* ---- the dump ------------------------------------------------------------ */

void session_warn_damage(const struct session_voice *voice,
			 const struct ht_error *err)
{
	voice->warning("%s; the analysis covers the events before the damage",
		    err->message);
}

void session_warn_dump_quality(const struct session_voice *voice,
			       const char *path, const struct heap *h)
{
	if (!h->complete)
		voice->warning("%s: dump %llu is incomplete: the trace ends "
			    "inside it", path, (unsigned long long)h->dump);
	if (h->aborted)
		voice->warning("%s: dump %llu was aborted by the profiler: "
			    "objects may be missing", path,
			    (unsigned long long)h->dump);
	/* HotSpot writes a dump's roots after its objects: a dump cut short
	 * has objects and no roots, which would make every object
	 * unreachable without a word of why */
	if (heap_no_roots_read(h))
		voice->warning("%s: dump %llu: no roots were read: every object "
			    "is unreachable and retains nothing", path,
			    (unsigned long long)h->dump);
}

bool reads_heap_dump(struct ht_reader *r)
{
	return strcmp(ht_reader_format(r), "hprof") == 0;
}

bool index_counts_no_gc(struct ht_reader *r)
{
	const struct ht_index_info *ix = ht_reader_index(r);

	return ix && ix->present && ix->gcs == 0;
}

struct scan {
	struct heap *heap;
	struct heap_scan_report report;
	bool damaged;
	bool values_unread;  /* loaded_dump's */
	struct ht_error err;
};

static int keep_dump(void *ctx, struct heap *h, bool *keep)
{
	struct scan *s = ctx;

	if (s->heap)
		heap_free(s->heap);
	s->heap = h;
	*keep = true;
	return 0;
}

/* One pass for one dump, the graph built with opts. 0 (damage is not a
 * failure: what came before it is used), or -1 once said why. */
static int scan_with(struct input *in, int64_t select,
		     const struct heap_scan_options *opts, struct scan *s)
{
	struct ht_reader *r = input_open(in);
	int rc;

	memset(s, 0, sizeof(*s));
	if (!r)
		return -1;
	rc = heap_scan_with(r, select, opts, keep_dump, s, &s->report,
			    &s->err);
	/* the one reader that gives values only when asked */
	s->values_unread = (s->report.values_seen && !opts->values) ||
			   (!(in->options && in->options->values) &&
			    reads_heap_dump(r));
	ht_reader_close(r);
	if (input_end_pass(in) < 0) {
		if (s->heap)
			heap_free(s->heap);
		s->heap = NULL;
		return -1;
	}
	if (rc == 0)
		return 0;
	if (rc == -1 && s->report.read_error) {
		s->damaged = true;
		return 0;
	}
	in->voice->error("%s", s->err.message);
	if (s->heap)
		heap_free(s->heap);
	s->heap = NULL;
	return -1;
}

static int scan_for(struct input *in, int64_t select, struct scan *s)
{
	/* a command that asks the reader for values shows them */
	return scan_with(in, select, &(struct heap_scan_options){
				 .values = in->options && in->options->values},
			 s);
}

/* The last dump is incomplete (the trace ends inside it): the one before
 * it, when complete, says more. Keeps s as it is otherwise; 0, or -1 once
 * said that the file changed. */
static int prefer_complete_dump(struct input *in, struct scan *s)
{
	struct scan before;

	if (!s->heap || s->heap->complete || s->heap->dump == 0)
		return 0;
	if (scan_for(in, (int64_t)s->heap->dump - 1, &before) < 0)
		return input_changed(in) ? -1 : 0;
	if (before.heap && before.heap->complete) {
		in->voice->warning("%s: dump %llu is incomplete (the trace ends inside "
			    "it): analyzing dump %llu, the last complete one",
			    in->name, (unsigned long long)s->heap->dump,
			    (unsigned long long)before.heap->dump);
		heap_free(s->heap);
		s->heap = before.heap;
	} else if (before.heap) {
		heap_free(before.heap);
	}
	return 0;
}

enum dump_load_result dump_load(const char *path,
				const struct ht_reader_options *opts,
				int64_t select, bool keep_input,
				const struct session_voice *voice,
				struct loaded_dump *ld)
{
	struct input *in = &ld->in;
	struct scan s;
	int rc;

	memset(ld, 0, sizeof(*ld));
	ld->path = path;
	if (opts)
		ld->reading = *opts;
	/* the next chunks inflate on the second core while this one builds
	 * the graph; the events, the errors and the pass log are those of a
	 * read on one thread */
	ld->reading.read_ahead = true;
	/* a pipe too must be able to fall back on the dump before the last,
	 * or the answer would depend on how the input was given */
	if (session_input_prepare(in, path, &ld->reading, voice) < 0)
		return DUMP_FAILED;
	rc = scan_for(in, select, &s);
	if (rc == 0 && s.damaged)
		session_warn_damage(voice, &s.err);
	if (rc == 0 && select == HEAP_LAST_DUMP)
		rc = prefer_complete_dump(in, &s);
	if (rc < 0) {
		input_release(in);
		if (s.heap)
			heap_free(s.heap);
		return DUMP_FAILED;
	}
	if (!s.heap) {
		input_release(in);
		ld->dumps = s.report.dumps;
		ld->damaged = s.damaged;
		return DUMP_NOT_FOUND;
	}
	session_warn_dump_quality(voice, path, s.heap);
	ld->heap = s.heap;
	ld->damaged = s.damaged;
	ld->values_unread = s.values_unread;
	ld->has_input = keep_input;
	if (!keep_input)
		input_release(in);
	return DUMP_LOADED;
}

static void release_input(struct loaded_dump *ld)
{
	if (ld->has_input)
		input_release(&ld->in);
	ld->has_input = false;
}

void dump_unload(struct loaded_dump *ld)
{
	if (ld->heap)
		heap_free(ld->heap);
	ld->heap = NULL;
	release_input(ld);
}

int dump_reload(struct loaded_dump *ld, const struct heap_scan_options *scan)
{
	const struct ht_reader_options *was = ld->in.options;
	struct ht_reader_options opts = {0};
	uint64_t dump = ld->heap->dump;
	uint32_t n_objects = ld->heap->n;
	struct scan s;
	int rc;

	if (was)
		opts = *was;
	opts.values = true;
	heap_free(ld->heap);
	ld->heap = NULL;
#ifdef __GLIBC__
	/* Freeing the first graph's big arrays raised glibc's threshold for
	 * mapping an allocation of its own; the second graph's arrays, which
	 * grow, would then come from the heap and leave holes in it as they
	 * move: on a Tomcat dump of 16.6 MB 43.6 MB at the peak, 33.1 with
	 * the threshold back at its first value (128 KiB). */
	mallopt(M_MMAP_THRESHOLD, 128 * 1024);
#endif
	ld->in.options = &opts;
	rc = scan_with(&ld->in, (int64_t)dump, scan, &s);
	ld->in.options = was;
	if (rc == 0 && (!s.heap || s.heap->n != n_objects)) {
		/* the dump the first pass read is not there any more */
		ld->in.voice->error("%s: the file changed while it was read",
				    ld->path);
		rc = -1;
	}
	if (rc < 0) {
		if (s.heap)
			heap_free(s.heap);
		release_input(ld);
		return -1;
	}
	ld->heap = s.heap;
	return 0;
}

/* ---- labels ------------------------------------------------------------ */

/* Objects as object_label_sources names them. */
struct sources {
	uint32_t *at;
	size_t n, cap;
	bool failed;
};

static void add_source(void *ctx, uint32_t object)
{
	struct sources *s = ctx;

	if (ALLOC_GROW(s->at, s->n + 1, s->cap) < 0)
		s->failed = true;
	else
		s->at[s->n++] = object;
}

static int by_index(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return (x > y) - (x < y);
}

/* The ids of the objects whose values the labels of objects[0..k) read
 * (labels.h, object_label_sources), ascending, each once: what the
 * second read keeps values for. -1 when out of memory. */
static int label_sources(const struct heap *h, const uint32_t *objects,
			 size_t k, bool own, ht_id **ids, size_t *n_ids)
{
	struct sources s = {0};
	size_t n = 0;

	for (size_t i = 0; i < k && !s.failed; i++) {
		if (own)
			add_source(&s, objects[i]);
		object_label_sources(h, objects[i], add_source, &s);
	}
	if (s.failed) {
		free(s.at);
		return -1;
	}
	if (s.n == 0) {
		*ids = NULL;
		*n_ids = 0;
		return 0;
	}
	/* objects are sorted by id: ascending indices give ascending ids */
	qsort(s.at, s.n, sizeof(*s.at), by_index);
	*ids = malloc(s.n * sizeof(**ids));
	if (!*ids) {
		free(s.at);
		return -1;
	}
	for (size_t i = 0; i < s.n; i++)
		if (i == 0 || s.at[i] != s.at[i - 1])
			(*ids)[n++] = heap_id(h, s.at[i]);
	*n_ids = n;
	free(s.at);
	return 0;
}

int dump_reload_values(struct loaded_dump *ld, const uint32_t *objects,
		       size_t n, bool own)
{
	ht_id *ids = NULL;
	size_t n_ids = 0;
	int rc;

	if (!ld->values_unread)
		return 0; /* the graph has all the values there are */
	if (label_sources(ld->heap, objects, n, own, &ids, &n_ids) < 0) {
		ld->in.voice->error("out of memory");
		return -1;
	}
	if (n_ids == 0) {
		free(ids);
		return 0; /* none of them can have a label */
	}
	rc = dump_reload(ld, &(struct heap_scan_options){
				 .values = true, .values_of = ids,
				 .n_values_of = n_ids});
	free(ids);
	return rc;
}

int session_tracked_replay_end(struct input *in, int rc,
			       const struct ht_replay_summary *summary,
			       const struct ht_error *err,
			       const struct reloc *t, bool out_of_memory,
			       bool *damaged)
{
	const struct session_voice *voice = in->voice;

	if (input_end_pass(in) < 0)
		return -1;
	if (rc > 0 && mem_budget_exceeded()) {
		voice->error("%s: %s", in->name, reloc_error(t));
		return -1;
	}
	if (rc > 0 || out_of_memory) {
		voice->error("%s", out_of_memory ? "out of memory"
						 : reloc_error(t));
		return -1;
	}
	if (rc < 0 && !summary->read_error) {
		voice->error("%s", err->message);
		return -1;
	}
	if (rc < 0 && !*damaged) {
		*damaged = true;
		session_warn_damage(voice, err);
	}
	return 0;
}
