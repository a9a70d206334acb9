/*
 * fuzz_ht.c - fuzz target: any bytes as a .ht file, and the same bytes as
 * what lies inside one.
 *
 * As a file, the binary source must refuse or read them without crashing,
 * hanging or reading out of bounds, whatever the damage; and it must tell
 * the same story whether the file can seek (index read first) or is a pipe
 * (index met last): the same events, in the same order, the same end.
 *
 * Mutated bytes rarely get past a chunk's CRC and zlib, so the bytes are
 * also decoded as a chunk payload and as a file header payload directly,
 * and then wrapped in a well-formed file (valid CRCs, compressed) whose one
 * chunk holds them: the reader must deliver exactly the events the decoder
 * did, then stop where it stopped.
 */
#include "fuzz.h"

#include "lib/common/codec.h"
#include "lib/common/format.h"
#include "util/utf8.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

struct outcome {
	bool opened;
	int end;          /* 0: read to the end, -1: stopped by an error */
	enum ht_error_code code;
	uint64_t events;
	uint64_t digest;
	bool index_present;
	uint64_t index_events;
};

/* The end is sticky: after it, every call says the same again. */
static void check_end_repeats(struct ht_reader *r, int end,
			      const struct ht_error *first)
{
	struct ht_error again;
	struct ht_event ev;

	FUZZ_CHECK(ht_reader_next(r, &ev, &again) == end,
		   "the end of the input did not repeat");
	if (end < 0)
		FUZZ_CHECK(again.code == first->code &&
			   strcmp(again.message, first->message) == 0,
			   "a repeated error changed: '%s' then '%s'",
			   first->message, again.message);
}

static void check_loss(struct ht_reader *r, int end, size_t size)
{
	const struct ht_loss *loss = ht_reader_loss(r);

	FUZZ_CHECK(loss, "no loss record");
	if (end == 0) {
		FUZZ_CHECK(!loss->lost, "loss reported after a clean end");
		return;
	}
	if (!loss->lost)
		return; /* an I/O or memory error, not damage */
	FUZZ_CHECK(loss->offset <= size && loss->bytes_lost == size -
		   loss->offset, "damage at byte %llu with %llu bytes lost, "
		   "in %zu", (unsigned long long)loss->offset,
		   (unsigned long long)loss->bytes_lost, size);
}

static void read_all(const uint8_t *data, size_t size, enum fuzz_stream how,
		     struct outcome *o)
{
	const struct ht_index_info *index;
	struct ht_reader *r;
	struct ht_error err;
	struct ht_event ev;
	int rc;

	memset(o, 0, sizeof(*o));
	r = fuzz_reader(data, size, FUZZ_HT, how, &err);
	if (!r) {
		o->code = err.code;
		return;
	}
	o->opened = true;
	FUZZ_CHECK(strcmp(ht_reader_format(r), "ht") == 0, "format name");
	while ((rc = ht_reader_next(r, &ev, &err)) == 1) {
		struct ht_position pos = ht_reader_position(r);

		FUZZ_CHECK(pos.event_index == o->events,
			   "position says event %llu, it is event %llu",
			   (unsigned long long)pos.event_index,
			   (unsigned long long)o->events);
		o->digest = fuzz_digest_event(o->digest, &ev);
		o->events++;
	}
	FUZZ_CHECK(rc == 0 || rc == -1, "ht_reader_next returned %d", rc);
	if (rc < 0) {
		fuzz_check_error(&err, "ht_reader_next");
		o->code = err.code;
	}
	o->end = rc;
	check_end_repeats(r, rc, &err);
	check_loss(r, rc, size);
	index = ht_reader_index(r);
	FUZZ_CHECK(index, ".ht input without index info");
	o->index_present = index->present;
	o->index_events = index->events;
	if (rc == 0 && index->present)
		FUZZ_CHECK(index->events == o->events,
			   "the index counts %llu events, %llu were read",
			   (unsigned long long)index->events,
			   (unsigned long long)o->events);
	ht_reader_close(r);
}

/* ---- the bytes as a chunk payload ---------------------------------------- */

struct decoded {
	uint32_t events;
	uint64_t digest;
	bool whole; /* decoded to the end without error */
};

/*
 * The name of a class, thread or method event as the reader delivers it:
 * ill-formed UTF-8 repaired (heaptrace(5), STRINGS), into *buf, which the
 * caller frees. The decoder gives the bytes as written.
 */
static void repair_name(struct ht_event *ev, char **buf)
{
	const char **name = ev->type == HT_EV_CLASS    ? &ev->u.class_.name
			    : ev->type == HT_EV_THREAD ? &ev->u.thread.name
			    : ev->type == HT_EV_METHOD ? &ev->u.method.name
						       : NULL;
	size_t n;

	if (!name || !*name || utf8_valid(*name, n = strlen(*name)))
		return;
	free(*buf);
	*buf = malloc(UTF8_REPAIR_BOUND(n) + 1);
	FUZZ_CHECK(*buf, "out of memory");
	(*buf)[utf8_repair(*buf, *name, n)] = '\0';
	*name = *buf;
}

static void decode_payload(const uint8_t *data, size_t size, struct decoded *o)
{
	char *repaired = NULL;
	struct codec_dec d;
	struct ht_event ev;
	const char *why = NULL;
	int rc;

	memset(o, 0, sizeof(*o));
	codec_dec_init(&d);
	codec_dec_reset(&d, data, size);
	while (o->events < UINT32_MAX &&
	       (rc = codec_get_event(&d, &ev, &why)) == 1) {
		FUZZ_CHECK(d.p > d.start && d.p <= d.end,
			   "decoder cursor out of the payload");
		repair_name(&ev, &repaired);
		o->digest = fuzz_digest_event(o->digest, &ev);
		o->events++;
	}
	free(repaired);
	FUZZ_CHECK(rc == 0 || rc == -1 || rc == -2, "codec_get_event: %d", rc);
	FUZZ_CHECK(rc != -1 || (why && *why), "decoding failed without a why");
	o->whole = rc == 0;
	codec_dec_free(&d);
}

static void decode_header(const uint8_t *data, size_t size)
{
	struct ht_header h;
	const char *why = NULL;
	void *store;
	int rc = codec_get_header(data, size, &h, &store, &why);

	if (rc < 0) {
		FUZZ_CHECK(why && *why, "header refused without a why");
		return;
	}
	FUZZ_CHECK(h.pointer_size == 4 || h.pointer_size == 8,
		   "pointer size %u", h.pointer_size);
	for (size_t i = 0; i < h.n_metadata; i++)
		FUZZ_CHECK(strlen(h.metadata[i].key) + strlen(h.metadata[i].value)
			   <= size, "metadata longer than the payload");
	free(store);
}

/* A well-formed .ht whose one event chunk holds payload and claims
 * `events` events; malloc'd, *len set. */
static uint8_t *wrap_payload(const uint8_t *payload, size_t size,
			     uint32_t events, size_t *len)
{
	const struct ht_header header = {
		.version = HT_FORMAT_VERSION,
		.runtime = "fuzz",
		.pointer_size = 8,
	};
	struct ht_chunk_header ch = {
		.kind = HT_CHUNK_EVENTS,
		.compression = HT_COMPRESS_ZLIB,
		.raw_length = (uint32_t)size,
		.events = events,
	};
	size_t hlen;
	uint8_t *hp = codec_put_header(&header, &hlen);
	uLongf zlen = compressBound((uLong)size);
	size_t at = HT_FILE_HEADER_FIXED + hlen + 4;
	uint8_t *f = malloc(at + HT_CHUNK_HEADER_SIZE + zlen);

	FUZZ_CHECK(hp && f, "out of memory");
	memcpy(f, HT_MAGIC, HT_MAGIC_LEN);
	put_le32(f + 8, HT_FORMAT_VERSION);
	put_le32(f + 12, (uint32_t)hlen);
	memcpy(f + HT_FILE_HEADER_FIXED, hp, hlen);
	put_le32(f + HT_FILE_HEADER_FIXED + hlen,
		 (uint32_t)crc32(0, f, (uInt)(HT_FILE_HEADER_FIXED + hlen)));
	free(hp);
	FUZZ_CHECK(compress2(f + at + HT_CHUNK_HEADER_SIZE, &zlen, payload,
			     (uLong)size, 1) == Z_OK, "compress2");
	ch.stored_length = (uint32_t)zlen;
	ch.payload_crc = (uint32_t)crc32(0, f + at + HT_CHUNK_HEADER_SIZE,
					 (uInt)zlen);
	chunk_header_put(f + at, &ch);
	*len = at + HT_CHUNK_HEADER_SIZE + zlen;
	return f;
}

/* The reader over the wrapped payload delivers what the decoder did. */
static void check_wrapped(const uint8_t *data, size_t size)
{
	struct decoded dec;
	struct outcome o;
	size_t len;
	uint8_t *file;

	decode_payload(data, size, &dec);
	file = wrap_payload(data, size, dec.events, &len);
	read_all(file, len, FUZZ_PIPE, &o);
	FUZZ_CHECK(o.opened, "a well-formed file does not open");
	FUZZ_CHECK(o.events == dec.events && o.digest == dec.digest,
		   "the reader delivers %llu events, the decoder %u",
		   (unsigned long long)o.events, dec.events);
	FUZZ_CHECK((o.end == 0) == dec.whole,
		   "the reader ends with %d where the decoder %s", o.end,
		   dec.whole ? "read the whole payload" : "failed");
	free(file);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct outcome file, pipe;

	decode_header(data, size);
	check_wrapped(data, size);

	read_all(data, size, FUZZ_SEEKABLE, &file);
	read_all(data, size, FUZZ_PIPE, &pipe);
	FUZZ_CHECK(file.opened == pipe.opened,
		   "opened as a file: %d, as a pipe: %d", file.opened,
		   pipe.opened);
	if (!file.opened)
		return 0;
	FUZZ_CHECK(file.events == pipe.events && file.digest == pipe.digest,
		   "a file yields %llu events, a pipe %llu (or other ones)",
		   (unsigned long long)file.events,
		   (unsigned long long)pipe.events);
	FUZZ_CHECK(file.end == pipe.end,
		   "a file ends with %d, a pipe with %d", file.end, pipe.end);
	if (file.end == 0)
		FUZZ_CHECK(file.index_present == pipe.index_present,
			   "the index is present to a file: %d, a pipe: %d",
			   file.index_present, pipe.index_present);
	return 0;
}
