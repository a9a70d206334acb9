/*
 * writer_open.c - opening and closing a recorder of the shim: its
 * settings, the file header, everything the callback path and the writer
 * thread use allocated up front (writer.c says why), and at close the
 * last buffers flushed, the writer joined and the first error reported;
 * also the recorder's counters (ht_recorder_stats).
 */
#include "lib/record/writer_internal.h"

/* Distinguishes recorders opened one after another in a process. */
static _Atomic uint64_t last_serial;

/* ---- open and close ------------------------------------------------------ */

struct settings {
	size_t buffer_size;
	unsigned buffers;
	unsigned threads;
	int level;
	bool times;
};

static bool settings_get(const struct ht_record_options *o,
			 struct settings *s, const char *name,
			 struct ht_error *err)
{
	static const struct ht_record_options defaults = {
		.compression_level = -1,
	};

	if (!o)
		o = &defaults;
	s->buffer_size = o->buffer_size ? o->buffer_size : DEFAULT_BUFFER_SIZE;
	if (s->buffer_size < MIN_BUFFER_SIZE)
		s->buffer_size = MIN_BUFFER_SIZE;
	s->buffers = o->buffers ? o->buffers : DEFAULT_BUFFERS;
	s->threads = o->max_threads ? o->max_threads : DEFAULT_MAX_THREADS;
	s->times = o->times;
	s->level = o->compression_level == -1 ? DEFAULT_LEVEL :
		o->compression_level;
	if (s->buffer_size > MAX_BUFFER_SIZE) {
		err_plain(err, HT_E_INVALID, name,
			  "buffer size %zu is over the limit of %u bytes",
			  s->buffer_size, MAX_BUFFER_SIZE);
		return false;
	}
	if (s->buffers > MAX_BUFFERS || s->threads > MAX_THREADS_LIMIT) {
		err_plain(err, HT_E_INVALID, name,
			  "%u buffers or %u threads: at most %u and %u",
			  s->buffers, s->threads, MAX_BUFFERS,
			  MAX_THREADS_LIMIT);
		return false;
	}
	if (s->level < 0 || s->level > 9) {
		err_plain(err, HT_E_INVALID, name,
			  "compression level %d is not in 0..9 (or -1)",
			  o->compression_level);
		return false;
	}
	if (s->buffers > SIZE_MAX / s->buffer_size) {
		err_plain(err, HT_E_INVALID, name, "buffer pool too large");
		return false;
	}
	return true;
}

static bool header_check(const struct ht_header *h, const char *name,
			 struct ht_error *err)
{
	if (!h) {
		err_plain(err, HT_E_INVALID, name, "no trace header given");
		return false;
	}
	/* an older version's events are this version's too (convert) */
	if (h->version > HT_FORMAT_VERSION) {
		err_plain(err, HT_E_INVALID, name,
			  "header version %u: this library writes version %u",
			  h->version, HT_FORMAT_VERSION);
		return false;
	}
	if (h->pointer_size != 4 && h->pointer_size != 8) {
		err_plain(err, HT_E_INVALID, name,
			  "pointer size %u is neither 4 nor 8", h->pointer_size);
		return false;
	}
	if (h->n_metadata && !h->metadata) {
		err_plain(err, HT_E_INVALID, name, "metadata missing");
		return false;
	}
	for (size_t i = 0; i < h->n_metadata; i++) {
		if (!h->metadata[i].key || !h->metadata[i].value) {
			err_plain(err, HT_E_INVALID, name,
				  "metadata entry %zu has no key or no value", i);
			return false;
		}
	}
	return true;
}

/* Frees what recorder_create got, however far it got. */
static void recorder_free(struct ht_recorder *rec)
{
	if (rec->key_created)
		pthread_key_delete(rec->key);
	if (rec->index)
		munmap(rec->index, rec->index_cap * sizeof(*rec->index));
	if (rec->z_ready)
		deflateEnd(&rec->z);
	free(rec->out);
	if (rec->pool)
		munmap(rec->pool, rec->pool_len);
	if (rec->bufs) {
		sem_destroy(&rec->free_sem);
		sem_destroy(&rec->work_sem);
	}
	free(rec->bufs);
	free(rec->slots);
	free(rec->name);
	free(rec);
}

static bool pool_create(struct ht_recorder *rec, const struct settings *s)
{
	rec->buffer_size = s->buffer_size;
	rec->n_buffers = s->buffers;
	rec->pool_len = (size_t)s->buffers * s->buffer_size;
	rec->bufs = calloc(s->buffers, sizeof(*rec->bufs));
	if (!rec->bufs)
		return false;
	if (sem_init(&rec->free_sem, 0, s->buffers) != 0 ||
	    sem_init(&rec->work_sem, 0, 0) != 0) {
		free(rec->bufs);
		rec->bufs = NULL;
		return false;
	}
	/* populated now: page faults on first touch would otherwise land on
	 * the callback path, inside GC pauses (and cost a third of a call) */
	rec->pool = mmap(NULL, rec->pool_len, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (rec->pool == MAP_FAILED) {
		rec->pool = NULL;
		return false;
	}
	atomic_init(&rec->free_head, 0);
	for (unsigned i = 0; i < s->buffers; i++) {
		rec->bufs[i].data = rec->pool + (size_t)i * s->buffer_size;
		atomic_init(&rec->bufs[i].next_free, 0);
		pool_push(rec, &rec->bufs[i]);
	}
	atomic_init(&rec->full_head, NULL);
	return true;
}

static bool slots_create(struct ht_recorder *rec, const struct settings *s)
{
	void *p;

	if (posix_memalign(&p, 64, (size_t)s->threads * sizeof(struct slot)))
		return false;
	memset(p, 0, (size_t)s->threads * sizeof(struct slot));
	rec->slots = p;
	rec->n_slots = s->threads;
	for (unsigned i = 0; i < s->threads; i++) {
		struct slot *sl = &rec->slots[i];

		atomic_init(&sl->state, SLOT_IDLE);
		atomic_init(&sl->owned, 0);
		atomic_init(&sl->buf, NULL);
		atomic_init(&sl->events, 0);
		sl->rec = rec;
	}
	return true;
}

static bool writer_state_create(struct ht_recorder *rec, int level)
{
	memset(&rec->z, 0, sizeof(rec->z));
	if (deflateInit2(&rec->z, level, Z_DEFLATED, 15, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return false;
	rec->z_ready = true;
	rec->level = level;
	rec->out_cap = HT_CHUNK_HEADER_SIZE +
		deflateBound(&rec->z, (uLong)rec->buffer_size);
	rec->out = malloc(rec->out_cap);
	if (!rec->out)
		return false;
	rec->index_cap = 4096;
	rec->index = mmap(NULL, rec->index_cap * sizeof(*rec->index),
			  PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			  -1, 0);
	if (rec->index == MAP_FAILED) {
		rec->index = NULL;
		return false;
	}
	return true;
}

/*
 * The thread-exit destructor frees a thread's slot. glibc's
 * pthread_setspecific allocates a second-level array for keys from 32 up,
 * on the callback path; with such a key the shim does without it: a thread
 * that exits then keeps its slot, and its last buffer goes out with the
 * next barrier or at close.
 */
static void key_create(struct ht_recorder *rec)
{
	if (pthread_key_create(&rec->key, writer_slot_release_at_exit) != 0)
		return;
	rec->key_created = true;
#ifdef __GLIBC__
	rec->use_key = (unsigned long)rec->key < 32;
#else
	rec->use_key = true;
#endif
}

static bool header_write(struct ht_recorder *rec, const struct ht_header *h,
			 struct ht_error *err)
{
	size_t plen, total, done;
	uint8_t *payload = codec_put_header(h, &plen), *buf;
	int e;

	if (!payload) {
		err_plain(err, HT_E_NOMEM, rec->name, "out of memory");
		return false;
	}
	if (plen > HT_MAX_HEADER_PAYLOAD) {
		free(payload);
		err_plain(err, HT_E_LIMIT, rec->name,
			  "trace header of %zu bytes is over the limit of %u",
			  plen, HT_MAX_HEADER_PAYLOAD);
		return false;
	}
	total = HT_FILE_HEADER_FIXED + plen + 4;
	buf = malloc(total);
	if (!buf) {
		free(payload);
		err_plain(err, HT_E_NOMEM, rec->name, "out of memory");
		return false;
	}
	memcpy(buf, HT_MAGIC, HT_MAGIC_LEN);
	put_le32(buf + 8, rec->version);
	put_le32(buf + 12, (uint32_t)plen);
	memcpy(buf + HT_FILE_HEADER_FIXED, payload, plen);
	put_le32(buf + HT_FILE_HEADER_FIXED + plen,
		 (uint32_t)crc32(0, buf, (uInt)(HT_FILE_HEADER_FIXED + plen)));
	e = write_all(rec->fd, buf, total, &done);
	free(buf);
	free(payload);
	if (e) {
		err_sys(err, e, rec->name, "cannot write the header");
		return false;
	}
	rec->offset = total;
	atomic_init(&rec->bytes_written, total);
	return true;
}

/* The writer runs with every signal blocked: the host's handlers are not
 * for it, and SIGXFSZ then leaves its writes failing with EFBIG. */
static int writer_start(struct ht_recorder *rec)
{
	sigset_t all, old;
	int rc;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&rec->thread, NULL, writer_main, rec);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0)
		return rc;
	rec->thread_started = true;
	pthread_setname_np(rec->thread, "heaptrace-wr");
	return 0;
}

static struct ht_recorder *recorder_create(int fd, const char *name,
					   const struct ht_header *h,
					   const struct settings *s,
					   struct ht_error *err)
{
	struct ht_recorder *rec;
	struct proto_state st;
	uint64_t word;
	int rc;
	void *p;

	/* aligned: its hot atomics sit on cache lines of their own */
	if (posix_memalign(&p, _Alignof(struct ht_recorder), sizeof(*rec))) {
		err_plain(err, HT_E_NOMEM, name, "out of memory");
		return NULL;
	}
	rec = memset(p, 0, sizeof(*rec));
	rec->fd = fd;
	rec->name = strdup(name);
	if (!rec->name || !slots_create(rec, s) || !pool_create(rec, s) ||
	    !writer_state_create(rec, s->level)) {
		err_plain(err, HT_E_NOMEM, name,
			  "out of memory for %u buffers of %zu bytes",
			  s->buffers, s->buffer_size);
		goto fail;
	}
	key_create(rec);
	if (!rec->key_created) {
		err_plain(err, HT_E_LIMIT, name,
			  "no thread-specific data key left");
		goto fail;
	}
	proto_init(&st);
	memcpy(&word, &st, sizeof(word));
	atomic_init(&rec->proto, word);
	rec->version = h->version ? h->version : HT_FORMAT_VERSION;
	rec->stamp_times = s->times && rec->version >= 3;
	rec->start_ns = monotonic_ns();
	if (!header_write(rec, h, err))
		goto fail;
	rec->serial = atomic_fetch_add(&last_serial, 1) + 1;
	if ((rc = writer_start(rec)) == EAGAIN) {
		err_plain(err, HT_E_NOMEM, name, "cannot start the writer "
			  "thread: not enough memory or threads left");
		goto fail;
	} else if (rc != 0) {
		err_sys(err, rc, name, "cannot start the writer thread");
		goto fail;
	}
	return rec;
fail:
	recorder_free(rec);
	return NULL;
}

struct ht_recorder *ht_recorder_open(const char *path,
				     const struct ht_header *header,
				     const struct ht_record_options *options,
				     struct ht_error *err)
{
	struct ht_recorder *rec;
	struct settings s;
	int fd;

	err_clear(err);
	if (!path) {
		err_plain(err, HT_E_INVALID, NULL, "no output path given");
		return NULL;
	}
	if (!header_check(header, path, err) ||
	    !settings_get(options, &s, path, err))
		return NULL;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		err_sys(err, errno, path, "cannot open for writing");
		return NULL;
	}
	rec = recorder_create(fd, path, header, &s, err);
	if (!rec)
		close(fd);
	return rec;
}

struct ht_recorder *ht_recorder_open_fd(int fd, const char *name,
					const struct ht_header *header,
					const struct ht_record_options *options,
					struct ht_error *err)
{
	struct ht_recorder *rec = NULL;
	struct settings s;

	err_clear(err);
	if (!name)
		name = "-";
	if (fd < 0)
		err_plain(err, HT_E_INVALID, name, "bad file descriptor %d", fd);
	else if (header_check(header, name, err) &&
		 settings_get(options, &s, name, err))
		rec = recorder_create(fd, name, header, &s, err);
	if (!rec && fd >= 0)
		close(fd);
	return rec;
}

/* Every thread's buffer to the writer. Threads should have stopped
 * recording; one still inside an event is waited for a while, then left. */
static void flush_slots(struct ht_recorder *rec)
{
	writer_steal_others(rec, NULL, CLOSE_PATIENCE_NS);
}

/* A dump or GC still open at close is a violation the shim saw. */
static void count_unfinished(struct ht_recorder *rec)
{
	uint64_t word = atomic_load(&rec->proto);
	struct proto_state st;
	enum ht_violation_code code;

	memcpy(&st, &word, sizeof(st));
	code = proto_finish(&st);
	if (code != HT_V_NONE && (unsigned)code < HT_V_COUNT_)
		atomic_fetch_add(&rec->violations[code], 1);
}

enum ht_error_code ht_recorder_close(struct ht_recorder *rec,
				     struct ht_error *err)
{
	enum ht_error_code code;

	err_clear(err);
	if (!rec) {
		err_plain(err, HT_E_INVALID, NULL, "no recorder to close");
		return HT_E_INVALID;
	}
	flush_slots(rec);
	count_unfinished(rec);
	atomic_store(&rec->stop, true);
	sem_post(&rec->work_sem);
	pthread_join(rec->thread, NULL);
	/* close can report a write that failed late (NFS, quota) */
	if (close(rec->fd) != 0 && !failed(rec))
		fail(rec, HT_E_IO, errno, rec->offset, "cannot close");
	code = ht_recorder_error(rec, err);
	recorder_free(rec);
	return code;
}

enum ht_error_code ht_recorder_sync(struct ht_recorder *rec)
{
	const struct timespec pause = { 0, 20 * 1000 };
	uint64_t batch;

	if (!rec)
		return HT_E_INVALID;
	/* A batch the writer numbers after this load takes every push this
	 * thread made before it (all seq_cst). */
	batch = atomic_load(&rec->batches_taken) + 1;
	sem_post(&rec->work_sem);
	while (atomic_load(&rec->batches_done) < batch)
		nanosleep(&pause, NULL);
	return (enum ht_error_code)atomic_load(&rec->failed);
}

enum ht_error_code ht_recorder_error(const struct ht_recorder *rec,
				     struct ht_error *err)
{
	struct ht_recorder *r = (struct ht_recorder *)rec;
	int code;

	err_clear(err);
	if (!r) {
		err_plain(err, HT_E_INVALID, NULL, "no recorder");
		return HT_E_INVALID;
	}
	code = atomic_load_explicit(&r->failed, memory_order_acquire);
	if (!code)
		return HT_OK;
	if (r->fail_errno)
		err_at_offset(err, (enum ht_error_code)code, r->name,
			      r->fail_offset, "%s: %s", r->fail_what,
			      strerror(r->fail_errno));
	else
		err_at_offset(err, (enum ht_error_code)code, r->name,
			      r->fail_offset, "%s", r->fail_what);
	if (err)
		err->sys_errno = r->fail_errno;
	return (enum ht_error_code)code;
}

void ht_recorder_stats(const struct ht_recorder *rec, struct ht_record_stats *st)
{
	/* the counters are atomics, read without changing anything */
	struct ht_recorder *r = (struct ht_recorder *)rec;

	if (!st)
		return;
	memset(st, 0, sizeof(*st));
	if (!r)
		return;
	for (unsigned i = 0; i < r->n_slots; i++)
		st->events += atomic_load_explicit(&r->slots[i].events,
						   memory_order_relaxed);
	st->dumps = atomic_load_explicit(&r->dumps, memory_order_relaxed);
	st->gcs = atomic_load_explicit(&r->gcs, memory_order_relaxed);
	st->chunks_written = atomic_load_explicit(&r->chunks_written,
						  memory_order_relaxed);
	st->bytes_written = atomic_load_explicit(&r->bytes_written,
						 memory_order_relaxed);
	st->bytes_uncompressed = atomic_load_explicit(&r->bytes_uncompressed,
						      memory_order_relaxed);
	st->waits = atomic_load_explicit(&r->waits, memory_order_relaxed);
	st->dropped_events = atomic_load_explicit(&r->dropped,
						  memory_order_relaxed);
	for (unsigned c = 0; c < HT_V_COUNT_; c++)
		st->violations[c] = atomic_load_explicit(&r->violations[c],
							 memory_order_relaxed);
}
