/*
 * hprof_internal.h - what the files of the HPROF reader share (source.h
 * opens it): the record tags, the limits, the source's state and the
 * functions that one file of the reader calls in another. Not installed,
 * and included by the reader's files only.
 *
 * The reader is split by the rooms of its work (hprof_source.c says how
 * it reads a dump):
 *
 *   hprof_source.c   the source as a whole: opening, the event pass's
 *                    phases, failing, memory, closing
 *   hprof_input.c    where the bytes come from (a file, a pipe's copy, a
 *                    gzip's inflated copy), the read buffer, the file
 *                    header and the framing of records
 *   hprof_index.c    the index pass: the record sequence, what each
 *                    record keeps, the walk over a dump's bodies
 *   hprof_classes.c  classes: their names, CLASS_DUMPs, the chain of
 *                    super classes and the layout of instances
 *   hprof_model.c    which object layout the dumped JVM had
 *   hprof_threads.c  names of threads, chased through the heap
 *   hprof_names.c    the event pass: class, field, thread and method
 *                    events before the first dump
 *   hprof_roots.c    the event pass: a dump's roots in their containers
 *   hprof_objects.c  the event pass: a dump's objects and their values
 *
 * The helpers read once per object or per sub-record stay inline here,
 * so that the hot loops cost what they did in one file.
 */
#ifndef HT_HPROF_INTERNAL_H
#define HT_HPROF_INTERNAL_H

#include <heaptrace/trace.h>

#include "lib/common/error.h"
#include "lib/read/hprof_layout.h"
#include "util/idmap.h"
#include "util/membudget.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#define MAGIC_PREFIX "JAVA PROFILE "
#define MAGIC_LEN 19 /* "JAVA PROFILE 1.0.2" and its NUL */
#define FILE_HEADER_LEN (MAGIC_LEN + 4 + 8)
#define RECORD_HEADER_LEN 9

/* Limits, documented in heaptrace(1). A JVM symbol is under 64 KiB, and
 * an instance's fields take at most 65535 * 8 bytes per class. */
#define MAX_UTF8 (1u << 20)
#define MAX_INSTANCE_DATA (64u << 20)
#define MAX_CLASS_DEPTH 1024
#define MAX_TRACE_FRAMES (1u << 20)
/* An array's references go out in events of at most this many, joined by
 * HT_OBJ_MORE_REFERENCES, so that no event needs a huge buffer. */
#define REFS_PER_EVENT 65536u
#define MAX_THREAD_NAME 256 /* characters kept of a thread's name */
/* Small enough that what was read is still in the cache when parsed. */
#define READ_SIZE (256u << 10)
/* The address evidence for the object layout stops growing here: tens of
 * thousands of neighbours tell the layouts apart many times over. */
#define MAX_EVIDENCE_PAIRS (1u << 16)

/* string_value_at before String's fields were looked for */
#define STRING_FIELDS_UNKNOWN (-2)

enum record_tag {
	R_UTF8 = 0x01,
	R_LOAD_CLASS = 0x02,
	R_UNLOAD_CLASS = 0x03,
	R_FRAME = 0x04,
	R_TRACE = 0x05,
	R_ALLOC_SITES = 0x06,
	R_HEAP_SUMMARY = 0x07,
	R_START_THREAD = 0x0a,
	R_END_THREAD = 0x0b,
	R_HEAP_DUMP = 0x0c,
	R_CPU_SAMPLES = 0x0d,
	R_CONTROL_SETTINGS = 0x0e,
	R_HEAP_DUMP_SEGMENT = 0x1c,
	R_HEAP_DUMP_END = 0x2c,
};

enum sub_tag {
	S_ROOT_UNKNOWN = 0xff,
	S_ROOT_JNI_GLOBAL = 0x01,
	S_ROOT_JNI_LOCAL = 0x02,
	S_ROOT_JAVA_FRAME = 0x03,
	S_ROOT_NATIVE_STACK = 0x04,
	S_ROOT_STICKY_CLASS = 0x05,
	S_ROOT_THREAD_BLOCK = 0x06,
	S_ROOT_MONITOR_USED = 0x07,
	S_ROOT_THREAD_OBJECT = 0x08,
	S_CLASS_DUMP = 0x20,
	S_INSTANCE_DUMP = 0x21,
	S_OBJ_ARRAY_DUMP = 0x22,
	S_PRIM_ARRAY_DUMP = 0x23,
};

/* FRAME line numbers that are not lines. */
#define LINE_COMPILED (-2)
#define LINE_NATIVE (-3)

/* ---- Memory ------------------------------------------------------------ */

/* ALLOC_GROW for the arrays of the source s in scope, charged to the
 * memory budget. */
#define HPROF_GROW(ptr, need, cap) BUDGET_GROW(ptr, need, cap, s->charged)

/* Text that never moves (hprof_source.c): names are kept in blocks that
 * are never reallocated, so a pointer to one stays good while more are
 * added. */
struct text_store {
	char **blocks;
	size_t n_blocks, cap_blocks;
	size_t used, size; /* of the last block */
	uint64_t charged;  /* to the memory budget */
};

/* ---- What the index pass keeps ----------------------------------------- */

/* These structs are not an API; they may change from one release to the
 * next. */

struct loaded_class { /* LOAD_CLASS */
	uint32_t serial;
	uint64_t class_id;
	uint64_t name_id;
	uint64_t offset;
};

/* A class, from its CLASS_DUMP, and what is derived from it. */
struct hclass {
	uint64_t id, super_id, loader, signers, domain;
	uint64_t offset;
	uint32_t n_fields;
	uint32_t n_static_values; /* with values: its primitive statics */
	uint8_t *types;          /* own instance fields, in the dump's order */
	const char **names;
	uint32_t own_bytes;      /* of its own fields in an INSTANCE_DUMP */
	struct static_counts statics; /* real statics, for the mirror's size */
	/* the trace's field ids (dense, from 1): its own instance reference
	 * fields are first_field + i in the dump's order, its static
	 * reference fields (pseudo-statics included, as the class object's
	 * references list them) first_static + i */
	uint32_t first_field;
	uint32_t first_static;
	uint32_t n_static_refs;
	/* with values (ht_reader_options.values): its own primitive
	 * instance fields are first_value + i in the dump's order, its
	 * primitive statics after them (statics_value) */
	uint32_t first_value;
	uint32_t n_own_values;
	const char **static_names; /* with values, the primitive statics'
				      names too, from the end, and their
				      types after the last (statics_value) */

	/* derived from the chain of super classes, once complete; each
	 * class keeps what its own fields add, so that a chain of n classes
	 * costs n, not n * n (chain_ready) */
	bool chain_done;
	uint32_t super_at;       /* into classes, when super_id is not 0 */
	uint32_t depth;          /* super classes above it */
	uint64_t data_bytes;     /* an instance's field bytes in the dump */
	uint32_t n_refs;         /* references there, its supers' included */
	uint32_t n_own_refs;
	uint32_t *own_refs;      /* where its own references lie in its own
				    field bytes (which come first) */
	int64_t thread_name_at;  /* Thread.name there, -1 if not a Thread */
	/* the strength of its referent (HT_FIELD_SOFT .. HT_FIELD_PHANTOM)
	 * when it is java.lang.ref's Soft, Weak, Final or PhantomReference
	 * or extends one; 0 otherwise */
	uint8_t referent_kind;
	bool has_layout[JVM_MODELS_];
	struct field_layout layout[JVM_MODELS_];
	uint64_t size[JVM_MODELS_];
};

struct frame {
	uint64_t id, method, signature, source_file;
	uint32_t class_serial;
	int32_t line;
	uint64_t method_id; /* the id of the method's first frame */
};

struct trace {
	uint32_t serial, thread_serial, n_frames;
	size_t first; /* into frame_ids */
};

struct thread {
	uint32_t serial;
	uint64_t object;      /* 0 when no record names it */
	bool has_trace;
	uint32_t trace_serial;
	uint64_t name_id;     /* START_THREAD's name, 0 if none */
	const char *name;
};

struct root {
	uint8_t tag;
	uint64_t object;
	uint32_t thread_serial;
	int32_t depth;        /* frame number in the thread's trace, -1 none */
	uint64_t offset;
};

struct segment {
	uint64_t offset, length; /* the body, as far as it is intact */
};

/* A CLASS_DUMP of a dump, where it lies. */
struct class_ref {
	uint64_t id;
	uint64_t offset, size;
	uint64_t end; /* of its record's body */
};

struct dump {
	uint64_t offset;       /* of its first record */
	uint64_t end_offset;   /* of what ends it */
	bool closed;           /* HEAP_DUMP_END seen, or one whole HEAP_DUMP */
	/* the times of its first record and of what ends it: microseconds
	 * since the header's timestamp (HotSpot writes 0 in every record,
	 * which says nothing: a dump whose times are all 0 has none) */
	uint32_t begin_us, end_us;
	struct segment *segs;
	size_t n_segs, cap_segs;
	struct root *roots;
	size_t n_roots, cap_roots;
	struct class_ref *classes; /* in file order */
	size_t n_classes, cap_classes;
};

/* Thread names that live in the heap: Thread.name -> String -> array. */
struct name_chase {
	uint64_t thread;       /* the Thread object */
	uint64_t thread_at;    /* offset of its INSTANCE_DUMP */
	uint32_t string;       /* into strings_wanted */
};

struct wanted_string {
	uint64_t id, at;       /* at: offset of its INSTANCE_DUMP, once found */
	bool found;
	bool found_late;       /* by a later walk, not the first pass */
	uint8_t coder;         /* String.coder: 0 Latin-1, 1 UTF-16 */
	uint32_t array;        /* into arrays_wanted, once found */
};

struct wanted_array {
	uint64_t id;
	bool found;
	uint8_t coder;         /* of the String that holds it */
	const char *text;      /* decoded, UTF-8 */
};

/* Which layout the addresses allow: each pair of objects adjacent in the
 * dump, the second at a higher address, bounds the first one's size. */
struct evidence {
	uint64_t pairs;
	uint64_t overlaps[3]; /* a layout makes the first reach past it */
	uint64_t exact[3];    /* the second starts where the first ends */
	bool have_prev;
	uint64_t prev_id;
	uint64_t prev_size[3];
};

/* ---- Reading ----------------------------------------------------------- */

struct input {
	int fd;
	bool gz_cut;       /* a gzipped dump's gzip data ends before its
			    * trailer */
	off_t base;        /* where the HPROF starts in fd */
	uint64_t size;     /* its bytes */
	uint8_t *buf;
	size_t cap;        /* charged to the memory budget */
	uint64_t buf_at;   /* HPROF offset of buf[0] */
	size_t buf_len;
	/* why the last read failed: its errno, ENOMEM, or EIO with shrank */
	int io_errno;
	bool shrank;       /* the file ended before the size it had at open */
};

enum phase {
	PH_CLASSES,
	PH_FIELDS,
	PH_THREADS,
	PH_METHODS,
	PH_DUMP,
	PH_ROOTS,
	PH_OBJECTS,
	PH_DUMP_END,
	PH_DONE,
	PH_FAILED,
};

/* One step of a dump's root section: a container, or roots in it. */
struct step {
	bool roots;
	uint8_t type;          /* container type */
	uint64_t id1, id2, offset;
	size_t first, count;   /* into plan_refs */
};

/*
 * The state of one HPROF source. This struct is not an API; it may change
 * from one release to the next. Its fields are grouped by the files that
 * use them (the list at the top of this header).
 */
struct hprof_source {
	/* the input (hprof_input.c) and memory (hprof_source.c) */
	const char *path;
	/* what its arrays and classes hold, charged to the memory budget
	 * (util/membudget.h) and given back at close; the text store and
	 * the read buffer keep their own count */
	uint64_t charged;
	FILE *f;               /* as handed over */
	FILE *spool;           /* the copy of a pipe, or NULL */
	FILE *inflated;        /* a gzipped dump, inflated, or NULL */
	struct input in;
	unsigned id_size;
	char version[8];       /* "1.0.2" */
	uint64_t timestamp_ms;

	/* what the index pass keeps (hprof_index.c), of classes
	 * (hprof_classes.c) */
	struct text_store text;
	struct idmap utf8;     /* id -> index into utf8_text */
	const char **utf8_text;
	size_t n_utf8, cap_utf8;

	struct loaded_class *loaded;
	size_t n_loaded, cap_loaded;
	struct idmap loaded_by_serial, loaded_by_id;

	struct hclass *classes;
	size_t n_classes, cap_classes;
	struct idmap class_by_id;
	struct hclass *last_class; /* the one looked up last */

	struct frame *frames;
	size_t n_frames, cap_frames;
	struct trace *traces;
	size_t n_traces, cap_traces;
	uint64_t *frame_ids;
	size_t n_frame_ids, cap_frame_ids;
	uint64_t frames_spread; /* frames begun with no roots, in all dumps */
	struct idmap frame_by_id, trace_by_serial, trace_by_thread;
	struct idmap method_by_key;

	struct thread *threads;
	size_t n_threads, cap_threads;
	struct idmap thread_by_serial;

	struct dump *dumps;
	size_t n_dumps, cap_dumps;
	bool in_segments;      /* a run of HEAP_DUMP_SEGMENTs is open */
	uint32_t record_us;    /* the time of the record being indexed */

	/* names of threads, chased through the heap (hprof_threads.c) */
	uint64_t thread_class, string_class; /* ids, 0 if absent */
	int64_t string_value_at, string_coder_at;
	struct name_chase *chases;
	size_t n_chases, cap_chases;
	struct idmap chase_by_thread;
	struct wanted_string *strings_wanted;
	size_t n_strings_wanted, cap_strings_wanted;
	struct idmap string_slot;
	struct wanted_array *arrays_wanted;
	size_t n_arrays_wanted, cap_arrays_wanted;
	struct idmap array_slot;

	/* the object layout (hprof_model.c, hprof_classes.c) */
	enum ht_compressed_oops choice; /* the caller's (ht_reader_options) */
	bool want_values;               /* the caller's: deliver values */
	struct evidence evidence;
	enum jvm_model model;
	char contradiction[192]; /* what the addresses show against the
				    layout given, or "" */
	uint64_t mirror_base[JVM_MODELS_]; /* java.lang.Class without statics */
	bool has_mirror_base[JVM_MODELS_];
	uint64_t class_class;  /* java.lang.Class's id, 0 if absent */
	/*
	 * References: java.lang.ref.Reference declares `referent`, but how
	 * strongly it holds depends on the instance's class. Each strength
	 * class (Soft, Weak, Final, PhantomReference: by kind - HT_FIELD_SOFT)
	 * gets a synthetic field "referent" of its kind, declared after the
	 * real ones, and the referent of an instance names its nearest
	 * strength ancestor's (instance_refs).
	 */
	uint64_t reference_class;     /* java.lang.ref.Reference, 0 if absent */
	uint64_t strength_class[4];   /* ids, 0 if absent */
	uint32_t referent_field;      /* Reference.referent's id, 0 unknown */
	uint32_t strength_field[4];   /* the synthetic ids, 0 undeclared */
	bool strength_declared;       /* the fields event gave them */
	uint64_t prim_array_class[12]; /* by element type, 0 if absent */

	/* the first damage the index pass met (hprof_index.c) */
	bool damaged;
	uint64_t damage_offset;
	struct ht_error damage;

	/* the trace's header (hprof_source.c) */
	struct ht_header header;
	struct ht_metadata metadata[6];
	char meta_values[6][192];

	/* the event pass: its phase (hprof_source.c), the names
	 * (hprof_names.c), the plan of roots (hprof_roots.c), the objects
	 * (hprof_objects.c) */
	enum phase phase;
	size_t cursor;         /* class, thread or method being named */
	size_t dump;           /* the dump being delivered */
	struct step *plan;
	size_t n_plan, cap_plan, plan_at;
	ht_id *plan_refs;
	size_t n_plan_refs, cap_plan_refs;
	size_t seg;            /* the segment being read */
	uint64_t at;           /* the next sub-record in it */
	/* an object array being delivered in parts */
	bool array_open;
	uint64_t array_id, array_class, array_size, array_at, array_sub_at;
	unsigned array_head;   /* its sub-record's bytes before the elements */
	uint32_t array_left;
	struct class_ref *by_id; /* the dump's class objects, by id */
	size_t cap_by_id, next_class, class_in_file;
	ht_id *refs;
	size_t cap_refs;
	ht_id *ref_fields;     /* parallel to refs */
	size_t cap_ref_fields;
	/* an object's values (ht_reader_options.values) */
	ht_id *value_fields;
	size_t cap_value_fields;
	uint64_t *values;
	size_t cap_values;
	struct ht_array_values array;
	uint8_t array_bytes[HT_VALUES_WHOLE_MAX];
	uint32_t next_field;   /* the next field id to give out */
	struct ht_field *fields; /* of the fields event being delivered */
	size_t cap_fields;
	size_t field_class;    /* the class whose fields go out next */
	bool links_declared;
	uint32_t *zero_flags;
	size_t cap_zero_flags;
	char *name_buf;
	size_t cap_name_buf;

	uint64_t events;
	struct ht_position last;
	struct ht_error failure;
	struct ht_loss loss;
};

/* Where a sub-record must end (hprof_index.c, hprof_classes.c). */
/* Where a sub-record must end: the end of its record body, or of the file
 * when the record claims more than that. */
struct body {
	uint64_t end;          /* of the intact part */
	uint64_t claimed_end;  /* as the record header says */
	uint64_t record_at;
	unsigned tag;
};

/* Reads a CLASS_DUMP piece by piece (hprof_classes.c). */
/* Reads a CLASS_DUMP piece by piece, which stops at the first piece that
 * runs past the body (short_body) or cannot be read (io). */
struct cursor {
	struct hprof_source *s;
	uint64_t at, end;
	bool short_body, io;
};

/* A value of a CLASS_DUMP list whose type HPROF does not define. */
struct bad_value {
	uint64_t at;           /* of its entry */
	uint16_t index;        /* in its list */
	unsigned type;
};

struct static_refs;

/* With values: the field id, name and type of c's primitive static k.
 * Kept in static_names's block, so that a class costs no more without
 * values (a dump may have a million classes). */
struct static_value {
	uint32_t id;
	const char *name;
	uint8_t type;
};

/* What a walk over a body does (hprof_index.c, hprof_threads.c). */
/* What a walk over a body does: index it (the first pass), or only chase
 * the names of threads up to `limit`. */
struct walk {
	bool chase_only;
	uint64_t limit;
};

/* ---- Reading: hprof_input.c -------------------------------------------- */

static inline uint16_t be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 |
	       (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t be64(const uint8_t *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

static inline uint64_t get_id(const struct hprof_source *s, const uint8_t *p)
{
	return s->id_size == 8 ? be64(p) : be32(p);
}

/* Reads into the buffer from off: at least n bytes unless the file ends
 * or reading fails. */
const uint8_t *hprof_in_fill(struct input *in, uint64_t off, size_t n);

/* n bytes at HPROF offset off, valid until the next read; NULL when the
 * file ends first or reading fails (io_errno says which). */
static inline const uint8_t *in_at(struct input *in, uint64_t off, size_t n)
{
	/* no buffer yet: NULL + 0 is undefined, in_fill makes one */
	if (in->buf && off >= in->buf_at && off - in->buf_at <= in->buf_len &&
	    n <= in->buf_len - (off - in->buf_at))
		return in->buf + (off - in->buf_at);
	return hprof_in_fill(in, off, n);
}

/* The cause to give when the input did not give what was asked of it
 * (read_failure in hprof_input.c). */
enum ht_error_code hprof_read_failure(const struct input *in, char *cause,
				size_t size);

const char *hprof_record_name(unsigned tag);
const char *hprof_sub_name(unsigned tag);
/* "a" or "an" before a record's name, as the name is read out. */
const char *hprof_article(const char *name);
/* Bytes after the tag of a root sub-record, 0 for other tags. */
unsigned hprof_root_body_size(unsigned tag, unsigned id);
/* The exact length of a fixed-size record, 0 for one of any length, or -1
 * for a tag HPROF does not define. */
int64_t hprof_fixed_length(unsigned tag, unsigned id);

/* Opening: the input as it is handed over, a gzip inflated, the file
 * header. 0, or -1 with err filled. */
int hprof_attach_input(struct hprof_source *s, struct ht_error *err);
int hprof_attach_gzip(struct hprof_source *s, struct ht_error *err);
int hprof_check_gzipped(struct hprof_source *s, struct ht_error *err);
int hprof_read_file_header(struct hprof_source *s, struct ht_error *err);

/* ---- Memory and failing: hprof_source.c -------------------------------- */

/* Why an allocation failed: the budget's refusal, or memory ran out. */
const char *hprof_nomem_cause(void);
/* malloc for what s keeps until it is closed, charged to the budget. */
void *hprof_alloc(struct hprof_source *s, size_t size);
char *hprof_text_alloc(struct text_store *t, size_t n);
char *hprof_text_copy(struct text_store *t, const void *s, size_t len);

/* The event pass fails: the error is kept, and given again by every
 * later call. -1. */
int hprof_fail_with(struct hprof_source *s, const struct ht_error *e,
	      struct ht_error *err);
int hprof_fail(struct hprof_source *s, struct ht_error *err,
	 enum ht_error_code code, uint64_t offset, const char *fmt, ...)
	HT_PRINTF(5, 6);
int hprof_fail_read(struct hprof_source *s, struct ht_error *err,
	      uint64_t offset);

/* ---- The index pass: hprof_index.c ------------------------------------- */

/* Notes the first damage of the index pass; what comes after it is not
 * read. Returns -1 so that callers can `return damage(...)`. */
int hprof_damage(struct hprof_source *s, enum ht_error_code code,
	   uint64_t offset, const char *fmt, ...) HT_PRINTF(4, 5);
int hprof_io_damage(struct hprof_source *s, uint64_t offset);
int hprof_nomem_damage(struct hprof_source *s, uint64_t offset);
/* A sub-record of `need` bytes from `at` (0: of a size not known yet)
 * does not fit in its body. */
int hprof_overrun(struct hprof_source *s, const struct body *b, uint64_t at,
	    unsigned sub, uint64_t need);
/* Walks the sub-records of one body. */
int hprof_walk_body(struct hprof_source *s, struct dump *d, struct body *b,
	      const struct walk *w);
/* The first pass over every record. */
void hprof_index_file(struct hprof_source *s);

/* ---- Classes: hprof_classes.c ------------------------------------------ */

const char *hprof_utf8_of(const struct hprof_source *s, uint64_t id);
char *hprof_java_name(struct hprof_source *s, const char *internal);

static inline struct hclass *class_of(struct hprof_source *s, uint64_t id)
{
	uint32_t i;

	if (s->last_class && s->last_class->id == id)
		return s->last_class;
	if (!idmap_get(&s->class_by_id, id, &i))
		return NULL;
	s->last_class = &s->classes[i];
	return s->last_class;
}

bool hprof_chain_ready(struct hprof_source *s, struct hclass *c);

/* chain_ready, without a call once the chain is known: once per object. */
static inline bool chain_known(struct hprof_source *s, struct hclass *c)
{
	return c->chain_done || hprof_chain_ready(s, c);
}

bool hprof_class_layout(struct hprof_source *s, struct hclass *c,
		  enum jvm_model m);
/* The size of java.lang.Class without statics. */
uint64_t hprof_mirror_base(struct hprof_source *s);

const uint8_t *hprof_take(struct cursor *c, size_t n);
int hprof_skip_values(struct cursor *cur, unsigned lead, uint16_t n,
		struct static_counts *counts, struct static_refs *refs,
		struct bad_value *bad);
static inline struct static_value statics_value(const struct hclass *c,
						 uint32_t k)
{
	uint32_t room = c->n_static_refs + c->n_static_values;

	return (struct static_value){
		.id = c->first_value + c->n_own_values + k,
		.name = c->static_names[room - 1 - k],
		.type = ((const uint8_t *)(c->static_names + room))[k],
	};
}

/* Bytes of a CLASS_DUMP before its constant pool. */
static inline unsigned class_dump_fixed(unsigned id)
{
	return 7 * id + 8;
}

/* A CLASS_DUMP indexed: its size, or -1 once the damage is noted. */
int hprof_index_class_dump(struct hprof_source *s, const struct body *b,
		     uint64_t at);
int64_t hprof_class_dump_size(struct hprof_source *s, const struct body *b,
			uint64_t at);

/* ---- The object layout: hprof_model.c ---------------------------------- */

void hprof_observe(struct evidence *e, uint64_t id, const uint64_t *size);
/* Collected for a layout given as well, to say when the addresses
 * contradict it. */
static inline bool collecting_evidence(const struct hprof_source *s)
{
	return s->id_size == 8 && s->evidence.pairs < MAX_EVIDENCE_PAIRS;
}

void hprof_observe_instance(struct hprof_source *s, uint64_t id,
		      struct hclass *c);
void hprof_observe_array(struct hprof_source *s, uint64_t id, unsigned type,
		   uint64_t n);
/* The layout the option asks for, or the one the addresses fit best. */
void hprof_decide_model(struct hprof_source *s, char *why, size_t size);

/* ---- Names of threads: hprof_threads.c --------------------------------- */

int hprof_chase_thread(struct hprof_source *s, uint64_t at, uint64_t id,
		 const struct hclass *c, const uint8_t *data);
int hprof_chase_string(struct hprof_source *s, uint64_t at, uint64_t id,
		 const uint8_t *data, uint32_t n, bool late);
int hprof_chase_array(struct hprof_source *s, uint64_t at, uint64_t id,
		unsigned type, uint32_t count);
void hprof_find_string_fields(struct hprof_source *s);
void hprof_name_threads(struct hprof_source *s);

/* ---- The event pass: hprof_names.c, hprof_roots.c, hprof_objects.c ----- */

/* The position of the event being made; the only one of its fields that
 * changes from event to event are set, as this runs once per object. */
static inline void place_event(struct hprof_source *s, uint64_t offset)
{
	s->last.event_index = s->events++;
	s->last.offset = offset;
}

static inline void start_event(struct hprof_source *s, struct ht_event *ev,
			       enum ht_event_type type, uint64_t offset)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	place_event(s, offset);
}

static inline ht_id thread_id(const struct thread *t)
{
	return t->object ? t->object : t->serial;
}

/* The names before the first dump: 1 an event, 0 none left, -1 failed. */
int hprof_next_name(struct hprof_source *s, struct ht_event *ev,
	      struct ht_error *err);

/* The plan of a dump's roots. 0, or -1 out of memory. */
int hprof_build_plan(struct hprof_source *s, const struct dump *d);
void hprof_container_event(struct hprof_source *s, struct ht_event *ev,
		     unsigned type, ht_id id1, ht_id id2, uint64_t offset);
int hprof_step_event(struct hprof_source *s, const struct step *st,
	       struct ht_event *ev);

/* The dump's class objects by id, to go out among its other objects. */
int hprof_sort_class_objects(struct hprof_source *s, const struct dump *d);
int hprof_next_object(struct hprof_source *s, struct ht_event *ev,
		struct ht_error *err);

#endif
