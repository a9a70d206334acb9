/*
 * names.h - class and method names as a .NET developer writes them,
 * System.Collections.Generic.List<System.String>, System.Int32[,],
 * Outer+Inner, from what the profiling interface tells of a class: kept
 * apart from the runtime (a table of lookups, struct clrn_source) so that
 * the formatting is tested without one.
 */
#ifndef CLR_NAMES_H
#define CLR_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Nesting levels and generic arguments of one class that are named; a
 * deeper or longer one is cut, marked with "...". */
#define CLRN_MAX_NEST 8
#define CLRN_MAX_ARGS 16
#define CLRN_SEGMENT_MAX 512
/* Generic arguments nested this deep are shown as "...". */
#define CLRN_MAX_DEPTH 6

/* This struct is not an API; it may change from one release to the next. */
/* A bounded string being built: what does not fit is cut (at a UTF-8
 * character boundary), `cut` set, and nothing more is added. */
struct clrn_buf {
	char *s;
	size_t len, at;
	bool cut;
};

void clrn_init(struct clrn_buf *b, char *s, size_t len);
void clrn_put(struct clrn_buf *b, const char *s);
void clrn_putn(struct clrn_buf *b, const char *s, size_t n);

/* What the runtime says of one class that is not an array: the names of
 * its type definition and of those it is nested in, innermost first, as
 * metadata spells them ("System.Collections.Generic.List`1", "Inner"),
 * and its generic arguments, outermost class's first. */
struct clrn_type {
	size_t n_nest;
	char nest[CLRN_MAX_NEST][CLRN_SEGMENT_MAX];
	size_t n_args;
	uint64_t args[CLRN_MAX_ARGS];
};

struct clrn_source {
	void *ctx;
	/* 1 when cls is an array: *rank, and either *elem (its element
	 * class) or, when that is 0, *elem_type (a CorElementType); 0 when
	 * it is not one; -1 when the runtime cannot say. */
	int (*array)(void *ctx, uint64_t cls, unsigned *rank, uint64_t *elem,
		     uint32_t *elem_type);
	/* 0 with *t filled; -1 when the runtime cannot say. */
	int (*type)(void *ctx, uint64_t cls, struct clrn_type *t);
};

/* The name of class cls into b. A class the runtime cannot describe is
 * named by its id: "class 0x7f...". */
void clrn_class_name(const struct clrn_source *src, uint64_t cls,
		     struct clrn_buf *b);

/* The name of the primitive a CorElementType stands for
 * ("System.Int32"), or NULL. */
const char *clrn_element_type_name(uint32_t elem_type);

/* How many generic parameters a metadata name declares ("List`1": 1) and
 * how long it is without that suffix. */
unsigned clrn_arity(const char *name, size_t *base_len);

/* n UTF-16 code units (stopping at a NUL) into UTF-8 in out (room for
 * len bytes, NUL added); an unpaired surrogate becomes U+FFFD. Returns
 * the length written. */
size_t clrn_from_utf16(char *out, size_t len, const uint16_t *in, size_t n);

/* s (UTF-8) into UTF-16 in out (room for len units, NUL added); -1 when
 * it does not fit. */
int clrn_to_utf16(uint16_t *out, size_t len, const char *s);

/* A compressed unsigned integer of metadata (ECMA-335 II.23.2: one, two
 * or four bytes, big-endian, the width in the top bits) at *p, which
 * moves past it; -1 when it runs past end. Signatures, and the blobs of a
 * portable PDB, are made of them. */
int64_t clrn_compressed(const uint8_t **p, const uint8_t *end);
/* A compressed signed integer (ECMA-335 II.23.2: the sign rotated into
 * the lowest bit); *ok false when it runs past end. */
int64_t clrn_compressed_signed(const uint8_t **p, const uint8_t *end,
			       bool *ok);

/* What a field's signature (ECMA-335 II.23.2.4: FIELD, custom modifiers,
 * the type) says it holds: a reference (a class, interface, string,
 * object, array, or generic instance of a class), no reference (a value
 * type, a primitive, a pointer), or a type parameter of its class, whose
 * index goes to *param: a reference or not as the class's argument. */
enum clrn_field_holds {
	CLRN_HOLDS_VALUE,
	CLRN_HOLDS_REFERENCE,
	CLRN_HOLDS_TYPE_PARAM,
};
enum clrn_field_holds clrn_field_sig(const uint8_t *sig, size_t len,
				     unsigned *param);
/* The CorElementType that starts a field's type in its signature (past
 * custom modifiers): ELEMENT_TYPE_I4 (8) for an int; 0 when the signature
 * is no field's. */
unsigned clrn_field_type(const uint8_t *sig, size_t len);
/* A struct-typed field's type, as its signature codes it past custom
 * modifiers (a TypeDefOrRef coded index: the token's row shifted left by
 * two, its table in the low bits); 0 for a field of another type. */
uint64_t clrn_field_struct(const uint8_t *sig, size_t len);

#endif
