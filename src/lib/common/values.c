/*
 * values.c - what the readers, the shim and the analyses share about
 * values (format version 3, doc/design.md section 1): the width of each
 * primitive type, the hash that stands for a long array's contents, and
 * what a producer keeps of an array's contents.
 */
#include <heaptrace/record.h>

unsigned ht_value_type_width(unsigned type)
{
	switch (type) {
	case HT_TYPE_BOOLEAN:
	case HT_TYPE_BYTE:
		return 1;
	case HT_TYPE_CHAR:
	case HT_TYPE_SHORT:
		return 2;
	case HT_TYPE_FLOAT:
	case HT_TYPE_INT:
		return 4;
	case HT_TYPE_DOUBLE:
	case HT_TYPE_LONG:
		return 8;
	default:
		return 0;
	}
}

/* FNV-1a: simple, byte at a time, and well spread over 64 bits, which is
 * all a duplicate's test needs (length and prefix are compared too). */
uint64_t ht_values_hash(const uint8_t *bytes, size_t n)
{
	uint64_t h = 0xcbf29ce484222325u;

	for (size_t i = 0; i < n; i++) {
		h ^= bytes[i];
		h *= 0x100000001b3u;
	}
	return h;
}

bool ht_array_values_of(unsigned type, const uint8_t *bytes, uint64_t length,
			struct ht_array_values *out)
{
	unsigned width = ht_value_type_width(type);
	uint64_t n = length * width;

	if (width == 0)
		return false;
	*out = (struct ht_array_values){
		.type = (uint8_t)type, .length = length, .stored = length,
		.data = bytes };
	if (n > HT_VALUES_WHOLE_MAX) {
		out->stored = HT_VALUES_PREFIX / width;
		out->hash = ht_values_hash(bytes, (size_t)n);
	}
	return true;
}

static bool signed_type(unsigned type)
{
	return type == HT_TYPE_BYTE || type == HT_TYPE_SHORT ||
	       type == HT_TYPE_INT || type == HT_TYPE_LONG;
}

uint64_t ht_value_load(unsigned type, const uint8_t *p)
{
	unsigned width = ht_value_type_width(type);
	uint64_t v = 0;

	for (unsigned i = 0; i < width; i++)
		v |= (uint64_t)p[i] << (8 * i);
	if (signed_type(type) && width < 8 && (v >> (8 * width - 1)) & 1)
		v |= UINT64_MAX << (8 * width);
	return v;
}

bool ht_value_store(unsigned type, uint64_t v, uint8_t *p)
{
	unsigned width = ht_value_type_width(type);

	if (width == 0)
		return false;
	if (width < 8) {
		/* what the width keeps must give v back when loaded */
		uint64_t kept = v & ((UINT64_C(1) << (8 * width)) - 1);
		uint8_t bytes[8];

		for (unsigned i = 0; i < width; i++)
			bytes[i] = (uint8_t)(kept >> (8 * i));
		if (ht_value_load(type, bytes) != v)
			return false;
	}
	for (unsigned i = 0; i < width; i++)
		p[i] = (uint8_t)(v >> (8 * i));
	return true;
}
