/*
 * format.c - the fixed-layout parts of a .ht file: chunk headers (see
 * format.h for the layout).
 */
#include "lib/common/format.h"

#include <zlib.h>

void chunk_header_put(uint8_t *out, const struct ht_chunk_header *h)
{
	memcpy(out, HT_CHUNK_MAGIC, 4);
	out[4] = h->kind;
	out[5] = h->compression;
	out[6] = 0;
	out[7] = 0;
	put_le32(out + 8, h->stored_length);
	put_le32(out + 12, h->raw_length);
	put_le64(out + 16, h->first_event);
	put_le32(out + 24, h->events);
	put_le32(out + 28, h->payload_crc);
	put_le32(out + 32, (uint32_t)crc32(0, out, 32));
}

int chunk_header_get(const uint8_t *in, struct ht_chunk_header *h,
		     const char **why)
{
	if (memcmp(in, HT_CHUNK_MAGIC, 4) != 0) {
		*why = "no chunk here (bad chunk magic)";
		return -1;
	}
	if (get_le32(in + 32) != (uint32_t)crc32(0, in, 32)) {
		*why = "chunk header CRC mismatch";
		return -1;
	}
	h->kind = in[4];
	h->compression = in[5];
	h->stored_length = get_le32(in + 8);
	h->raw_length = get_le32(in + 12);
	h->first_event = get_le64(in + 16);
	h->events = get_le32(in + 24);
	h->payload_crc = get_le32(in + 28);
	if (h->kind != HT_CHUNK_EVENTS && h->kind != HT_CHUNK_INDEX) {
		*why = "unknown chunk kind";
		return -1;
	}
	if (h->compression != HT_COMPRESS_ZLIB) {
		*why = "unknown chunk compression";
		return -1;
	}
	if (h->raw_length > HT_MAX_CHUNK_PAYLOAD ||
	    h->stored_length > HT_MAX_CHUNK_PAYLOAD) {
		*why = "chunk larger than the 256 MiB limit";
		return -1;
	}
	return 0;
}
