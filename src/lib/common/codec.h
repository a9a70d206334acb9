/*
 * codec.h - coding events into a chunk payload and back, and the file
 * header's payload. The byte layout is in heaptrace(5), "Event coding".
 *
 * Ids are delta-coded against the previous id of the same stream (objects,
 * classes, roots), sizes, counts, flags and kinds are varints. The delta
 * bases restart at 0 with every chunk, so each chunk decodes alone.
 */
#ifndef HT_CODEC_H
#define HT_CODEC_H

#include <heaptrace/trace.h>

#include <stddef.h>
#include <stdint.h>

/* Delta bases of one chunk.
 * This struct is not an API; it may change from one release to the next. */
struct codec_bases {
	ht_id object;
	ht_id class_;
	ht_id root;
	ht_id field; /* field ids, declared and referenced (version 2) */
	uint64_t time; /* the chunk's previous time (version 3) */
};

/* The type byte of an event that carries a time (version 3) has this bit
 * set, and the time, a zigzag delta from the chunk's previous one,
 * follows it. Only gc_started, gc_finished and begin_container have it. */
#define CODEC_TIMED 0x80u
/* Version 4: the type byte of an object_allocated or method that carries
 * what version 4 added (a stack; a file, a line) has this bit set, and an
 * options varint follows it (after the time, where there is one). Events
 * that have always had options never set it. */
#define CODEC_EXTENDED 0x40u

/* This struct is not an API; it may change from one release to the next. */
struct codec_enc {
	uint8_t *start;
	uint8_t *p;
	uint8_t *end;
	struct codec_bases base;
	/* version 3: an object's first reference that is its class (its
	 * <class> link) is not written, but said by an option bit, so that a
	 * link costs no byte and the references after it keep their deltas
	 * from the object's id; false from codec_enc_init */
	bool class_refs;
};

void codec_enc_init(struct codec_enc *e, uint8_t *buf, size_t size);
static inline size_t codec_enc_room(const struct codec_enc *e)
{
	return (size_t)(e->end - e->p);
}
static inline size_t codec_enc_used(const struct codec_enc *e)
{
	return (size_t)(e->p - e->start);
}

/* Worst-case bytes of an encoded event: with this much room, put never
 * overflows. Strings longer than CODEC_MAX_STRING are cut there. */
#define CODEC_MAX_STRING 65535u
#define CODEC_EVENT_OVERHEAD 80u
size_t codec_event_bound(const struct ht_event *ev);
/* Worst-case bytes of one element of the event's array (a ref with its
 * flags, a block, a range): for splitting events that exceed a buffer. */
size_t codec_element_bound(const struct ht_event *ev);
/* Elements in the event's array (refs, blocks, ranges); 0 for the others. */
size_t codec_event_count(const struct ht_event *ev);
/* Bytes an object's values and array contents may take, beyond its
 * references (0 for other events): the shim keeps them whole, in the
 * last part of a split object. */
size_t codec_values_bound(const struct ht_event *ev);

/* Encodes ev; the caller made sure codec_event_bound(ev) bytes are free. */
void codec_put_event(struct codec_enc *e, const struct ht_event *ev);
/* The shim's parallel-array forms of the block events. */
void codec_put_moved(struct codec_enc *e, size_t count, const ht_id *old_starts,
		     const ht_id *new_starts, const uint64_t *lengths);
void codec_put_surviving(struct codec_enc *e, size_t count,
			 const ht_id *starts, const uint64_t *lengths);
#define CODEC_MOVED_BOUND (3 * 10u)
#define CODEC_SURVIVING_BOUND (2 * 10u)

/* Decoding. The decoded event points into arrays owned by the decoder,
 * valid until the next codec_get_event or codec_dec_free.
 * This struct is not an API; it may change from one release to the next. */
struct codec_dec {
	const uint8_t *start;
	const uint8_t *p;
	const uint8_t *end;
	struct codec_bases base;
	/* scratch, grown as needed and kept across chunks */
	ht_id *ids;       size_t ids_cap;
	ht_id *ids2;      size_t ids2_cap;
	ht_id *ids3;      size_t ids3_cap;
	struct ht_field *fields; size_t fields_cap;
	char *names;      size_t names_cap;
	uint32_t *u32;    size_t u32_cap;
	uint32_t *u32b;   size_t u32b_cap;
	uint8_t *u8a;     size_t u8a_cap;
	uint8_t *u8b;     size_t u8b_cap;
	uint64_t *u64;    size_t u64_cap;
	struct ht_array_values array; /* an object's, valid as its event */
	void *blocks;     size_t blocks_cap; /* bytes */
	char *str;        size_t str_cap;
	char *str2;       size_t str2_cap; /* a second string (a method's file) */
	const char *what; /* "chunk" or "file header", for messages */
	/* when set (after codec_dec_init), what the scratch grows by is
	 * charged first (0, or -1 to refuse) and given back when freed: a
	 * reader's memory budget, which the recording shim has none of */
	int (*charge)(uint64_t bytes);
	void (*release)(uint64_t bytes);
	uint64_t charged;
};

void codec_dec_init(struct codec_dec *d);
/* Starts decoding a new chunk payload (bases back to 0). */
void codec_dec_reset(struct codec_dec *d, const uint8_t *buf, size_t size);
void codec_dec_free(struct codec_dec *d);
/* 1: an event; 0: end of the payload; -1: malformed, *why says how, and
 * d->p - d->start is where the bad event starts. -2: out of memory. *why
 * is a static string, or one that names numbers ("count of 2^60
 * references ...") in a buffer of the calling thread, valid until its next
 * failed decode. */
int codec_get_event(struct codec_dec *d, struct ht_event *ev,
		    const char **why);

/* File header payload. put returns a malloc'd buffer (NULL if out of
 * memory). get allocates strings and metadata in one block, *store, freed
 * with free(); returns 0, -1 with *why for a bad payload, or -2 when out
 * of memory. */
uint8_t *codec_put_header(const struct ht_header *h, size_t *len);
int codec_get_header(const uint8_t *buf, size_t len, struct ht_header *h,
		     void **store, const char **why);

#endif
