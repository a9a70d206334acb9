/*
 * format.h - the byte layout of a .ht file, shared by the writer and the
 * reader. heaptrace(5) documents the same layout for people; keep the two
 * in step.
 *
 *   file header   magic, version, header payload, CRC-32
 *   chunk ...     each: 36-byte chunk header + zlib payload
 *   index chunk   (optional) dumps and GCs with their chunk offsets
 *   trailer       (optional) 16 bytes pointing at the index chunk
 *
 * All fixed-width integers are little-endian.
 */
#ifndef HT_FORMAT_H
#define HT_FORMAT_H

#include "util/le.h"

#include <stdint.h>
#include <string.h>

/* File header. The first byte is not ASCII so that a .ht is never taken for
 * text, and "\r\n" catches a file mangled by newline conversion. */
#define HT_MAGIC "\x89HTRACE\n"
#define HT_MAGIC_LEN 8
#define HT_FILE_HEADER_FIXED 16 /* magic, u32 version, u32 payload length */
#define HT_MAX_HEADER_PAYLOAD (16u << 20)

/* Chunk header, 36 bytes:
 *   0  4  "HTCK"
 *   4  1  kind (HT_CHUNK_EVENTS, HT_CHUNK_INDEX)
 *   5  1  compression (HT_COMPRESS_ZLIB)
 *   6  2  reserved, 0
 *   8  4  payload length as stored (compressed)
 *  12  4  payload length uncompressed
 *  16  8  index of the chunk's first event in the trace
 *  24  4  number of events in the chunk
 *  28  4  CRC-32 of the stored payload
 *  32  4  CRC-32 of bytes 0..31 of this header
 */
#define HT_CHUNK_MAGIC "HTCK"
#define HT_CHUNK_HEADER_SIZE 36
#define HT_CHUNK_EVENTS 1
#define HT_CHUNK_INDEX 2
#define HT_COMPRESS_ZLIB 1
/* Readers refuse larger chunks before allocating. */
#define HT_MAX_CHUNK_PAYLOAD (256u << 20)

/* Trailer, the last 16 bytes of a file that was closed properly:
 *   0  8  offset of the index chunk
 *   8  4  CRC-32 of bytes 0..7
 *  12  4  "HTIX"
 */
#define HT_TRAILER_MAGIC "HTIX"
#define HT_TRAILER_SIZE 16

/* Index chunk: its header's first-event field holds the total number of
 * events of the trace and its event count is 0. Payload (varints): see
 * heaptrace(5).
 *   n_entries, then per entry: kind (1 dump, 2 GC), event index delta,
 *     chunk offset delta (both against the previous entry)
 *   total events, total dumps, total GCs, total event chunks
 *   n_violation_counts, then (code, count) pairs: what the recording shim
 *     counted
 *   events the shim dropped (could not record) */
#define HT_INDEX_DUMP 1
#define HT_INDEX_GC 2

/* This struct is not an API; it may change from one release to the next. */
struct ht_chunk_header {
	uint8_t kind;
	uint8_t compression;
	uint32_t stored_length;
	uint32_t raw_length;
	uint64_t first_event;
	uint32_t events;
	uint32_t payload_crc;
};


/* Serializes h into out[HT_CHUNK_HEADER_SIZE], header CRC included. */
void chunk_header_put(uint8_t *out, const struct ht_chunk_header *h);
/* Parses and checks magic and header CRC; 0 on success, -1 otherwise with
 * *why set to a static description. */
int chunk_header_get(const uint8_t *in, struct ht_chunk_header *h,
		     const char **why);

#endif
