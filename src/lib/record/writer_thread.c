/*
 * writer_thread.c - the shim's writer thread: it takes the full buffers
 * off the stack the recording threads push them on, compresses each into
 * one chunk (format.h), writes it, and gives the buffer back; at close it
 * writes the index of dumps and GCs and the trailer.
 *
 * It allocates nothing in steady state (writer.c says why): the index
 * grows with mremap, and only the index payload at close is malloc'd,
 * once the producers have stopped.
 */
#include "lib/record/writer_internal.h"

static void sem_wait_nointr(sem_t *s)
{
	while (sem_wait(s) != 0 && errno == EINTR)
		;
}

/* ---- the writer thread --------------------------------------------------- */

/* Deflates in into out; the stored length, 0 on failure (a finished zlib
 * stream is never empty). deflateReset keeps the state allocated at open. */
static size_t compress_payload(struct ht_recorder *rec, const uint8_t *in,
			       size_t len, uint8_t *out, size_t cap)
{
	z_stream *z = &rec->z;

	if (deflateReset(z) != Z_OK)
		return 0;
	z->next_in = in;
	z->avail_in = (uInt)len;
	z->next_out = out;
	z->avail_out = (uInt)cap;
	if (deflate(z, Z_FINISH) != Z_STREAM_END)
		return 0;
	return (size_t)z->total_out;
}

/*
 * Writes one chunk at rec->offset. A write error (ENOSPC, EBADF, EIO, ...)
 * stops the recording. A file-size limit (RLIMIT_FSIZE) gives EFBIG only
 * where SIGXFSZ is ignored or blocked; elsewhere the kernel's default
 * action kills the process. The writer thread runs with every signal
 * blocked, so the writes it makes see EFBIG; the host's dispositions are
 * left alone.
 */
static bool write_chunk(struct ht_recorder *rec, uint8_t kind,
			const uint8_t *raw, size_t raw_len, uint32_t events,
			uint8_t *out, size_t out_cap)
{
	struct ht_chunk_header h = { 0 };
	size_t stored, done;
	int e;

	stored = compress_payload(rec, raw, raw_len, out + HT_CHUNK_HEADER_SIZE,
				  out_cap - HT_CHUNK_HEADER_SIZE);
	if (stored == 0) {
		fail(rec, HT_E_IO, 0, rec->offset, "cannot compress a chunk");
		return false;
	}
	h.kind = kind;
	h.compression = HT_COMPRESS_ZLIB;
	h.stored_length = (uint32_t)stored;
	h.raw_length = (uint32_t)raw_len;
	h.first_event = rec->next_event;
	h.events = events;
	h.payload_crc = (uint32_t)crc32(0, out + HT_CHUNK_HEADER_SIZE,
					(uInt)stored);
	chunk_header_put(out, &h);
	e = write_all(rec->fd, out, HT_CHUNK_HEADER_SIZE + stored, &done);
	if (e) {
		fail(rec, HT_E_IO, e, rec->offset + done, "cannot write");
		return false;
	}
	rec->offset += HT_CHUNK_HEADER_SIZE + stored;
	atomic_store_explicit(&rec->bytes_written, rec->offset,
			      memory_order_relaxed);
	return true;
}

/* Grows with mremap: the writer must not malloc while producers run. */
static void index_add(struct ht_recorder *rec, uint8_t kind, uint64_t event,
		      uint64_t offset)
{
	struct index_entry *e;

	if (rec->index_lost)
		return;
	if (rec->index_len == rec->index_cap) {
		size_t old = rec->index_cap * sizeof(*e);
		void *p = mremap(rec->index, old, 2 * old, MREMAP_MAYMOVE);

		if (p == MAP_FAILED) {
			rec->index_lost = true;
			return;
		}
		rec->index = p;
		rec->index_cap *= 2;
	}
	e = &rec->index[rec->index_len++];
	e->kind = kind;
	e->event = event;
	e->offset = offset;
	if (kind == HT_INDEX_DUMP)
		rec->index_dumps++;
	else
		rec->index_gcs++;
}

static void write_buffer(struct ht_recorder *rec, struct wbuf *b)
{
	uint64_t at = rec->offset;

	if (!write_chunk(rec, HT_CHUNK_EVENTS, b->data, b->used, b->events,
			 rec->out, rec->out_cap))
		return;
	if (b->starts)
		index_add(rec, b->starts, rec->next_event + b->events - 1, at);
	rec->next_event += b->events;
	atomic_fetch_add_explicit(&rec->chunks_written, 1, memory_order_relaxed);
}

/* The index payload of format.h, into a malloc'd buffer (producers have
 * stopped when it is built). */
static uint8_t *index_payload(struct ht_recorder *rec, size_t *len)
{
	size_t bound = VARINT_MAX * (3 * rec->index_len + 8 + 2 * HT_V_COUNT_);
	uint8_t *buf = malloc(bound), *p = buf;
	uint64_t prev_event = 0, prev_offset = 0, counts[HT_V_COUNT_];
	unsigned nonzero = 0;

	if (!buf)
		return NULL;
	p = varint_put(p, rec->index_len);
	for (size_t i = 0; i < rec->index_len; i++) {
		const struct index_entry *e = &rec->index[i];

		p = varint_put(p, e->kind);
		p = varint_put(p, e->event - prev_event);
		p = varint_put(p, e->offset - prev_offset);
		prev_event = e->event;
		prev_offset = e->offset;
	}
	p = varint_put(p, rec->next_event);
	p = varint_put(p, rec->index_dumps);
	p = varint_put(p, rec->index_gcs);
	p = varint_put(p, atomic_load(&rec->chunks_written));
	for (unsigned c = 0; c < HT_V_COUNT_; c++) {
		counts[c] = atomic_load(&rec->violations[c]);
		nonzero += counts[c] != 0;
	}
	p = varint_put(p, nonzero);
	for (unsigned c = 0; c < HT_V_COUNT_; c++) {
		if (!counts[c])
			continue;
		p = varint_put(p, c);
		p = varint_put(p, counts[c]);
	}
	p = varint_put(p, atomic_load(&rec->dropped));
	*len = (size_t)(p - buf);
	return buf;
}

/* The index chunk and the trailer that points at it. */
static void write_index(struct ht_recorder *rec)
{
	uint8_t trailer[HT_TRAILER_SIZE], *payload, *out;
	uint64_t at = rec->offset;
	size_t len, cap, done;
	int e;

	if (rec->index_lost) {
		fail(rec, HT_E_NOMEM, ENOMEM, at,
		     "no memory for the index of dumps and GCs: the file has none "
		     "(it still reads by scanning)");
		return;
	}
	payload = index_payload(rec, &len);
	if (!payload) {
		fail(rec, HT_E_NOMEM, ENOMEM, at, "cannot build the index");
		return;
	}
	cap = HT_CHUNK_HEADER_SIZE + deflateBound(&rec->z, (uLong)len);
	out = cap <= rec->out_cap ? rec->out : malloc(cap);
	if (!out) {
		free(payload);
		fail(rec, HT_E_NOMEM, ENOMEM, at, "cannot build the index");
		return;
	}
	if (write_chunk(rec, HT_CHUNK_INDEX, payload, len, 0, out, cap)) {
		put_le64(trailer, at);
		put_le32(trailer + 8, (uint32_t)crc32(0, trailer, 8));
		memcpy(trailer + 12, HT_TRAILER_MAGIC, 4);
		e = write_all(rec->fd, trailer, sizeof(trailer), &done);
		if (e)
			fail(rec, HT_E_IO, e, rec->offset + done,
			     "cannot write the trailer");
		else
			rec->offset += sizeof(trailer);
		atomic_store_explicit(&rec->bytes_written, rec->offset,
				      memory_order_relaxed);
	}
	if (out != rec->out)
		free(out);
	free(payload);
}

/* The full stack holds the newest push first. */
static struct wbuf *reverse(struct wbuf *b)
{
	struct wbuf *prev = NULL;

	while (b) {
		struct wbuf *next = b->next_full;

		b->next_full = prev;
		prev = b;
		b = next;
	}
	return prev;
}

/*
 * Takes everything pushed so far, writes it in push order, gives the
 * buffers back. After an error it only gives them back, so producers
 * never block on a dead writer. On stop, writes the index and leaves.
 * Batches are numbered so that sync can wait for one taken after its call.
 */
void *writer_main(void *arg)
{
	struct ht_recorder *rec = arg;
	bool stop;

	do {
		struct wbuf *b;
		uint64_t batch;

		sem_wait_nointr(&rec->work_sem);
		stop = atomic_load(&rec->stop);
		batch = atomic_fetch_add(&rec->batches_taken, 1) + 1;
		b = reverse(atomic_exchange(&rec->full_head, NULL));
		while (b) {
			struct wbuf *next = b->next_full;

			if (!failed(rec))
				write_buffer(rec, b);
			pool_put(rec, b);
			b = next;
		}
		atomic_store(&rec->batches_done, batch);
	} while (!stop);
	if (!failed(rec))
		write_index(rec);
	return NULL;
}

