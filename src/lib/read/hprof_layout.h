/*
 * hprof_layout.h - how big a Java object is, from what an HPROF heap dump
 * says about it: HotSpot's field layout (JDK 15 and later), its headers,
 * its arrays and its class mirrors, under the pointer widths of the dumped
 * JVM. HPROF records field types but no offsets and no sizes, so the
 * layout is recomputed here as HotSpot computes it; heaptrace(1), INPUT
 * FORMATS, states the rule.
 */
#ifndef HT_HPROF_LAYOUT_H
#define HT_HPROF_LAYOUT_H

#include <stdbool.h>
#include <stdint.h>

/* Basic types, as HPROF numbers them. */
enum hprof_type {
	HPROF_ARRAY_OBJECT = 1, /* old writers: a reference to an array */
	HPROF_OBJECT = 2,
	HPROF_BOOLEAN = 4,
	HPROF_CHAR = 5,
	HPROF_FLOAT = 6,
	HPROF_DOUBLE = 7,
	HPROF_BYTE = 8,
	HPROF_SHORT = 9,
	HPROF_INT = 10,
	HPROF_LONG = 11,
};

static inline bool hprof_type_is_ref(unsigned t)
{
	return t == HPROF_OBJECT || t == HPROF_ARRAY_OBJECT;
}

/* Bytes of a value of type t in the dump (a reference takes id_size), 0
 * for a type HPROF does not define. */
unsigned hprof_type_width(unsigned t, unsigned id_size);

/* The pointer widths of the dumped JVM. */
enum jvm_model {
	JVM_COMPRESSED,      /* compressed oops and class pointers */
	JVM_WIDE_OOPS,       /* 8-byte references, compressed class pointers */
	JVM_WIDE,            /* 8-byte references and class pointers */
	JVM_32BIT,           /* a 32-bit JVM */
	JVM_MODELS_
};

/* This struct is not an API; it may change from one release to the next. */
struct jvm_layout {
	const char *name;        /* for the trace's metadata */
	unsigned header;         /* bytes before the first field of an instance */
	unsigned ref;            /* a reference field or element */
	unsigned word;           /* a machine word (intptr_t) */
	unsigned array_base;     /* offset of element 0 */
	unsigned array_base_8;   /* the same for 8-byte elements */
};

extern const struct jvm_layout jvm_layouts[JVM_MODELS_];

/* What the layout of a class depends on: its name (internal form,
 * "java/lang/Thread"), for the fields HotSpot adds or pads, and its own
 * instance fields in the dump's order. */
struct class_fields {
	const char *name;         /* NULL if unnamed */
	uint32_t n;
	const uint8_t *types;     /* enum hprof_type */
	const char *const *names; /* entries may be NULL */
};

struct field_block {
	uint32_t offset, size;
};

/* This struct is not an API; it may change from one release to the next. */
/*
 * What a subclass needs of the fields of a class, inherited ones
 * included: not where each lies, but the gaps between them, which its
 * own fields may fill. A deep hierarchy of classes with many fields would
 * otherwise hold every inherited field once per subclass (1,024 classes
 * of 180 fields: 775 MB); the gaps are few.
 */
struct field_layout {
	uint32_t end;          /* past the last field or padding */
	uint32_t block_end;    /* past the last field */
	bool contended;        /* the class (not its supers) uses @Contended */
	bool has_fields;       /* it or a super class has a field */
	uint32_t n_gaps;
	struct field_block *gaps; /* free between header and block_end, sorted */
};

/* Lays out class c over its super class's layout (NULL: no super class).
 * 0, or -1 out of memory. out owns memory: layout_free. */
int layout_class(const struct jvm_layout *m, const struct class_fields *c,
		 const struct field_layout *super, struct field_layout *out);
void layout_free(struct field_layout *l);

/* An instance of a class laid out as l. */
uint64_t layout_instance_size(const struct jvm_layout *m,
			      const struct field_layout *l);

/* An array of n elements of type t (HPROF_OBJECT for references). */
uint64_t layout_array_size(const struct jvm_layout *m, unsigned t,
			   uint64_t n);

/* This struct is not an API; it may change from one release to the next. */
/* Static fields as the class mirror holds them: references, then
 * primitives by width. */
struct static_counts {
	uint32_t refs;
	uint32_t by_width[9]; /* primitives of 1, 2, 4 and 8 bytes */
};

/* A class mirror (its java.lang.Class instance) whose class has statics
 * s; class_size is the size of a java.lang.Class instance without
 * statics. */
uint64_t layout_mirror_size(const struct jvm_layout *m, uint64_t class_size,
			    const struct static_counts *s);

#endif
