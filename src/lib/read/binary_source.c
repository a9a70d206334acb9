/*
 * binary_source.c - reading .ht files (layout in format.h): the file header,
 * the index found through the trailer when the input can seek, then the
 * events, chunk by chunk.
 *
 * A damaged or truncated file yields every event of every intact chunk
 * before the damage, then one error that says where the damage starts and,
 * when the index survived, what it cost. A file that simply stops at a chunk
 * boundary is a recording whose writer died: it reads to the end without
 * error, and its index info says present = false.
 *
 * Strings (names, the header's) that are not valid UTF-8 are repaired as
 * they come out, each ill-formed part made U+FFFD (heaptrace(5), STRINGS):
 * the writer never checked what the runtime gave it, and everything after
 * the reader may rely on valid UTF-8.
 *
 * With the read_ahead option, a second thread reads, checks and inflates
 * the next chunks while the caller decodes the current one (AHEAD_SLOTS
 * chunks at most). It loads them as the scan would, in order, and stops at
 * the first that ends the scan; what it found is acted on only when the
 * scan reaches that chunk, so the events delivered and the errors are
 * those of a scan on one thread.
 */
#include "lib/read/source.h"
#include "lib/read/pass_log.h"

#include "lib/common/codec.h"
#include "lib/common/error.h"
#include "lib/common/format.h"
#include "lib/common/varint.h"
#include "util/alloc.h"
#include "util/utf8.h"
#include "util/membudget.h"

#include <assert.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <zlib.h>

/* Deflate codes at most 258 bytes with a length and a distance code of at
 * least one bit each, so no stream inflates to more than about 1032 times
 * its size: a chunk header claiming more is damaged, and is refused before
 * its uncompressed size is allocated. */
#define ZLIB_MAX_RATIO 1032u

/* A buffer that only grows, reused from chunk to chunk. */
struct buffer {
	uint8_t *data;
	size_t cap;
};

enum scan_state {
	SCAN_CHUNKS,
	SCAN_DONE,
	SCAN_FAILED,
};

/* What reading the next chunk found. */
enum chunk_found {
	FOUND_EVENTS, /* an event chunk, inflated */
	FOUND_INDEX,  /* the index chunk, inflated */
	FOUND_END,    /* the end of the input at a chunk boundary */
	FOUND_DAMAGE, /* an error: code and cause */
};

/* A chunk read and inflated, or why it could not be. */
struct loaded_chunk {
	enum chunk_found found;
	uint64_t offset;
	struct ht_chunk_header header;
	struct buffer raw;
	enum ht_error_code code;
	char cause[256];
	bool crc_checked; /* its payload was read whole and its CRC held:
			     the pass log notes it when the scan takes it */
};

/* Chunks the read-ahead thread may hold inflated beyond the one decoded:
 * two keep it busy while the caller decodes one, and bound the memory. */
#define AHEAD_SLOTS 2

/* The read-ahead thread and the chunks it hands over, in file order. While
 * it runs it alone uses the input (f, pos, io_errno), stored and zs; the
 * scan takes its chunks from the slots and notes them in the pass log as
 * it takes them (note_chunk), on its own thread. */
struct read_ahead {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t changed;
	bool running;
	bool stop; /* the scan wants no more chunks */
	bool end_taken; /* the scan took the chunk that ended the thread */
	unsigned head, count; /* the next slot to take; slots filled */
	struct loaded_chunk slot[AHEAD_SLOTS];
	uint64_t first_event; /* where the next event chunk must start */
};

struct binary_source {
	struct ht_reader *reader; /* whose pass log it notes chunks in */
	FILE *f;
	const char *path;
	bool seekable;
	off_t start;         /* stream position of the trace's first byte */
	uint64_t pos;        /* bytes of the trace consumed so far */
	uint64_t header_end; /* offset of the first chunk */
	int io_errno;        /* set when a read failed (not at end of file) */

	struct ht_header header;
	void *header_store;
	char *header_repaired; /* the header's strings that were repaired */
	char *name;            /* an event's name, repaired */
	size_t name_cap;

	struct ht_index_info index;
	uint8_t *index_payload; /* kept: its dump and GC entries measure a loss */
	size_t index_len;
	bool index_offset_known;
	uint64_t index_offset;  /* where the trailer says the index chunk is */

	struct buffer stored;
	struct buffer raw;    /* the chunk being decoded, inflated */
	struct loaded_chunk loaded; /* what a scan on one thread reads into,
				       with the buffer of raw */
	bool want_ahead;      /* the read_ahead option */
	struct read_ahead ahead;
	z_stream zs;
	bool zs_ready;
	struct codec_dec dec;

	/* the event chunk being decoded */
	bool in_chunk;
	uint64_t chunk_offset;
	struct ht_chunk_header chunk;
	uint32_t chunk_events; /* decoded so far */

	uint64_t events;      /* delivered */
	uint64_t chunks_read; /* event chunks delivered whole */
	bool in_dump;         /* a C_BEGIN delivered, its C_END not yet */
	bool in_gc;           /* a gc_started delivered, its gc_finished not yet */
	struct ht_position last;

	enum scan_state state;
	struct ht_error failure; /* repeated by every call after a failure */
	struct ht_loss loss;
};

static const char *plural(uint64_t n, const char *one, const char *many)
{
	return n == 1 ? one : many;
}

/* ---- input ------------------------------------------------------------- */

/* Reads up to n bytes: fewer only at the end of the input or when reading
 * failed, which sets io_errno. */
static size_t read_bytes(struct binary_source *s, void *buf, size_t n)
{
	size_t got;

	if (n == 0)
		return 0;
	got = fread(buf, 1, n, s->f);
	s->pos += got;
	if (got < n && ferror(s->f))
		s->io_errno = errno ? errno : EIO;
	return got;
}

/* Reads n bytes into b, growing it only as bytes arrive: a length field
 * that claims far more than the input holds costs at most twice what is
 * really there. Sets *got; -1 when out of memory. */
static int read_growing(struct binary_source *s, struct buffer *b, size_t n,
			size_t *got)
{
	size_t have = 0;

	while (have < n) {
		size_t limit = b->cap < n ? b->cap : n;
		size_t want, got_now;

		if (have == limit) {
			size_t grown = b->cap ? b->cap * 2 : 65536;

			if (ALLOC_GROW(b->data, grown < n ? grown : n,
				       b->cap) < 0)
				return -1;
			limit = b->cap < n ? b->cap : n;
		}
		want = limit - have;
		got_now = read_bytes(s, b->data + have, want);
		have += got_now;
		if (got_now < want)
			break;
	}
	*got = have;
	return 0;
}

/* Bytes from offset to the end of the input. A pipe is read to its end to
 * count them; what it held is lost anyway. */
static uint64_t bytes_from(struct binary_source *s, uint64_t offset)
{
	uint64_t end = s->pos;

	if (s->seekable) {
		off_t at;

		if (fseeko(s->f, 0, SEEK_END) == 0 &&
		    (at = ftello(s->f)) >= s->start)
			end = (uint64_t)(at - s->start);
	} else if (!s->io_errno) {
		uint8_t sink[16384];
		size_t got;

		while ((got = fread(sink, 1, sizeof(sink), s->f)) > 0)
			end += got;
	}
	return end > offset ? end - offset : 0;
}

/* ---- the index --------------------------------------------------------- */

/* Walks the dump and GC entries at the start of an index payload. */
struct index_cursor {
	const uint8_t *p;
	const uint8_t *end;
	uint64_t left;
	unsigned kind;  /* of the entry last read */
	uint64_t event; /* its first event's index */
	uint64_t offset;
};

static int cursor_start(struct index_cursor *c, const uint8_t *buf, size_t len)
{
	c->p = buf;
	c->end = buf + len;
	c->kind = 0;
	c->event = 0;
	c->offset = 0;
	if (varint_get(&c->p, c->end, &c->left) < 0)
		return -1;
	/* each entry takes at least three bytes */
	return c->left > (uint64_t)(c->end - c->p) / 3 ? -1 : 0;
}

/* 1: an entry read, 0: no more, -1: malformed. */
static int cursor_next(struct index_cursor *c)
{
	uint64_t kind, event_delta, offset_delta;

	if (c->left == 0)
		return 0;
	if (varint_get(&c->p, c->end, &kind) < 0 ||
	    varint_get(&c->p, c->end, &event_delta) < 0 ||
	    varint_get(&c->p, c->end, &offset_delta) < 0)
		return -1;
	if (kind != HT_INDEX_DUMP && kind != HT_INDEX_GC)
		return -1;
	if (event_delta > UINT64_MAX - c->event ||
	    offset_delta > UINT64_MAX - c->offset)
		return -1;
	c->kind = (unsigned)kind;
	c->event += event_delta;
	c->offset += offset_delta;
	c->left--;
	return 1;
}

static int parse_index(const uint8_t *buf, size_t len,
		       struct ht_index_info *info, const char **why)
{
	struct index_cursor c;
	uint64_t n_violations;
	int rc;

	memset(info, 0, sizeof(*info));
	if (cursor_start(&c, buf, len) < 0) {
		*why = "bad entry count";
		return -1;
	}
	while ((rc = cursor_next(&c)) > 0)
		;
	if (rc < 0) {
		*why = "bad dump or GC entry";
		return -1;
	}
	if (varint_get(&c.p, c.end, &info->events) < 0 ||
	    varint_get(&c.p, c.end, &info->dumps) < 0 ||
	    varint_get(&c.p, c.end, &info->gcs) < 0 ||
	    varint_get(&c.p, c.end, &info->chunks) < 0 ||
	    varint_get(&c.p, c.end, &n_violations) < 0) {
		*why = "bad totals";
		return -1;
	}
	for (uint64_t i = 0; i < n_violations; i++) {
		uint64_t code, count;

		if (varint_get(&c.p, c.end, &code) < 0 ||
		    varint_get(&c.p, c.end, &count) < 0) {
			*why = "bad violation counts";
			return -1;
		}
		if (code >= 32) {
			*why = "violation code out of range";
			return -1;
		}
		info->recorder_violations[code] += count;
	}
	if (varint_get(&c.p, c.end, &info->dropped_events) < 0) {
		*why = "bad dropped event count";
		return -1;
	}
	if (c.p != c.end) {
		*why = "bytes after the index fields";
		return -1;
	}
	info->present = true;
	return 0;
}

/* Dumps and GCs not wholly delivered: those the index says begin at or
 * after the first undelivered event, and the one cut short, if any. The
 * index was checked when it was read. */
static void count_lost_groups(const struct binary_source *s, uint64_t *dumps,
			      uint64_t *gcs)
{
	struct index_cursor c;

	*dumps = s->in_dump;
	*gcs = s->in_gc;
	if (cursor_start(&c, s->index_payload, s->index_len) < 0)
		return;
	while (cursor_next(&c) > 0) {
		if (c.event < s->events)
			continue;
		if (c.kind == HT_INDEX_DUMP)
			(*dumps)++;
		else
			(*gcs)++;
	}
}

/* ---- chunks ------------------------------------------------------------ */

/* Inflates exactly out_len bytes from in; out has room for one more, which
 * catches a stream longer than announced. 0, -1 damaged (*why), -2 out of
 * memory. */
static int inflate_exact(struct binary_source *s, const uint8_t *in,
			 size_t in_len, uint8_t *out, size_t out_len,
			 const char **why)
{
	int rc;

	if (!s->zs_ready) {
		memset(&s->zs, 0, sizeof(s->zs));
		if (inflateInit(&s->zs) != Z_OK)
			return -2;
		s->zs_ready = true;
	} else if (inflateReset(&s->zs) != Z_OK) {
		return -2;
	}
	s->zs.next_in = (Bytef *)(uintptr_t)in;
	s->zs.avail_in = (uInt)in_len;
	s->zs.next_out = out;
	s->zs.avail_out = (uInt)(out_len + 1);
	rc = inflate(&s->zs, Z_FINISH);
	if (rc == Z_MEM_ERROR)
		return -2;
	if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT) {
		*why = "bad compressed data in the chunk payload";
		return -1;
	}
	if (s->zs.total_out > out_len) {
		*why = "chunk payload inflates to more than its header says";
		return -1;
	}
	if (rc != Z_STREAM_END) {
		*why = "compressed chunk payload ends early";
		return -1;
	}
	if (s->zs.total_out != out_len) {
		*why = "chunk payload inflates to less than its header says";
		return -1;
	}
	if (s->zs.avail_in != 0) {
		*why = "bytes after the compressed stream in the chunk payload";
		return -1;
	}
	return 0;
}

/* Notes chunk c, its CRC checked, in the reader's pass log (pass_log.h)
 * as the scan takes it, on the scan's thread: the log and the budget it
 * is charged to then see the chunks when and as a read on one thread
 * does, whatever was read ahead. A later pass that finds another chunk
 * than the first pass did makes c damage, which outranks what inflating
 * it found: a chunk rewritten may not inflate. */
static void note_chunk(struct binary_source *s, struct loaded_chunk *c)
{
	int rc;

	if (!s->reader->pass_log || !c->crc_checked)
		return;
	rc = pass_log_note(s->reader->pass_log, c->offset,
			   c->header.stored_length, c->header.payload_crc);
	if (rc == 0)
		return;
	c->found = FOUND_DAMAGE;
	if (rc > 0) {
		c->code = HT_E_IO;
		snprintf(c->cause, sizeof(c->cause),
			 "the file changed while it was read");
	} else if (mem_budget_exceeded()) {
		c->code = HT_E_NOMEM;
		snprintf(c->cause, sizeof(c->cause), MEM_BUDGET_MESSAGE,
			 mem_budget_limit());
	} else {
		c->code = HT_E_NOMEM;
		snprintf(c->cause, sizeof(c->cause), "out of memory");
	}
}

/* Reads the stored payload of h from the current position, checks its
 * CRC (*crc_checked once it held) and inflates it into raw. Returns HT_OK,
 * or the error code with the cause written to cause[]. */
static enum ht_error_code load_payload(struct binary_source *s,
				       const struct ht_chunk_header *h,
				       struct buffer *raw, bool *crc_checked,
				       char *cause, size_t cause_size)
{
	const char *why;
	size_t got;
	int rc;

	if (h->raw_length > (uint64_t)h->stored_length * ZLIB_MAX_RATIO +
				    ZLIB_MAX_RATIO) {
		snprintf(cause, cause_size,
			 "chunk header claims %u bytes inflated from %u, more "
			 "than zlib can produce",
			 h->raw_length, h->stored_length);
		return HT_E_CORRUPT;
	}
	if (read_growing(s, &s->stored, h->stored_length, &got) < 0)
		goto nomem;
	if (s->io_errno) {
		snprintf(cause, cause_size, "cannot read: %s",
			 strerror(s->io_errno));
		return HT_E_IO;
	}
	if (got < h->stored_length) {
		snprintf(cause, cause_size,
			 "file ends inside a chunk payload (%zu of %u bytes)",
			 got, h->stored_length);
		return HT_E_TRUNCATED;
	}
	if ((uint32_t)crc32(0, s->stored.data, h->stored_length) !=
	    h->payload_crc) {
		snprintf(cause, cause_size, "chunk payload CRC mismatch");
		return HT_E_CORRUPT;
	}
	*crc_checked = true;
	if (ALLOC_GROW(raw->data, (size_t)h->raw_length + 1, raw->cap) < 0)
		goto nomem;
	rc = inflate_exact(s, s->stored.data, h->stored_length, raw->data,
			   h->raw_length, &why);
	if (rc == -2)
		goto nomem;
	if (rc < 0) {
		snprintf(cause, cause_size, "%s", why);
		return HT_E_CORRUPT;
	}
	return HT_OK;
nomem:
	snprintf(cause, cause_size, "out of memory for a chunk of %u bytes",
		 h->raw_length);
	return HT_E_NOMEM;
}

/* Reads the chunk at the current position, which must start at event
 * first_event, into c: checked, its payload inflated, or why not. */
static void load_chunk(struct binary_source *s, uint64_t first_event,
		       struct loaded_chunk *c)
{
	uint8_t raw_header[HT_CHUNK_HEADER_SIZE];
	struct ht_chunk_header *h = &c->header;
	const char *why;
	size_t got;

	c->found = FOUND_DAMAGE;
	c->crc_checked = false;
	c->offset = s->pos;
	memset(h, 0, sizeof(*h));
	got = read_bytes(s, raw_header, sizeof(raw_header));
	if (s->io_errno) {
		c->code = HT_E_IO;
		snprintf(c->cause, sizeof(c->cause), "cannot read: %s",
			 strerror(s->io_errno));
		return;
	}
	if (got == 0) {
		c->found = FOUND_END;
		return;
	}
	c->code = HT_E_CORRUPT;
	if (got < sizeof(raw_header)) {
		c->code = HT_E_TRUNCATED;
		snprintf(c->cause, sizeof(c->cause),
			 "file ends inside a chunk header (%zu of %u bytes)",
			 got, HT_CHUNK_HEADER_SIZE);
		return;
	}
	if (chunk_header_get(raw_header, h, &why) < 0) {
		snprintf(c->cause, sizeof(c->cause), "%s", why);
		return;
	}
	/* the index chunk's first event is the total: where another event
	 * chunk would have started */
	if (h->first_event != first_event) {
		snprintf(c->cause, sizeof(c->cause),
			 "chunk starts at event %llu, expected %llu (a chunk "
			 "is missing or out of place)",
			 (unsigned long long)h->first_event,
			 (unsigned long long)first_event);
		return;
	}
	if (h->kind == HT_CHUNK_INDEX && h->events != 0) {
		snprintf(c->cause, sizeof(c->cause),
			 "index chunk claims %u events", h->events);
		return;
	}
	c->code = load_payload(s, h, &c->raw, &c->crc_checked, c->cause,
				 sizeof(c->cause));
	if (c->code != HT_OK)
		return;
	c->found = h->kind == HT_CHUNK_INDEX ? FOUND_INDEX : FOUND_EVENTS;
}

/* ---- reading ahead ----------------------------------------------------- */

/* The read-ahead thread: loads chunks into free slots, in order, until one
 * ends the scan or the scan stops it. */
static void *ahead_work(void *self)
{
	struct binary_source *s = self;
	struct read_ahead *a = &s->ahead;

	for (;;) {
		struct loaded_chunk *c;
		enum chunk_found found;

		pthread_mutex_lock(&a->lock);
		while (a->count == AHEAD_SLOTS && !a->stop)
			pthread_cond_wait(&a->changed, &a->lock);
		if (a->stop) {
			pthread_mutex_unlock(&a->lock);
			return NULL;
		}
		c = &a->slot[(a->head + a->count) % AHEAD_SLOTS];
		pthread_mutex_unlock(&a->lock);

		load_chunk(s, a->first_event, c);
		found = c->found;
		if (found == FOUND_EVENTS)
			a->first_event += c->header.events;

		pthread_mutex_lock(&a->lock);
		a->count++;
		pthread_cond_signal(&a->changed);
		pthread_mutex_unlock(&a->lock);
		if (found != FOUND_EVENTS)
			return NULL;
	}
}

/* Starts a thread with every signal blocked: the caller's handlers run on
 * the caller's threads, never on the library's. */
static int start_quiet_thread(pthread_t *thread, void *(*run)(void *),
			      void *arg)
{
	sigset_t all, was;
	int rc;

	sigfillset(&all);
	if (pthread_sigmask(SIG_SETMASK, &all, &was) != 0)
		return -1;
	rc = pthread_create(thread, NULL, run, arg);
	pthread_sigmask(SIG_SETMASK, &was, NULL);
	return rc;
}

/* Starts the thread when the option asks for it; a thread that cannot be
 * had leaves the scan on one thread, which reads the same. */
static void ahead_start(struct binary_source *s)
{
	struct read_ahead *a = &s->ahead;

	s->want_ahead = false; /* once */
	if (pthread_mutex_init(&a->lock, NULL) != 0)
		return;
	if (pthread_cond_init(&a->changed, NULL) != 0) {
		pthread_mutex_destroy(&a->lock);
		return;
	}
	a->first_event = s->events;
	if (start_quiet_thread(&a->thread, ahead_work, s) != 0) {
		pthread_cond_destroy(&a->changed);
		pthread_mutex_destroy(&a->lock);
		return;
	}
	a->running = true;
}

/* The next chunk in file order, waiting for the thread to load it. The
 * thread always ends with a chunk that ends the scan, so one comes. */
static struct loaded_chunk *ahead_take(struct binary_source *s)
{
	struct read_ahead *a = &s->ahead;
	struct loaded_chunk *c;

	pthread_mutex_lock(&a->lock);
	while (a->count == 0)
		pthread_cond_wait(&a->changed, &a->lock);
	c = &a->slot[a->head];
	pthread_mutex_unlock(&a->lock);
	return c;
}

/* Frees the slot of c, taken by ahead_take, for the thread to refill. */
static void ahead_give_back(struct binary_source *s, struct loaded_chunk *c)
{
	struct read_ahead *a = &s->ahead;

	(void)c; /* only the assert reads it, and NDEBUG drops that */
	if (!a->running)
		return; /* stopped while c was used: nothing to refill */
	pthread_mutex_lock(&a->lock);
	assert(c == &a->slot[a->head]);
	a->head = (a->head + 1) % AHEAD_SLOTS;
	a->count--;
	pthread_cond_signal(&a->changed);
	pthread_mutex_unlock(&a->lock);
}

/* Stops and joins the thread, so that the input is the scan's again. The
 * chunks it read beyond the one in use are dropped: a scan on one thread
 * would not have read them, nor met a read error in them. */
static void ahead_stop(struct binary_source *s)
{
	struct read_ahead *a = &s->ahead;

	if (!a->running)
		return;
	pthread_mutex_lock(&a->lock);
	a->stop = true;
	pthread_cond_signal(&a->changed);
	pthread_mutex_unlock(&a->lock);
	pthread_join(a->thread, NULL);
	pthread_cond_destroy(&a->changed);
	pthread_mutex_destroy(&a->lock);
	a->running = false;
	if (!a->end_taken)
		s->io_errno = 0;
}

/* ---- failing ----------------------------------------------------------- */

static void note_loss(struct binary_source *s, uint64_t offset)
{
	struct ht_loss *l = &s->loss;

	memset(l, 0, sizeof(*l));
	l->lost = true;
	l->offset = offset;
	l->bytes_lost = bytes_from(s, offset);
	l->chunks_read = s->chunks_read;
	if (!s->index.present)
		return;
	l->events_known = true;
	l->events_lost = s->index.events > s->events ?
			 s->index.events - s->events : 0;
	count_lost_groups(s, &l->dumps_lost, &l->gcs_lost);
}

static void describe_loss(const struct ht_loss *l, char *out, size_t size)
{
	int n = snprintf(out, size, "%llu %s from here to the end not read",
			 (unsigned long long)l->bytes_lost,
			 plural(l->bytes_lost, "byte", "bytes"));

	if (n < 0 || (size_t)n >= size)
		return;
	if (!l->events_known) {
		snprintf(out + n, size - (size_t)n,
			 " (the index was not available to say what they held)");
		return;
	}
	if (l->dumps_lost == 0 && l->gcs_lost == 0 && l->events_lost == 0) {
		snprintf(out + n, size - (size_t)n,
			 " (no events lost, per the index)");
		return;
	}
	snprintf(out + n, size - (size_t)n,
		 " (%llu %s, %llu %s and %llu %s lost, per the index)",
		 (unsigned long long)l->dumps_lost,
		 plural(l->dumps_lost, "dump", "dumps"),
		 (unsigned long long)l->gcs_lost,
		 plural(l->gcs_lost, "GC", "GCs"),
		 (unsigned long long)l->events_lost,
		 plural(l->events_lost, "event", "events"));
}

/* Stops reading for good: fills the loss, and an error naming the offset
 * where the damage starts, its cause and its cost. Returns -1. */
static int fail(struct binary_source *s, struct ht_error *err,
		enum ht_error_code code, uint64_t offset, const char *fmt, ...)
	HT_PRINTF(5, 6);

static int fail(struct binary_source *s, struct ht_error *err,
		enum ht_error_code code, uint64_t offset, const char *fmt, ...)
{
	char cause[256], cost[200];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cause, sizeof(cause), fmt, ap);
	va_end(ap);
	/* the loss is measured on the input, which the thread reads */
	ahead_stop(s);
	note_loss(s, offset);
	/* a truncation is where a killed writer stopped, nothing after it */
	s->loss.torn_tail = code == HT_E_TRUNCATED && !s->index.present;
	describe_loss(&s->loss, cost, sizeof(cost));
	err_at_offset(&s->failure, code, s->path, offset, "%s; %s", cause,
		      cost);
	if (code == HT_E_IO)
		s->failure.sys_errno = s->io_errno;
	s->state = SCAN_FAILED;
	s->in_chunk = false;
	if (err)
		*err = s->failure;
	return -1;
}

/* ---- scanning ---------------------------------------------------------- */

static bool trailer_points_at(const uint8_t *t, uint64_t *index_offset)
{
	if (memcmp(t + 12, HT_TRAILER_MAGIC, 4) != 0 ||
	    get_le32(t + 8) != (uint32_t)crc32(0, t, 8))
		return false;
	*index_offset = get_le64(t);
	return true;
}

/* After the index chunk only the trailer may follow, pointing back at it.
 * A file that stops right after the index lost its writer while closing:
 * nothing is missing. */
static int read_trailer(struct binary_source *s, uint64_t index_offset,
			struct ht_error *err)
{
	uint8_t t[HT_TRAILER_SIZE + 1];
	uint64_t at = s->pos, points_at;
	size_t got = read_bytes(s, t, sizeof(t));

	if (s->io_errno)
		return fail(s, err, HT_E_IO, at, "cannot read: %s",
			    strerror(s->io_errno));
	if (got == 0) {
		s->state = SCAN_DONE;
		return 0;
	}
	if (got < HT_TRAILER_SIZE)
		return fail(s, err, HT_E_TRUNCATED, at,
			    "file ends inside the trailer (%zu of %u bytes)",
			    got, HT_TRAILER_SIZE);
	if (!trailer_points_at(t, &points_at) || points_at != index_offset)
		return fail(s, err, HT_E_CORRUPT, at,
			    "bad trailer after the index chunk");
	if (got > HT_TRAILER_SIZE)
		return fail(s, err, HT_E_CORRUPT, at + HT_TRAILER_SIZE,
			    "bytes after the trailer");
	s->state = SCAN_DONE;
	return 0;
}

/* The index chunk ends the events: it must agree with what was read. A
 * pipe learns the index only here. */
static int end_at_index(struct binary_source *s, struct ht_error *err)
{
	struct ht_index_info info;
	const char *why;

	if (s->index_offset_known && s->chunk_offset != s->index_offset)
		return fail(s, err, HT_E_CORRUPT, s->chunk_offset,
			    "index chunk where the trailer does not point");
	if (parse_index(s->raw.data, s->chunk.raw_length, &info, &why) < 0)
		return fail(s, err, HT_E_CORRUPT, s->chunk_offset,
			    "bad index chunk: %s", why);
	if (info.events != s->events || info.chunks != s->chunks_read)
		return fail(s, err, HT_E_CORRUPT, s->chunk_offset,
			    "the index counts %llu events in %llu chunks, the "
			    "file holds %llu in %llu",
			    (unsigned long long)info.events,
			    (unsigned long long)info.chunks,
			    (unsigned long long)s->events,
			    (unsigned long long)s->chunks_read);
	if (!s->index.present) {
		s->index = info;
		free(s->index_payload);
		s->index_payload = s->raw.data;
		s->index_len = s->chunk.raw_length;
		s->raw.data = NULL;
		s->raw.cap = 0;
	}
	return read_trailer(s, s->chunk_offset, err);
}

/* Takes chunk c as the scan's: an event chunk becomes the chunk being
 * decoded; the index chunk or the end of the file ends the scan. Its
 * inflated payload trades places with the last chunk's buffer. */
static int use_chunk(struct binary_source *s, struct loaded_chunk *c,
		     struct ht_error *err)
{
	struct buffer last = s->raw;

	s->chunk_offset = c->offset;
	s->chunk = c->header;
	s->raw = c->raw;
	c->raw = last;
	switch (c->found) {
	case FOUND_END:
		/* the writer died between two chunks: nothing is damaged */
		s->state = SCAN_DONE;
		return 0;
	case FOUND_DAMAGE:
		return fail(s, err, c->code, c->offset, "%s", c->cause);
	case FOUND_INDEX:
		return end_at_index(s, err);
	case FOUND_EVENTS:
		break;
	}
	codec_dec_reset(&s->dec, s->raw.data, s->chunk.raw_length);
	s->chunk_events = 0;
	s->in_chunk = true;
	return 0;
}

static int start_chunk(struct binary_source *s, struct ht_error *err)
{
	struct loaded_chunk *c;
	int rc;

	if (s->ahead.running) {
		c = ahead_take(s);
		/* the last the thread loaded, before the pass log may make
		 * an event chunk damage (what the thread met beyond that one
		 * is dropped) */
		s->ahead.end_taken = c->found != FOUND_EVENTS;
		note_chunk(s, c);
		if (c->found != FOUND_EVENTS) {
			/* the input is the scan's again */
			ahead_stop(s);
			return use_chunk(s, c, err);
		}
		rc = use_chunk(s, c, err);
		ahead_give_back(s, c);
		return rc;
	}
	/* on one thread the last chunk's buffer is done with: reused */
	c = &s->loaded;
	c->raw = s->raw;
	s->raw = (struct buffer){0};
	load_chunk(s, s->events, c);
	note_chunk(s, c);
	return use_chunk(s, c, err);
}

/* What a loss cuts short is counted in dumps and GCs. */
static void track_groups(struct binary_source *s, const struct ht_event *ev)
{
	switch (ev->type) {
	case HT_EV_BEGIN_CONTAINER:
		if (ev->u.begin_container.type == HT_C_BEGIN)
			s->in_dump = true;
		else if (ev->u.begin_container.type == HT_C_END)
			s->in_dump = false;
		break;
	case HT_EV_GC_STARTED:
		s->in_gc = true;
		break;
	case HT_EV_GC_FINISHED:
		s->in_gc = false;
		break;
	default:
		break;
	}
}

/* The name of a class, thread or method event made valid UTF-8; -1 when
 * out of memory. */
static int repair_event_name(struct binary_source *s, struct ht_event *ev)
{
	const char **name;
	size_t n;

	switch (ev->type) {
	case HT_EV_CLASS:
		name = &ev->u.class_.name;
		break;
	case HT_EV_THREAD:
		name = &ev->u.thread.name;
		break;
	case HT_EV_METHOD:
		name = &ev->u.method.name;
		break;
	default:
		return 0;
	}
	if (!*name)
		return 0;
	n = strlen(*name);
	if (utf8_valid(*name, n))
		return 0;
	if (ALLOC_GROW(s->name, UTF8_REPAIR_BOUND(n) + 1, s->name_cap) < 0)
		return -1;
	s->name[utf8_repair(s->name, *name, n)] = '\0';
	*name = s->name;
	return 0;
}

/* 1: an event of the current chunk; 0: the chunk is done; -1: failed. */
static int next_in_chunk(struct binary_source *s, struct ht_event *ev,
			 struct ht_error *err)
{
	size_t at = (size_t)(s->dec.p - s->dec.start);
	const char *why = "undecodable event";
	int rc = codec_get_event(&s->dec, ev, &why);

	if (rc == 0) {
		if (s->chunk_events != s->chunk.events)
			return fail(s, err, HT_E_CORRUPT, s->chunk_offset,
				    "chunk holds %u events, its header says %u",
				    s->chunk_events, s->chunk.events);
		s->in_chunk = false;
		s->chunks_read++;
		return 0;
	}
	if (rc == -2 && mem_budget_exceeded())
		return fail(s, err, HT_E_NOMEM, s->chunk_offset,
			    "event %u of the chunk " MEM_BUDGET_MESSAGE,
			    s->chunk_events, mem_budget_limit());
	if (rc == -2)
		return fail(s, err, HT_E_NOMEM, s->chunk_offset,
			    "out of memory decoding event %u of the chunk",
			    s->chunk_events);
	/*
	 * The payload passed its CRC, so the events of this chunk before the
	 * bad one are what the writer wrote, and they have been delivered;
	 * only the rest of the chunk and what follows are lost.
	 */
	if (rc < 0)
		return fail(s, err, HT_E_CORRUPT, s->chunk_offset,
			    "undecodable event %u of the chunk, at byte %zu of "
			    "its payload: %s",
			    s->chunk_events, at, why);
	if (s->chunk_events == s->chunk.events)
		return fail(s, err, HT_E_CORRUPT, s->chunk_offset,
			    "chunk holds more events than the %u its header "
			    "says",
			    s->chunk.events);
	s->last.event_index = s->events;
	s->last.offset = s->chunk_offset;
	s->last.chunk_offset = at;
	s->chunk_events++;
	s->events++;
	track_groups(s, ev);
	if (repair_event_name(s, ev) < 0)
		return fail(s, err, HT_E_NOMEM, s->chunk_offset,
			    "out of memory decoding event %u of the chunk",
			    s->chunk_events - 1);
	return 1;
}

static int binary_next(void *self, struct ht_event *ev, struct ht_error *err)
{
	struct binary_source *s = self;

	for (;;) {
		if (s->state == SCAN_DONE)
			return 0;
		if (s->state == SCAN_FAILED) {
			if (err)
				*err = s->failure;
			return -1;
		}
		if (s->want_ahead)
			ahead_start(s);
		if (s->in_chunk) {
			int rc = next_in_chunk(s, ev, err);

			if (rc != 0)
				return rc;
		} else if (start_chunk(s, err) < 0) {
			return -1;
		}
	}
}

/* ---- opening ----------------------------------------------------------- */

static int refuse_magic(struct binary_source *s, const uint8_t *fixed,
			size_t got, struct ht_error *err)
{
	/* LF -> CR LF conversion turns the magic's last byte into "\r\n" */
	if (got >= HT_MAGIC_LEN && memcmp(fixed, "\x89HTRACE\r", 8) == 0)
		err_at_offset(err, HT_E_FORMAT, s->path, 0,
			      "a trace mangled by newline conversion (CR LF); "
			      "copy it in binary mode");
	else
		err_at_offset(err, HT_E_FORMAT, s->path, 0,
			      "not a heaptrace file (bad magic)");
	return -1;
}


/* The header's strings, made valid UTF-8: those that are not are copied,
 * repaired, into one block. -1 when out of memory. */
static int repair_header_strings(struct binary_source *s)
{
	struct ht_header *h = &s->header;
	/* the metadata array lives in header_store, which the codec owns */
	struct ht_metadata *meta = (struct ht_metadata *)h->metadata;
	size_t n_fields = 3 + 2 * h->n_metadata, need = 0, at = 0;
	const char **fields[3] = {&h->runtime, &h->runtime_version,
				  &h->command_line};

	for (size_t i = 0; i < n_fields; i++) {
		const char *v = i < 3 ? *fields[i]
				      : (i - 3) % 2 ? meta[(i - 3) / 2].value
						    : meta[(i - 3) / 2].key;

		if (v && !utf8_valid(v, strlen(v)))
			need += UTF8_REPAIR_BOUND(strlen(v)) + 1;
	}
	if (!need)
		return 0;
	s->header_repaired = malloc(need);
	if (!s->header_repaired)
		return -1;
	for (size_t i = 0; i < n_fields; i++) {
		const char **v = i < 3 ? fields[i]
				       : (i - 3) % 2 ? &meta[(i - 3) / 2].value
						     : &meta[(i - 3) / 2].key;
		char *out = s->header_repaired + at;
		size_t n;

		if (!*v || utf8_valid(*v, strlen(*v)))
			continue;
		n = utf8_repair(out, *v, strlen(*v));
		out[n] = '\0';
		at += n + 1;
		*v = out;
	}
	return 0;
}

static int read_file_header(struct binary_source *s, struct ht_error *err)
{
	uint8_t fixed[HT_FILE_HEADER_FIXED];
	uint32_t version, len;
	size_t got;
	const char *why;
	int rc;

	got = read_bytes(s, fixed, sizeof(fixed));
	if (s->io_errno) {
		err_sys(err, s->io_errno, s->path, "cannot read");
		return -1;
	}
	if (memcmp(fixed, HT_MAGIC, got < HT_MAGIC_LEN ? got : HT_MAGIC_LEN))
		return refuse_magic(s, fixed, got, err);
	if (got < sizeof(fixed)) {
		err_at_offset(err, HT_E_TRUNCATED, s->path, 0,
			      "file ends inside the file header (%zu bytes)",
			      got);
		return -1;
	}
	version = get_le32(fixed + 8);
	/* versions 1 and 2 are version 3 without fields or times: their
	 * events decode alike */
	if (version < 1 || version > HT_FORMAT_VERSION) {
		err_at_offset(err, HT_E_FORMAT, s->path, 8,
			      "unsupported format version %u (this reader "
			      "knows versions 1 to %d)",
			      version, HT_FORMAT_VERSION);
		return -1;
	}
	len = get_le32(fixed + 12);
	if (len > HT_MAX_HEADER_PAYLOAD) {
		err_at_offset(err, HT_E_CORRUPT, s->path, 12,
			      "file header payload of %u bytes is over the "
			      "%u MiB limit",
			      len, HT_MAX_HEADER_PAYLOAD >> 20);
		return -1;
	}
	if (read_growing(s, &s->stored, (size_t)len + 4, &got) < 0) {
		err_plain(err, HT_E_NOMEM, s->path, "out of memory");
		return -1;
	}
	if (s->io_errno) {
		err_sys(err, s->io_errno, s->path, "cannot read");
		return -1;
	}
	if (got < (size_t)len + 4) {
		err_at_offset(err, HT_E_TRUNCATED, s->path, 0,
			      "file ends inside the file header (%zu of %zu "
			      "bytes)",
			      sizeof(fixed) + got, sizeof(fixed) + len + 4);
		return -1;
	}
	if (get_le32(s->stored.data + len) !=
	    (uint32_t)crc32(crc32(0, fixed, sizeof(fixed)), s->stored.data,
			    len)) {
		err_at_offset(err, HT_E_CORRUPT, s->path, sizeof(fixed) + len,
			      "file header CRC mismatch");
		return -1;
	}
	rc = codec_get_header(s->stored.data, len, &s->header,
			      &s->header_store, &why);
	if (rc < 0) {
		if (rc == -2)
			err_plain(err, HT_E_NOMEM, s->path, "out of memory");
		else
			err_at_offset(err, HT_E_CORRUPT, s->path,
				      sizeof(fixed), "bad file header: %s",
				      why);
		return -1;
	}
	s->header.version = version;
	if (repair_header_strings(s) < 0) {
		err_plain(err, HT_E_NOMEM, s->path, "out of memory");
		return -1;
	}
	s->header_end = sizeof(fixed) + (uint64_t)len + 4;
	return 0;
}

static bool read_at(struct binary_source *s, uint64_t offset, void *buf,
		    size_t n)
{
	if (fseeko(s->f, s->start + (off_t)offset, SEEK_SET) != 0)
		return false;
	s->pos = offset;
	return read_bytes(s, buf, n) == n;
}

/* Reads the index through the trailer into s->index. Any problem only
 * leaves the index absent: the scan meets the damage where it lies. */
static void try_index(struct binary_source *s, uint64_t size)
{
	uint8_t t[HT_TRAILER_SIZE], raw_header[HT_CHUNK_HEADER_SIZE];
	struct ht_chunk_header h;
	struct ht_index_info info;
	uint64_t offset;
	const char *why;
	char cause[200];
	bool index_checked = false;

	if (size < s->header_end + HT_CHUNK_HEADER_SIZE + HT_TRAILER_SIZE)
		return;
	if (!read_at(s, size - HT_TRAILER_SIZE, t, sizeof(t)) ||
	    !trailer_points_at(t, &offset))
		return;
	if (offset < s->header_end ||
	    offset > size - HT_TRAILER_SIZE - HT_CHUNK_HEADER_SIZE)
		return;
	if (!read_at(s, offset, raw_header, sizeof(raw_header)) ||
	    chunk_header_get(raw_header, &h, &why) < 0 ||
	    h.kind != HT_CHUNK_INDEX ||
	    offset + HT_CHUNK_HEADER_SIZE + h.stored_length !=
		    size - HT_TRAILER_SIZE)
		return;
	if (load_payload(s, &h, &s->raw, &index_checked, cause,
			 sizeof(cause)) != HT_OK ||
	    parse_index(s->raw.data, h.raw_length, &info, &why) < 0)
		return;
	s->index = info;
	s->index_payload = s->raw.data;
	s->index_len = h.raw_length;
	s->raw.data = NULL;
	s->raw.cap = 0;
	s->index_offset_known = true;
	s->index_offset = offset;
}

/* A seekable input has its index read now, then goes back to the first
 * chunk. A pipe cannot seek: it learns the index when the scan reaches it. */
static int read_index_if_seekable(struct binary_source *s,
				  struct ht_error *err)
{
	off_t end;

	if (s->start < 0 || fseeko(s->f, 0, SEEK_END) != 0 ||
	    (end = ftello(s->f)) < s->start)
		return 0;
	s->seekable = true;
	try_index(s, (uint64_t)(end - s->start));
	clearerr(s->f);
	s->io_errno = 0;
	if (fseeko(s->f, s->start + (off_t)s->header_end, SEEK_SET) != 0) {
		err_sys(err, errno, s->path, "cannot seek");
		return -1;
	}
	s->pos = s->header_end;
	return 0;
}

static struct ht_position binary_position(const void *self)
{
	const struct binary_source *s = self;

	return s->last;
}

static const struct ht_loss *binary_loss(const void *self)
{
	const struct binary_source *s = self;

	return &s->loss;
}

static const struct ht_index_info *binary_index(const void *self)
{
	const struct binary_source *s = self;

	return &s->index;
}

static void binary_close(void *self)
{
	struct binary_source *s = self;

	if (!s)
		return;
	ahead_stop(s);
	for (unsigned i = 0; i < AHEAD_SLOTS; i++)
		free(s->ahead.slot[i].raw.data);
	free(s->loaded.raw.data);
	if (s->zs_ready)
		inflateEnd(&s->zs);
	codec_dec_free(&s->dec);
	free(s->stored.data);
	free(s->raw.data);
	free(s->index_payload);
	free(s->header_store);
	free(s->header_repaired);
	free(s->name);
	/* standard input stays open for whoever reads it next */
	if (s->f && s->f != stdin)
		fclose(s->f);
	free(s);
}

static const struct ht_source_ops binary_ops = {
	.format = "ht",
	.next = binary_next,
	.position = binary_position,
	.loss = binary_loss,
	.index = binary_index,
	.close = binary_close,
};

int binary_source_open(struct ht_reader *r, FILE *f, const char *path,
		       struct ht_error *err)
{
	struct binary_source *s = calloc(1, sizeof(*s));

	if (!s) {
		if (f != stdin)
			fclose(f);
		err_plain(err, HT_E_NOMEM, path, "out of memory");
		return -1;
	}
	s->reader = r;
	s->want_ahead = r->options.read_ahead;
	s->f = f;
	s->path = path;
	codec_dec_init(&s->dec);
	s->dec.charge = mem_budget_charge;
	s->dec.release = mem_budget_release;
	/* ftello counts a byte the front pushed back with ungetc */
	s->start = ftello(f);
	if (read_file_header(s, err) < 0 || read_index_if_seekable(s, err) < 0) {
		binary_close(s);
		return -1;
	}
	r->ops = &binary_ops;
	r->self = s;
	r->header = &s->header;
	return 0;
}
