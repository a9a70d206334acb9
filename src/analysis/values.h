/*
 * values.h - objects' values in a dump's graph (doc/design.md section 3,
 * values in the graph): each object's primitive field values and array
 * contents as one *record*, kept once in a byte arena however many objects
 * hold it, and read back field by field.
 *
 * A record: a varint count of values; per value the field (its index in
 * the dump's fields) and the value's bits as a zigzag varint; a byte, 1
 * when array contents follow: type, length and stored count as varints,
 * the stored elements' little-endian bytes, and the 8-byte hash when they
 * are a prefix. Records start at multiples of 4, so that a 32-bit offset
 * in 4-byte units reaches 16 GiB of them.
 */
#ifndef HT_VALUES_H
#define HT_VALUES_H

#include <heaptrace/trace.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The records of a dump as it arrives, with the index that finds an equal
 * record already kept; the index goes once the dump is built.
 * This struct is not an API; it may change from one release to the next. */
struct value_arena {
	uint8_t *bytes;
	size_t len, cap;
	uint64_t *slots;   /* open addressing: tag and offset (values.c) */
	size_t n_slots, used;
	uint64_t charged;  /* to the memory budget (util/membudget.h) */
};

/* The arena reaches no further than a 32-bit offset in 4-byte units. */
#define VALUE_ARENA_MAX (UINT64_C(1) << 34)

/*
 * Keeps the record of n values (fields[i]: the dump's field index,
 * values[i]: the bits) and array (NULL for none), or finds an equal one
 * kept before: *at is its offset in 4-byte units. 0, -1 when out of
 * memory, -2 when the arena would pass VALUE_ARENA_MAX.
 */
int value_arena_add(struct value_arena *a, const uint32_t *fields,
		    const uint64_t *values, size_t n,
		    const struct ht_array_values *array, uint32_t *at);
/* Drops the index (the records stay). */
void value_arena_end(struct value_arena *a);
void value_arena_free(struct value_arena *a);

/* One record being read.
 * This struct is not an API; it may change from one release to the next. */
struct value_record {
	const uint8_t *next;    /* the next value */
	size_t left;            /* values not read yet */
	bool has_array;
	struct ht_array_values array; /* data: into the record */
};

/* Opens the record at `at` (4-byte units) of bytes, which value_arena_add
 * wrote. */
void value_record_open(const uint8_t *bytes, uint32_t at,
		       struct value_record *r);
/* The next value: true and *field, *bits set; false after the last. */
bool value_record_next(struct value_record *r, uint32_t *field,
		       uint64_t *bits);

struct heap;

/* The bits of object's primitive field called name (the first of that
 * name in its record): false when the dump kept no such value. */
bool values_field(const struct heap *h, uint32_t object, const char *name,
		  uint64_t *bits);
/* The object that object's reference field called name holds: HEAP_NONE
 * when it is null, dangling, or no reference names that field. */
uint32_t values_field_object(const struct heap *h, uint32_t object,
			     const char *name);

/* The text of object when it is a string (doc/design.md section 1): a
 * java.lang.String's from the array its `value` field references (a
 * byte[] with its `coder`, Latin-1 0 or UTF-16 1, or a char[]), a
 * System.String's from its own char contents. At most max_chars
 * characters as UTF-8 into out (VALUES_TEXT_BOUND(max_chars) bytes),
 * NUL-terminated; *units_shown and *length: the code units (Latin-1
 * bytes or UTF-16 units, a surrogate pair two) that the text written
 * stands for, and the string's length in them, so that a caller sees
 * what was cut, by max_chars or because the trace kept a prefix, when
 * the first is less. False when object is no string or the dump kept no
 * values for it. */
#define VALUES_TEXT_BOUND(max_chars) (6 * (size_t)(max_chars) + 1)
bool values_string_text(const struct heap *h, uint32_t object, char *out,
			size_t max_chars, uint64_t *units_shown,
			uint64_t *length);

/* The objects whose values values_string_text reads for object, into
 * out: none when it is no string; a System.String itself; a
 * java.lang.String and its `value` array when it holds one. Reads no
 * values (a graph built without them answers): the count. */
size_t values_string_sources(const struct heap *h, uint32_t object,
			     uint32_t out[2]);

/* The object that holds a string's characters (a java.lang.String's value
 * array, a System.String itself) into *chars, and a key equal for two
 * strings exactly when their texts are: equal characters laid out alike
 * (their records are one in the arena, a prefix and hash counting as the
 * whole). False when object is no string or the dump kept no values for
 * it. For `waste`, which groups strings by it. */
bool values_string_chars(const struct heap *h, uint32_t object,
			 uint32_t *chars, uint64_t *key);

#endif
