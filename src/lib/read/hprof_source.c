/*
 * hprof_source.c - Java heap dumps in HPROF form (1.0.1 and 1.0.2, 4- and
 * 8-byte ids, as jcmd GC.heap_dump, jmap and
 * -XX:+HeapDumpOnOutOfMemoryError
 * write them) as a source (source.h): each heap dump becomes one
 * C_BEGIN ... C_END container dump, with its roots in containers of the
 * matching types and its classes, instances and arrays as objects whose
 * sizes are HotSpot's (hprof_layout.c). heaptrace(1), INPUT FORMATS, gives
 * the mapping.
 *
 * HotSpot writes a dump's roots after its objects, but the event model
 * wants them first, so the file is read twice: an index pass (at open)
 * checks the framing of every record, keeps the names, frames, threads,
 * class descriptions and roots, which are few, and notes where each dump's
 * segments lie; the event pass then streams the objects of each dump,
 * after its roots. A pipe is first copied to a temporary file. Memory is
 * bounded by the names and classes, not by the objects.
 *
 * A gzipped dump (jcmd GC.heap_dump -gz=N) is inflated once through zlib
 * into a temporary file, which the passes then read as a plain dump (they
 * jump back, which a gzip stream can do only by inflating again from its
 * start). Offsets in messages are the uncompressed HPROF's. A pipe's
 * compressed bytes are first copied to a temporary file as well.
 *
 * Names come in Java's modified UTF-8 (a character past U+FFFF as two
 * 3-byte surrogates, U+0000 as C0 80) and leave as standard UTF-8
 * (utf8_from_modified), so that every output of them is valid.
 *
 * Damage found by the index pass (a truncated record, a bad tag, a length
 * that does not add up) is delivered as an error after every event of the
 * records before it. Every length is checked against the bytes the file
 * holds before anything is allocated for it.
 */
#include "lib/read/source.h"

#include "lib/common/error.h"
#include "lib/read/forms.h"
#include "lib/read/hprof_layout.h"
#include "util/alloc.h"
#include "util/idmap.h"
#include "util/membudget.h"
#include "util/utf8.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

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

static const char *record_name(unsigned tag)
{
	switch (tag) {
	case R_UTF8: return "UTF8";
	case R_LOAD_CLASS: return "LOAD_CLASS";
	case R_UNLOAD_CLASS: return "UNLOAD_CLASS";
	case R_FRAME: return "FRAME";
	case R_TRACE: return "TRACE";
	case R_ALLOC_SITES: return "ALLOC_SITES";
	case R_HEAP_SUMMARY: return "HEAP_SUMMARY";
	case R_START_THREAD: return "START_THREAD";
	case R_END_THREAD: return "END_THREAD";
	case R_HEAP_DUMP: return "HEAP_DUMP";
	case R_CPU_SAMPLES: return "CPU_SAMPLES";
	case R_CONTROL_SETTINGS: return "CONTROL_SETTINGS";
	case R_HEAP_DUMP_SEGMENT: return "HEAP_DUMP_SEGMENT";
	case R_HEAP_DUMP_END: return "HEAP_DUMP_END";
	default: return NULL;
	}
}

static const char *sub_name(unsigned tag)
{
	switch (tag) {
	case S_ROOT_UNKNOWN: return "ROOT_UNKNOWN";
	case S_ROOT_JNI_GLOBAL: return "ROOT_JNI_GLOBAL";
	case S_ROOT_JNI_LOCAL: return "ROOT_JNI_LOCAL";
	case S_ROOT_JAVA_FRAME: return "ROOT_JAVA_FRAME";
	case S_ROOT_NATIVE_STACK: return "ROOT_NATIVE_STACK";
	case S_ROOT_STICKY_CLASS: return "ROOT_STICKY_CLASS";
	case S_ROOT_THREAD_BLOCK: return "ROOT_THREAD_BLOCK";
	case S_ROOT_MONITOR_USED: return "ROOT_MONITOR_USED";
	case S_ROOT_THREAD_OBJECT: return "ROOT_THREAD_OBJECT";
	case S_CLASS_DUMP: return "CLASS_DUMP";
	case S_INSTANCE_DUMP: return "INSTANCE_DUMP";
	case S_OBJ_ARRAY_DUMP: return "OBJ_ARRAY_DUMP";
	case S_PRIM_ARRAY_DUMP: return "PRIM_ARRAY_DUMP";
	default: return NULL;
	}
}

/* "a" or "an" before a record's name, as the name is read out: "an
 * INSTANCE_DUMP", "an UNLOAD_CLASS", but "a UTF8". */
static const char *article(const char *name)
{
	bool vowel = name[0] && strchr("AEIO", name[0]);

	return vowel || strncmp(name, "UN", 2) == 0 ? "an" : "a";
}

/* Bytes after the tag of a root sub-record, 0 for other tags. */
static unsigned root_body_size(unsigned tag, unsigned id)
{
	switch (tag) {
	case S_ROOT_UNKNOWN:
	case S_ROOT_STICKY_CLASS:
	case S_ROOT_MONITOR_USED:
		return id;
	case S_ROOT_JNI_GLOBAL:
		return 2 * id;
	case S_ROOT_JNI_LOCAL:
	case S_ROOT_JAVA_FRAME:
	case S_ROOT_THREAD_OBJECT:
		return id + 8;
	case S_ROOT_NATIVE_STACK:
	case S_ROOT_THREAD_BLOCK:
		return id + 4;
	default:
		return 0;
	}
}

/* ---- Memory ------------------------------------------------------------ */

/* ALLOC_GROW for the arrays of the source s in scope, charged to the
 * memory budget. */
#define HPROF_GROW(ptr, need, cap) BUDGET_GROW(ptr, need, cap, s->charged)

/* Why an allocation failed: the budget's refusal, or memory ran out. */
static const char *nomem_cause(void)
{
	static char msg[96];

	if (!mem_budget_exceeded())
		return "out of memory";
	snprintf(msg, sizeof(msg), MEM_BUDGET_MESSAGE, mem_budget_limit());
	return msg;
}

/* ---- Text that never moves --------------------------------------------- */

/* Names are kept in blocks that are never reallocated, so a pointer to
 * one stays good while more are added. */
struct text_store {
	char **blocks;
	size_t n_blocks, cap_blocks;
	size_t used, size; /* of the last block */
	uint64_t charged;  /* to the memory budget */
};

#define TEXT_BLOCK (256u << 10)

static char *text_alloc(struct text_store *t, size_t n)
{
	char *p;

	if (t->n_blocks == 0 || t->size - t->used < n) {
		size_t size = n > TEXT_BLOCK ? n : TEXT_BLOCK;

		if (BUDGET_GROW(t->blocks, t->n_blocks + 1, t->cap_blocks,
				t->charged) < 0 ||
		    mem_budget_charge(size) < 0)
			return NULL;
		t->blocks[t->n_blocks] = malloc(size);
		if (!t->blocks[t->n_blocks]) {
			mem_budget_release(size);
			return NULL;
		}
		t->charged += size;
		t->n_blocks++;
		t->used = 0;
		t->size = size;
	}
	p = t->blocks[t->n_blocks - 1] + t->used;
	t->used += n;
	return p;
}

static char *text_copy(struct text_store *t, const void *s, size_t len)
{
	char *p = text_alloc(t, len + 1);

	if (!p)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

static void text_free(struct text_store *t)
{
	for (size_t i = 0; i < t->n_blocks; i++)
		free(t->blocks[i]);
	free(t->blocks);
	mem_budget_release(t->charged);
	memset(t, 0, sizeof(*t));
}

/* ---- What the index pass keeps ----------------------------------------- */

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

struct hprof_source {
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

	/* names of threads, chased through the heap */
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

	/* the object layout */
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

	/* the first damage the index pass met */
	bool damaged;
	uint64_t damage_offset;
	struct ht_error damage;

	struct ht_header header;
	struct ht_metadata metadata[6];
	char meta_values[6][192];

	/* the event pass */
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

/* malloc for what s keeps until it is closed, charged to the budget. */
static void *hprof_alloc(struct hprof_source *s, size_t size)
{
	void *p;

	if (mem_budget_charge(size) < 0)
		return NULL;
	p = malloc(size);
	if (p)
		s->charged += size;
	else
		mem_budget_release(size);
	return p;
}

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
static const uint8_t *in_fill(struct input *in, uint64_t off, size_t n)
{
	size_t want = n > READ_SIZE ? n : READ_SIZE;
	size_t got = 0;

	in->io_errno = 0;
	in->shrank = false;
	if (off > in->size || n > in->size - off)
		return NULL;
	if (want > in->size - off)
		want = (size_t)(in->size - off);
	if (want > in->cap) {
		if (mem_budget_charge(want - in->cap) < 0) {
			in->io_errno = ENOMEM;
			return NULL;
		}
		if (RESIZE_ARRAY(in->buf, want) < 0) {
			mem_budget_release(want - in->cap);
			in->io_errno = ENOMEM;
			return NULL;
		}
		in->cap = want;
	}
	while (got < want) {
		ssize_t r = pread(in->fd, in->buf + got, want - got,
				  in->base + (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			in->io_errno = errno;
			break;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	in->buf_at = off;
	in->buf_len = got;
	if (got < n) {
		if (!in->io_errno) {
			in->io_errno = EIO;
			in->shrank = true;
		}
		return NULL;
	}
	return in->buf;
}

/* n bytes at HPROF offset off, valid until the next read; NULL when the
 * file ends first or reading fails (io_errno says which). */
static inline const uint8_t *in_at(struct input *in, uint64_t off, size_t n)
{
	/* no buffer yet: NULL + 0 is undefined, in_fill makes one */
	if (in->buf && off >= in->buf_at && off - in->buf_at <= in->buf_len &&
	    n <= in->buf_len - (off - in->buf_at))
		return in->buf + (off - in->buf_at);
	return in_fill(in, off, n);
}

/* ---- Damage ------------------------------------------------------------ */

/* Notes the first damage of the index pass; what comes after it is not
 * read. Returns -1 so that callers can `return damage(...)`. */
static int damage(struct hprof_source *s, enum ht_error_code code,
		  uint64_t offset, const char *fmt, ...) HT_PRINTF(4, 5);

static int damage(struct hprof_source *s, enum ht_error_code code,
		  uint64_t offset, const char *fmt, ...)
{
	char cause[300];
	uint64_t lost = s->in.size > offset ? s->in.size - offset : 0;
	va_list ap;

	if (s->damaged)
		return -1;
	va_start(ap, fmt);
	vsnprintf(cause, sizeof(cause), fmt, ap);
	va_end(ap);
	err_at_offset(&s->damage, code, s->path, offset,
		      "%s; %llu %s from here to the end not read", cause,
		      (unsigned long long)lost, lost == 1 ? "byte" : "bytes");
	s->damaged = true;
	s->damage_offset = offset;
	return -1;
}

/* The cause to give when the input did not give what was asked of it:
 * memory ran out, a read failed, or the file is no longer what the first
 * pass saw: it shrank, or (no read having failed) its bytes no longer add
 * up. A disk's EIO is a failed read, not a change. */
static enum ht_error_code read_failure(const struct input *in, char *cause,
				       size_t size)
{
	if (in->io_errno == ENOMEM) {
		snprintf(cause, size, "%s", nomem_cause());
		return HT_E_NOMEM;
	}
	if (in->io_errno && !in->shrank)
		snprintf(cause, size, "cannot read: %s", strerror(in->io_errno));
	else
		snprintf(cause, size, "the file changed while it was read");
	return HT_E_IO;
}

static int io_damage(struct hprof_source *s, uint64_t offset)
{
	char cause[128];
	enum ht_error_code code = read_failure(&s->in, cause, sizeof(cause));

	damage(s, code, offset, "%s", cause);
	if (code == HT_E_IO)
		s->damage.sys_errno = s->in.io_errno ? s->in.io_errno : EIO;
	return -1;
}

static int nomem_damage(struct hprof_source *s, uint64_t offset)
{
	return damage(s, HT_E_NOMEM, offset, "%s", nomem_cause());
}

/* ---- Names ------------------------------------------------------------- */

static const char *utf8_of(const struct hprof_source *s, uint64_t id)
{
	uint32_t i;

	return idmap_get(&s->utf8, id, &i) ? s->utf8_text[i] : NULL;
}

static const struct loaded_class *loaded_of(const struct hprof_source *s,
					     uint64_t class_id)
{
	uint32_t i;

	return idmap_get(&s->loaded_by_id, class_id, &i) ? &s->loaded[i] : NULL;
}

/* The internal name of a class ("java/lang/String"), or NULL. */
static const char *class_name_of(const struct hprof_source *s,
				 uint64_t class_id)
{
	const struct loaded_class *l = loaded_of(s, class_id);

	return l ? utf8_of(s, l->name_id) : NULL;
}

static struct hclass *class_of(struct hprof_source *s, uint64_t id)
{
	uint32_t i;

	if (s->last_class && s->last_class->id == id)
		return s->last_class;
	if (!idmap_get(&s->class_by_id, id, &i))
		return NULL;
	s->last_class = &s->classes[i];
	return s->last_class;
}

static const char *primitive_name(char c)
{
	switch (c) {
	case 'Z': return "boolean";
	case 'C': return "char";
	case 'F': return "float";
	case 'D': return "double";
	case 'B': return "byte";
	case 'S': return "short";
	case 'I': return "int";
	case 'J': return "long";
	default: return NULL;
	}
}

/*
 * A class name as Java code writes it (Class.getTypeName()), which the
 * JVMTI recorder uses too: "java.lang.String", "int[]",
 * "java.lang.Object[][]"; a hidden class keeps the suffix HotSpot puts
 * after a '+' ("Foo$$Lambda$14+0x0000000800c02a00"), after a '/' as Java
 * shows it.
 */
static char *java_name(struct hprof_source *s, const char *internal)
{
	size_t dims = strspn(internal, "[");
	const char *base = internal + dims;
	const char *prim = dims && base[0] && !base[1] ? primitive_name(base[0])
						     : NULL;
	size_t len = strlen(base);
	char *out, *plus;

	if (prim) {
		base = prim;
		len = strlen(prim);
	} else if (dims && len >= 2 && base[0] == 'L' && base[len - 1] == ';') {
		base++;
		len -= 2;
	}
	out = text_alloc(&s->text, len + 2 * dims + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i++)
		out[i] = base[i] == '/' ? '.' : base[i];
	out[len] = '\0';
	plus = strrchr(out, '+');
	if (plus && plus[1] == '0' && plus[2] == 'x' && plus[3] &&
	    strspn(plus + 3, "0123456789abcdefABCDEF") == strlen(plus + 3))
		*plus = '/';
	for (size_t i = 0; i < dims; i++)
		memcpy(out + len + 2 * i, "[]", 3);
	return out;
}

/* ---- The chain of super classes ---------------------------------------- */

/* Derives k's chain from its super class's, already derived (NULL: k
 * has none): false when the chain is too deep or memory runs out. */
static bool chain_extend(struct hprof_source *s, struct hclass *k,
			 const struct hclass *super)
{
	uint64_t bytes = 0;
	uint32_t refs = 0;
	int64_t name_at = -1;

	if (super && super->depth >= MAX_CLASS_DEPTH)
		return false;
	for (uint32_t i = 0; i < k->n_fields; i++)
		refs += hprof_type_is_ref(k->types[i]);
	k->own_refs = hprof_alloc(s, (refs ? refs : 1) * sizeof(*k->own_refs));
	if (!k->own_refs)
		return false;
	refs = 0;
	for (uint32_t i = 0; i < k->n_fields; i++) {
		if (k->id == s->thread_class && k->names[i] &&
		    k->types[i] == HPROF_OBJECT &&
		    strcmp(k->names[i], "name") == 0)
			name_at = (int64_t)bytes;
		if (hprof_type_is_ref(k->types[i]))
			k->own_refs[refs++] = (uint32_t)bytes;
		bytes += hprof_type_width(k->types[i], s->id_size);
	}
	k->n_own_refs = refs;
	k->depth = super ? super->depth + 1 : 0;
	k->data_bytes = bytes + (super ? super->data_bytes : 0);
	k->n_refs = refs + (super ? super->n_refs : 0);
	/* a super class's field of that name is the one the walk from the
	 * class up met last, so it wins */
	if (super && super->thread_name_at >= 0)
		name_at = (int64_t)bytes + super->thread_name_at;
	k->thread_name_at = name_at;
	k->referent_kind = super ? super->referent_kind : 0;
	for (uint8_t i = 0; i < 4; i++)
		if (k->id == s->strength_class[i])
			k->referent_kind = (uint8_t)(HT_FIELD_SOFT + i);
	k->super_at = super ? (uint32_t)(super - s->classes) : 0;
	k->chain_done = true;
	return true;
}

/* Derives data_bytes, n_refs and thread_name_at of c and of each class
 * above it that lacks them, from the top down, once every super class is
 * known. false while one is missing (or the chain loops or is too deep);
 * the caller says why when it matters. */
static bool chain_ready(struct hprof_source *s, struct hclass *c)
{
	uint32_t chain[MAX_CLASS_DEPTH + 1];
	size_t n = 0;
	struct hclass *k = c;

	while (!k->chain_done) {
		if (n == MAX_CLASS_DEPTH + 1)
			return false;
		chain[n++] = (uint32_t)(k - s->classes);
		if (k->super_id == 0)
			break;
		k = class_of(s, k->super_id);
		if (!k)
			return false;
	}
	while (n-- > 0) {
		struct hclass *sub = &s->classes[chain[n]];

		if (!chain_extend(s, sub, sub->super_id
				  ? class_of(s, sub->super_id) : NULL))
			return false;
	}
	return true;
}

/* The field an instance of c holds at `field`: the synthetic referent of
 * its strength for Reference.referent in a Soft, Weak, Final or
 * PhantomReference, else the field itself. */
static ht_id instance_field(const struct hprof_source *s,
			    const struct hclass *c, uint32_t field)
{
	if (c->referent_kind && field == s->referent_field &&
	    s->strength_field[c->referent_kind - HT_FIELD_SOFT])
		return s->strength_field[c->referent_kind - HT_FIELD_SOFT];
	return field;
}

/* The ids an instance of c holds in its field bytes p, into refs (room for
 * c->n_refs): its own fields' first, then each super class's; and the
 * field of each into fields. */
static void instance_refs(struct hprof_source *s, const struct hclass *c,
			  const uint8_t *p, ht_id *refs, ht_id *fields)
{
	const struct hclass *k = c;
	uint64_t base = 0;
	uint32_t n = 0;

	for (;;) {
		for (uint32_t i = 0; i < k->n_own_refs; i++) {
			fields[n] = instance_field(s, c, k->first_field + i);
			refs[n++] = get_id(s, p + base + k->own_refs[i]);
		}
		if (k->super_id == 0)
			break;
		base += k->own_bytes;
		k = &s->classes[k->super_at];
	}
}

/* chain_ready, without a call once the chain is known: once per object. */
static inline bool chain_known(struct hprof_source *s, struct hclass *c)
{
	return c->chain_done || chain_ready(s, c);
}

/* The layout of c under model m, its super classes' first. false if the
 * chain is incomplete or memory runs out. */
static bool class_layout(struct hprof_source *s, struct hclass *c,
			 enum jvm_model m)
{
	struct hclass *chain[MAX_CLASS_DEPTH + 1];
	size_t n = 0;

	if (c->has_layout[m])
		return true;
	if (!chain_ready(s, c))
		return false;
	for (struct hclass *k = c; k && !k->has_layout[m];
	     k = k->super_id ? class_of(s, k->super_id) : NULL)
		chain[n++] = k;
	while (n-- > 0) {
		struct hclass *k = chain[n];
		struct hclass *super = k->super_id ? class_of(s, k->super_id)
						   : NULL;
		struct class_fields f = {
			.name = class_name_of(s, k->id),
			.n = k->n_fields,
			.types = k->types,
			.names = k->names,
		};

		if (layout_class(&jvm_layouts[m], &f,
				 super ? &super->layout[m] : NULL,
				 &k->layout[m]) < 0)
			return false;
		k->size[m] = layout_instance_size(&jvm_layouts[m],
						  &k->layout[m]);
		k->has_layout[m] = true;
	}
	return true;
}

/* ---- The index pass: records ------------------------------------------- */

static struct thread *thread_entry(struct hprof_source *s, uint32_t serial)
{
	uint32_t i;

	if (idmap_get(&s->thread_by_serial, serial, &i))
		return &s->threads[i];
	if (HPROF_GROW(s->threads, s->n_threads + 1, s->cap_threads) < 0 ||
	    idmap_add(&s->thread_by_serial, serial, (uint32_t)s->n_threads) < 0)
		return NULL;
	s->threads[s->n_threads] = (struct thread){.serial = serial};
	return &s->threads[s->n_threads++];
}

static int index_utf8(struct hprof_source *s, uint64_t at, uint32_t len)
{
	const uint8_t *p;
	const char *text;
	uint32_t n = len - s->id_size;

	if (n > MAX_UTF8)
		return damage(s, HT_E_LIMIT, at,
			      "UTF8 record of %u bytes: %u bytes of text, over "
			      "the %u MiB limit", len, n, MAX_UTF8 >> 20);
	p = in_at(&s->in, at + RECORD_HEADER_LEN, len);
	if (!p)
		return io_damage(s, at);
	if (utf8_valid((const char *)p + s->id_size, n) &&
	    !memchr(p + s->id_size, 0, n)) {
		text = text_copy(&s->text, p + s->id_size, n);
	} else {
		char *t = text_alloc(&s->text, UTF8_REPAIR_BOUND(n) + 1);

		if (t)
			t[utf8_from_modified(t, (const char *)p + s->id_size,
					     n)] = '\0';
		text = t;
	}
	if (!text || HPROF_GROW(s->utf8_text, s->n_utf8 + 1, s->cap_utf8) < 0 ||
	    idmap_add(&s->utf8, get_id(s, p), (uint32_t)s->n_utf8) < 0)
		return nomem_damage(s, at);
	s->utf8_text[s->n_utf8++] = text;
	return 0;
}

/* The classes of java.lang.ref whose instances hold a referent less than
 * strongly, by their name in the package. */
static void note_reference_class(struct hprof_source *s, const char *name,
				 uint64_t class_id)
{
	static const char *const strengths[] = {
		"SoftReference", "WeakReference", "FinalReference",
		"PhantomReference",
	};

	if (strcmp(name, "Reference") == 0)
		s->reference_class = class_id;
	for (size_t i = 0; i < 4; i++)
		if (strcmp(name, strengths[i]) == 0)
			s->strength_class[i] = class_id;
}

static int index_load_class(struct hprof_source *s, uint64_t at,
			    const uint8_t *p)
{
	unsigned id = s->id_size;
	struct loaded_class l = {
		.serial = be32(p),
		.class_id = get_id(s, p + 4),
		.name_id = get_id(s, p + 8 + id),
		.offset = at,
	};
	const char *name = utf8_of(s, l.name_id);

	if (HPROF_GROW(s->loaded, s->n_loaded + 1, s->cap_loaded) < 0 ||
	    idmap_add(&s->loaded_by_serial, l.serial,
		      (uint32_t)s->n_loaded) < 0 ||
	    idmap_add(&s->loaded_by_id, l.class_id,
		      (uint32_t)s->n_loaded) < 0)
		return nomem_damage(s, at);
	s->loaded[s->n_loaded++] = l;
	if (!name)
		return 0;
	/* what the names of threads are chased through, and what class
	 * objects and primitive arrays are instances of */
	if (strcmp(name, "java/lang/Thread") == 0)
		s->thread_class = l.class_id;
	else if (strcmp(name, "java/lang/String") == 0)
		s->string_class = l.class_id;
	else if (strcmp(name, "java/lang/Class") == 0)
		s->class_class = l.class_id;
	else if (strncmp(name, "java/lang/ref/", 14) == 0)
		note_reference_class(s, name + 14, l.class_id);
	else if (name[0] == '[' && name[1] && !name[2]) {
		static const char codes[] = "????ZCFDBSIJ";
		const char *c = strchr(codes + 4, name[1]);

		if (c)
			s->prim_array_class[c - codes] = l.class_id;
	}
	return 0;
}

/* Whether two frames are of one method at one line of one source file. */
static bool same_place(const struct frame *a, const struct frame *b)
{
	return a->class_serial == b->class_serial && a->method == b->method &&
	       a->signature == b->signature &&
	       a->source_file == b->source_file && a->line == b->line;
}

/* HPROF has frames but no methods: the frames of one method at one line
 * (class, name, signature, source file and line) take the id of the first
 * of them as the method's, which is named with its file and line. */
static int method_of(struct hprof_source *s, struct frame *fr)
{
	uint64_t key = fr->class_serial * 0x9e3779b97f4a7c15ULL ^
		       fr->method * 0xc2b2ae3d27d4eb4fULL ^
		       fr->signature * 0x165667b19e3779f9ULL ^
		       fr->source_file * 0x27d4eb2f165667c5ULL ^
		       (uint64_t)(uint32_t)fr->line * 0x94d049bb133111ebULL;
	uint32_t i;

	fr->method_id = fr->id;
	key |= 1; /* 0 is an id of its own */
	if (idmap_get(&s->method_by_key, key, &i)) {
		const struct frame *first = &s->frames[i];

		/* a key shared by another method keeps the frame's own id */
		if (same_place(first, fr))
			fr->method_id = first->id;
		return 0;
	}
	return idmap_add(&s->method_by_key, key, (uint32_t)s->n_frames);
}

static int index_frame(struct hprof_source *s, uint64_t at, const uint8_t *p)
{
	unsigned id = s->id_size;
	struct frame fr = {
		.id = get_id(s, p),
		.method = get_id(s, p + id),
		.signature = get_id(s, p + 2 * id),
		.source_file = get_id(s, p + 3 * id),
		.class_serial = be32(p + 4 * id),
		.line = (int32_t)be32(p + 4 * id + 4),
	};

	if (HPROF_GROW(s->frames, s->n_frames + 1, s->cap_frames) < 0 ||
	    idmap_add(&s->frame_by_id, fr.id, (uint32_t)s->n_frames) < 0 ||
	    method_of(s, &fr) < 0)
		return nomem_damage(s, at);
	s->frames[s->n_frames++] = fr;
	return 0;
}

static int index_trace(struct hprof_source *s, uint64_t at, uint32_t len)
{
	const uint8_t *p;
	struct trace t;

	if (len - 12 > (uint64_t)MAX_TRACE_FRAMES * s->id_size)
		return damage(s, HT_E_LIMIT, at,
			      "TRACE record of %u bytes: more than %u frames",
			      len, MAX_TRACE_FRAMES);
	p = in_at(&s->in, at + RECORD_HEADER_LEN, len);
	if (!p)
		return io_damage(s, at);
	t.serial = be32(p);
	t.thread_serial = be32(p + 4);
	t.n_frames = be32(p + 8);
	t.first = s->n_frame_ids;
	if ((uint64_t)t.n_frames * s->id_size != len - 12)
		return damage(s, HT_E_CORRUPT, at,
			      "TRACE record of %u bytes holds %u frames", len,
			      t.n_frames);
	if (HPROF_GROW(s->frame_ids,
		       s->n_frame_ids + t.n_frames, s->cap_frame_ids) < 0 ||
	    HPROF_GROW(s->traces, s->n_traces + 1, s->cap_traces) < 0 ||
	    idmap_add(&s->trace_by_serial, t.serial,
		      (uint32_t)s->n_traces) < 0 ||
	    idmap_add(&s->trace_by_thread, t.thread_serial,
		      (uint32_t)s->n_traces) < 0)
		return nomem_damage(s, at);
	for (uint32_t i = 0; i < t.n_frames; i++)
		s->frame_ids[s->n_frame_ids++] =
			get_id(s, p + 12 + i * s->id_size);
	s->traces[s->n_traces++] = t;
	return 0;
}

static int index_start_thread(struct hprof_source *s, uint64_t at,
			      const uint8_t *p)
{
	unsigned id = s->id_size;
	struct thread *t = thread_entry(s, be32(p));

	if (!t)
		return nomem_damage(s, at);
	if (!t->object)
		t->object = get_id(s, p + 4);
	if (!t->has_trace) {
		t->has_trace = true;
		t->trace_serial = be32(p + 4 + id);
	}
	t->name_id = get_id(s, p + 8 + id);
	return 0;
}

/* The exact length of a fixed-size record, 0 for one of any length, or -1
 * for a tag HPROF does not define. */
static int64_t fixed_length(unsigned tag, unsigned id)
{
	switch (tag) {
	case R_LOAD_CLASS: return 8 + 2 * id;
	case R_UNLOAD_CLASS: return 4;
	case R_FRAME: return 8 + 4 * id;
	case R_START_THREAD: return 8 + 4 * id;
	case R_END_THREAD: return 4;
	case R_HEAP_DUMP_END: return 0;
	case R_UTF8:
	case R_TRACE:
	case R_ALLOC_SITES:
	case R_HEAP_SUMMARY:
	case R_CPU_SAMPLES:
	case R_CONTROL_SETTINGS:
	case R_HEAP_DUMP:
	case R_HEAP_DUMP_SEGMENT:
		return 0;
	default:
		return -1;
	}
}

/* ---- The index pass: heap dump bodies ---------------------------------- */

/* Where a sub-record must end: the end of its record body, or of the file
 * when the record claims more than that. */
struct body {
	uint64_t end;          /* of the intact part */
	uint64_t claimed_end;  /* as the record header says */
	uint64_t record_at;
	unsigned tag;
};

/* A sub-record of `need` bytes from `at` (0: of a size not known yet)
 * does not fit in its body. */
static int overrun(struct hprof_source *s, const struct body *b, uint64_t at,
		   unsigned sub, uint64_t need)
{
	const char *what = sub_name(sub);

	if (!need && b->end < b->claimed_end)
		return damage(s, HT_E_TRUNCATED, at,
			      "file ends inside %s %s sub-record",
			      article(what), what);
	if (!need)
		return damage(s, HT_E_CORRUPT, at,
			      "%s sub-record runs past the end of its %s "
			      "record", what, record_name(b->tag));
	if (b->end < b->claimed_end)
		return damage(s, HT_E_TRUNCATED, at,
			      "file ends inside %s %s sub-record (%llu of %llu "
			      "bytes)", article(what), what,
			      (unsigned long long)(b->end - at),
			      (unsigned long long)need);
	return damage(s, HT_E_CORRUPT, at,
		      "%s sub-record of %llu bytes runs past the end of its "
		      "%s record (%llu bytes left)", what,
		      (unsigned long long)need, record_name(b->tag),
		      (unsigned long long)(b->end - at));
}

static int add_root(struct hprof_source *s, struct dump *d, uint64_t at,
		    unsigned tag, const uint8_t *p)
{
	unsigned id = s->id_size;
	struct root r = {.tag = (uint8_t)tag, .object = get_id(s, p),
			 .depth = -1, .offset = at};

	switch (tag) {
	case S_ROOT_JNI_LOCAL:
	case S_ROOT_JAVA_FRAME:
		r.thread_serial = be32(p + id);
		r.depth = (int32_t)be32(p + id + 4);
		break;
	case S_ROOT_NATIVE_STACK:
	case S_ROOT_THREAD_BLOCK:
		r.thread_serial = be32(p + id);
		break;
	case S_ROOT_THREAD_OBJECT: {
		struct thread *t;

		r.thread_serial = be32(p + id);
		t = thread_entry(s, r.thread_serial);
		if (!t)
			return nomem_damage(s, at);
		if (r.object)
			t->object = r.object;
		if (!t->has_trace) {
			t->has_trace = true;
			t->trace_serial = be32(p + id + 4);
		}
		break;
	}
	default:
		break;
	}
	if (HPROF_GROW(d->roots, d->n_roots + 1, d->cap_roots) < 0)
		return nomem_damage(s, at);
	d->roots[d->n_roots++] = r;
	return 0;
}

/* Reads a CLASS_DUMP piece by piece, which stops at the first piece that
 * runs past the body (short_body) or cannot be read (io). */
struct cursor {
	struct hprof_source *s;
	uint64_t at, end;
	bool short_body, io;
};

static const uint8_t *take(struct cursor *c, size_t n)
{
	const uint8_t *p;

	if (c->short_body || c->io)
		return NULL;
	if (c->end - c->at < n) {
		c->short_body = true;
		return NULL;
	}
	p = in_at(&c->s->in, c->at, n);
	if (!p) {
		c->io = true;
		return NULL;
	}
	c->at += n;
	return p;
}

/* A value of a CLASS_DUMP list whose type HPROF does not define. */
struct bad_value {
	uint64_t at;           /* of its entry */
	uint16_t index;        /* in its list */
	unsigned type;
};

/* The names of a class's static reference fields, in the dump's order;
 * with values, the names of its primitive ones from the end of names,
 * and their types after it (statics_value). */
struct static_refs {
	const char **names;    /* room for every static */
	uint32_t n;
	uint8_t *types;        /* NULL, or room for every static */
	uint32_t room, n_values;
};

/* Skips n values of a CLASS_DUMP list whose entries are `lead` bytes then
 * a type then a value; counts the statics into counts, and names their
 * references into refs, when given. On a type HPROF does not define, *bad
 * says where and which. */
static int skip_values(struct cursor *cur, unsigned lead, uint16_t n,
		       struct static_counts *counts, struct static_refs *refs,
		       struct bad_value *bad)
{
	struct hprof_source *s = cur->s;

	for (uint16_t i = 0; i < n; i++) {
		uint64_t entry_at = cur->at;
		const uint8_t *p = take(cur, lead + 1);
		const char *name;
		unsigned t, w;

		if (!p)
			return -1;
		t = p[lead];
		w = hprof_type_width(t, s->id_size);
		if (!w) {
			*bad = (struct bad_value){entry_at, i, t};
			return -1;
		}
		if (counts) {
			/* HotSpot lists pseudo-statics that the mirror
			 * does not hold: "<resolved_references>",
			 * "<init_lock>" */
			name = utf8_of(s, get_id(s, p));
			if (!name || name[0] != '<') {
				if (hprof_type_is_ref(t))
					counts->refs++;
				else
					counts->by_width[w]++;
			}
		}
		if (refs && hprof_type_is_ref(t)) {
			refs->names[refs->n++] = utf8_of(s, get_id(s, p));
		} else if (refs && refs->types) {
			refs->names[refs->room - 1 - refs->n_values] =
				utf8_of(s, get_id(s, p));
			refs->types[refs->n_values++] = (uint8_t)t;
		}
		if (!take(cur, w))
			return -1;
	}
	return 0;
}

/* With values: the field id, name and type of c's primitive static k.
 * Kept in static_names's block, so that a class costs no more without
 * values (a dump may have a million classes). */
struct static_value {
	uint32_t id;
	const char *name;
	uint8_t type;
};

static struct static_value statics_value(const struct hclass *c, uint32_t k)
{
	uint32_t room = c->n_static_refs + c->n_static_values;

	return (struct static_value){
		.id = c->first_value + c->n_own_values + k,
		.name = c->static_names[room - 1 - k],
		.type = ((const uint8_t *)(c->static_names + room))[k],
	};
}

/* Bytes of a CLASS_DUMP before its constant pool. */
static unsigned class_dump_fixed(unsigned id)
{
	return 7 * id + 8;
}

/* Field ids for c's own instance reference fields (n_refs of them) and
 * its static ones, one after the other in the order classes are indexed,
 * so that they are dense and an object's fields take a byte each in the
 * trace. -1 when there would be more than 2^32 - 1. */
static int give_field_ids(struct hprof_source *s, struct hclass *c,
			  uint32_t n_refs)
{
	uint32_t first = s->next_field ? s->next_field : HT_LINK_ID_END;

	if (UINT32_MAX - first < (uint64_t)n_refs + c->n_static_refs +
				 c->n_own_values + c->n_static_values)
		return -1;
	c->first_field = first;
	c->first_static = first + n_refs;
	/* after the references, so that a trace without values numbers
	 * them as before values existed */
	c->first_value = c->first_static + c->n_static_refs;
	/* then the primitive statics (statics_value) */
	s->next_field = c->first_value + c->n_own_values + c->n_static_values;
	return 0;
}

static int index_class_dump(struct hprof_source *s, const struct body *b,
			    uint64_t at)
{
	struct cursor cur = {.s = s, .at = at + 1, .end = b->end};
	unsigned id = s->id_size;
	struct hclass c = {.offset = at, .thread_name_at = -1};
	const uint8_t *p = take(&cur, class_dump_fixed(id) + 2);
	struct bad_value bad = {0};
	struct static_refs statics = {0};
	const char *list = "constant pool entry";
	uint16_t n;
	uint32_t dummy, n_refs = 0;
	bool known;

	if (!p)
		goto short_body;
	c.id = get_id(s, p);
	c.super_id = get_id(s, p + id + 4);
	c.loader = get_id(s, p + 2 * id + 4);
	c.signers = get_id(s, p + 3 * id + 4);
	c.domain = get_id(s, p + 4 * id + 4);
	n = be16(p + class_dump_fixed(id));
	if (skip_values(&cur, 2, n, NULL, NULL, &bad) < 0)
		goto bad;
	if (!(p = take(&cur, 2)))
		goto short_body;
	list = "static field";
	/* the first CLASS_DUMP of a class is the one kept (below) */
	known = idmap_get(&s->class_by_id, c.id, &dummy);
	if (!known) {
		statics.room = be16(p);
		statics.names = hprof_alloc(s, (be16(p) ? be16(p) : 1) *
					       (sizeof(*statics.names) +
						(s->want_values ? 1 : 0)));
		if (!statics.names)
			return nomem_damage(s, at);
		c.static_names = statics.names;
		if (s->want_values)
			statics.types = (uint8_t *)(statics.names +
						    statics.room);
	}
	if (skip_values(&cur, id, be16(p), &c.statics,
			known ? NULL : &statics, &bad) < 0)
		goto bad;
	c.n_static_refs = statics.n;
	c.n_static_values = statics.n_values;
	if (!(p = take(&cur, 2)))
		goto short_body;
	c.n_fields = be16(p);
	if (!(p = take(&cur, (size_t)c.n_fields * (id + 1))))
		goto short_body;
	if (known)
		/* described by an earlier dump: the first wins; the walk goes
		 * on past this one (0 would read it again, for ever) */
		return (int)(cur.at - at);
	c.types = hprof_alloc(s, c.n_fields ? c.n_fields : 1);
	c.names = hprof_alloc(s, (c.n_fields ? c.n_fields : 1) *
				 sizeof(*c.names));
	if (!c.types || !c.names)
		goto nomem;
	for (uint32_t i = 0; i < c.n_fields; i++) {
		const uint8_t *f = p + i * (id + 1);
		unsigned w = hprof_type_width(f[id], id);

		if (!w) {
			free(c.types);
			free(c.names);
			free(c.static_names);
			return damage(s, HT_E_CORRUPT, at,
				      "CLASS_DUMP of class 0x%llx: instance "
				      "field %u has type %u, not an HPROF type",
				      (unsigned long long)c.id, i, f[id]);
		}
		c.types[i] = f[id];
		c.names[i] = utf8_of(s, get_id(s, f));
		c.own_bytes += w;
		n_refs += hprof_type_is_ref(f[id]);
		c.n_own_values += s->want_values && !hprof_type_is_ref(f[id]);
	}
	if (give_field_ids(s, &c, n_refs) < 0)
		goto nomem;
	if (HPROF_GROW(s->classes, s->n_classes + 1, s->cap_classes) < 0 ||
	    idmap_add(&s->class_by_id, c.id, (uint32_t)s->n_classes) < 0)
		goto nomem;
	s->last_class = NULL; /* the array may have moved */
	s->classes[s->n_classes++] = c;
	return (int)(cur.at - at);
nomem:
	free(c.types);
	free(c.names);
	free(c.static_names);
	return nomem_damage(s, at);
bad:
	free(c.static_names);
	c.static_names = NULL;
	if (!cur.short_body && !cur.io)
		return damage(s, HT_E_CORRUPT, bad.at,
			      "CLASS_DUMP of class 0x%llx: %s %u has type %u, "
			      "not an HPROF type", (unsigned long long)c.id,
			      list, bad.index, bad.type);
short_body:
	free(c.static_names);
	if (cur.io)
		return io_damage(s, at);
	return overrun(s, b, at, S_CLASS_DUMP, 0);
}

/* ---- The index pass: evidence of the object layout --------------------- */

static void observe(struct evidence *e, uint64_t id, const uint64_t *size)
{
	if (e->have_prev && id > e->prev_id && e->pairs < MAX_EVIDENCE_PAIRS) {
		uint64_t gap = id - e->prev_id;

		e->pairs++;
		for (int m = 0; m < 3; m++) {
			if (gap < e->prev_size[m])
				e->overlaps[m]++;
			else if (gap == e->prev_size[m])
				e->exact[m]++;
		}
	}
	e->have_prev = size != NULL;
	if (size) {
		e->prev_id = id;
		memcpy(e->prev_size, size, sizeof(e->prev_size));
	}
}

/* Collected for a layout given as well, to say when the addresses
 * contradict it. */
static bool collecting_evidence(const struct hprof_source *s)
{
	return s->id_size == 8 && s->evidence.pairs < MAX_EVIDENCE_PAIRS;
}

static void observe_instance(struct hprof_source *s, uint64_t id,
			     struct hclass *c)
{
	uint64_t size[3];

	for (int m = 0; m < 3; m++) {
		if (!c || !class_layout(s, c, (enum jvm_model)m)) {
			observe(&s->evidence, id, NULL);
			return;
		}
		size[m] = c->size[m];
	}
	observe(&s->evidence, id, size);
}

static void observe_array(struct hprof_source *s, uint64_t id, unsigned type,
			  uint64_t n)
{
	uint64_t size[3];

	for (int m = 0; m < 3; m++)
		size[m] = layout_array_size(&jvm_layouts[m], type, n);
	observe(&s->evidence, id, size);
}

/* ---- The index pass: names of threads ---------------------------------- */

static struct wanted_string *want_string(struct hprof_source *s, uint64_t id)
{
	uint32_t i;

	if (idmap_get(&s->string_slot, id, &i))
		return &s->strings_wanted[i];
	if (HPROF_GROW(s->strings_wanted,
		       s->n_strings_wanted + 1, s->cap_strings_wanted) < 0 ||
	    idmap_add(&s->string_slot, id, (uint32_t)s->n_strings_wanted) < 0)
		return NULL;
	s->strings_wanted[s->n_strings_wanted] =
		(struct wanted_string){.id = id};
	return &s->strings_wanted[s->n_strings_wanted++];
}

static int want_array(struct hprof_source *s, uint64_t id, uint8_t coder,
		      uint32_t *slot)
{
	if (idmap_get(&s->array_slot, id, slot))
		return 0;
	if (HPROF_GROW(s->arrays_wanted,
		       s->n_arrays_wanted + 1, s->cap_arrays_wanted) < 0 ||
	    idmap_add(&s->array_slot, id, (uint32_t)s->n_arrays_wanted) < 0)
		return -1;
	s->arrays_wanted[s->n_arrays_wanted] =
		(struct wanted_array){.id = id, .coder = coder};
	*slot = (uint32_t)s->n_arrays_wanted++;
	return 0;
}

/* A Thread's INSTANCE_DUMP: its name String is wanted. */
static int chase_thread(struct hprof_source *s, uint64_t at, uint64_t id,
			const struct hclass *c, const uint8_t *data)
{
	struct wanted_string *w;
	uint64_t string;
	uint32_t dummy;

	if (idmap_get(&s->chase_by_thread, id, &dummy))
		return 0;
	string = get_id(s, data + c->thread_name_at);
	if (!string)
		return 0;
	w = want_string(s, string);
	if (!w || HPROF_GROW(s->chases, s->n_chases + 1, s->cap_chases) < 0 ||
	    idmap_add(&s->chase_by_thread, id, (uint32_t)s->n_chases) < 0)
		return -1;
	s->chases[s->n_chases++] = (struct name_chase){
		.thread = id,
		.thread_at = at,
		.string = (uint32_t)(w - s->strings_wanted),
	};
	return 0;
}

/* A String's INSTANCE_DUMP: its value array is wanted if it is. */
static int chase_string(struct hprof_source *s, uint64_t at, uint64_t id,
			const uint8_t *data, uint32_t n, bool late)
{
	struct wanted_string *w;
	uint32_t i, slot;
	uint8_t coder = 0;

	if (!idmap_get(&s->string_slot, id, &i))
		return 0;
	w = &s->strings_wanted[i];
	if (w->found || s->string_value_at < 0 ||
	    (uint64_t)s->string_value_at + s->id_size > n)
		return 0;
	if (s->string_coder_at >= 0 && (uint64_t)s->string_coder_at < n)
		coder = data[s->string_coder_at];
	if (want_array(s, get_id(s, data + s->string_value_at), coder,
		       &slot) < 0)
		return -1;
	w = &s->strings_wanted[i];
	w->found = true;
	w->found_late = late;
	w->at = at;
	w->array = slot;
	w->coder = coder;
	return 0;
}

/*
 * The text of a String's array: a byte[] of Latin-1 (coder 0) or of
 * UTF-16 in the machine's order, little-endian on every JVM platform
 * heaptrace knows (coder 1), or a char[] (before JDK 9), which HPROF
 * writes big-endian (util/utf8.h, utf8_from_units).
 */
static const char *decode_name(struct hprof_source *s, const uint8_t *p,
			       uint32_t n, unsigned type, unsigned coder)
{
	char out[UTF8_REPAIR_BOUND(MAX_THREAD_NAME * 4)];
	enum utf8_units units = type == HPROF_CHAR ? UNITS_UTF16BE :
				coder == 1 ? UNITS_UTF16LE : UNITS_LATIN1;
	size_t len = utf8_from_units(out, p, n, units, MAX_THREAD_NAME, NULL);

	return text_copy(&s->text, out, len);
}

/* A PRIM_ARRAY_DUMP: the text of a thread's name if it is wanted. */
static int chase_array(struct hprof_source *s, uint64_t at, uint64_t id,
		       unsigned type, uint32_t count)
{
	struct wanted_array *w;
	unsigned width = hprof_type_width(type, s->id_size);
	uint32_t i, keep = count;
	const uint8_t *p;

	if (!idmap_get(&s->array_slot, id, &i) || s->arrays_wanted[i].found)
		return 0;
	if (type != HPROF_BYTE && type != HPROF_CHAR)
		return 0;
	if (keep > MAX_THREAD_NAME * 2)
		keep = MAX_THREAD_NAME * 2;
	p = in_at(&s->in, at + 1 + s->id_size + 9, (size_t)keep * width);
	if (!p)
		return -1;
	w = &s->arrays_wanted[i];
	w->text = decode_name(s, p, keep * width, type, w->coder);
	if (!w->text)
		return -1;
	w->found = true;
	return 0;
}

static void find_string_fields(struct hprof_source *s);

/* ---- The index pass: one heap dump body -------------------------------- */

/* What a walk over a body does: index it (the first pass), or only chase
 * the names of threads up to `limit`. */
struct walk {
	bool chase_only;
	uint64_t limit;
};

/* The instance part of a body walk. Returns the sub-record's size, or -1
 * once the damage is noted. */
static int64_t walk_instance(struct hprof_source *s, const struct body *b,
			     uint64_t at, const struct walk *w)
{
	unsigned id = s->id_size;
	unsigned head = 1 + 2 * id + 8;
	const uint8_t *p;
	struct hclass *c;
	uint64_t obj, class_id;
	uint32_t n;

	if (b->end - at < head)
		return overrun(s, b, at, S_INSTANCE_DUMP, head);
	p = in_at(&s->in, at, head);
	if (!p)
		return io_damage(s, at);
	obj = get_id(s, p + 1);
	class_id = get_id(s, p + 5 + id);
	n = be32(p + 5 + 2 * id);
	if (b->end - at - head < n)
		return overrun(s, b, at, S_INSTANCE_DUMP, (uint64_t)head + n);
	c = class_of(s, class_id);
	if (!w->chase_only && collecting_evidence(s))
		observe_instance(s, obj, c);
	if (!c || !chain_known(s, c) || n != c->data_bytes ||
	    n > MAX_INSTANCE_DATA)
		return (int64_t)head + n;
	if (c->thread_name_at >= 0 && !w->chase_only) {
		p = in_at(&s->in, at + head, n);
		if (!p)
			return io_damage(s, at);
		if (chase_thread(s, at, obj, c, p) < 0)
			return nomem_damage(s, at);
	} else if (class_id == s->string_class && s->n_strings_wanted) {
		if (s->string_value_at == STRING_FIELDS_UNKNOWN)
			find_string_fields(s);
		p = in_at(&s->in, at + head, n);
		if (!p)
			return io_damage(s, at);
		if (chase_string(s, at, obj, p, n, w->chase_only) < 0)
			return nomem_damage(s, at);
	}
	return (int64_t)head + n;
}

static int64_t walk_array(struct hprof_source *s, const struct body *b,
			  uint64_t at, unsigned tag, const struct walk *w)
{
	unsigned id = s->id_size;
	unsigned head = tag == S_OBJ_ARRAY_DUMP ? 1 + 2 * id + 8 : 1 + id + 9;
	const uint8_t *p;
	uint64_t obj, bytes;
	uint32_t count;
	unsigned type, width;

	if (b->end - at < head)
		return overrun(s, b, at, tag, head);
	p = in_at(&s->in, at, head);
	if (!p)
		return io_damage(s, at);
	obj = get_id(s, p + 1);
	count = be32(p + 5 + id);
	type = tag == S_OBJ_ARRAY_DUMP ? HPROF_OBJECT : p[9 + id];
	width = hprof_type_width(type, id);
	if (!width || (tag == S_PRIM_ARRAY_DUMP && hprof_type_is_ref(type)))
		return damage(s, HT_E_CORRUPT, at,
			      "PRIM_ARRAY_DUMP of 0x%llx: element type %u, not "
			      "a primitive HPROF type",
			      (unsigned long long)obj, type);
	bytes = (uint64_t)count * width;
	if (b->end - at - head < bytes)
		return overrun(s, b, at, tag, head + bytes);
	if (!w->chase_only && collecting_evidence(s))
		observe_array(s, obj, type, count);
	if (tag == S_PRIM_ARRAY_DUMP && s->n_arrays_wanted &&
	    chase_array(s, at, obj, type, count) < 0)
		return s->in.io_errno ? io_damage(s, at) : nomem_damage(s, at);
	return (int64_t)(head + bytes);
}

/* Where the CLASS_DUMP at `at`, of `size` bytes, lies: the event pass
 * delivers class objects in the order of their ids, not the file's. */
static int64_t note_class_dump(struct hprof_source *s, struct dump *d,
			       const struct body *b, uint64_t at, int size)
{
	const uint8_t *p;

	if (size <= 0)
		return size;
	p = in_at(&s->in, at + 1, s->id_size);
	if (!p)
		return io_damage(s, at);
	if (HPROF_GROW(d->classes, d->n_classes + 1, d->cap_classes) < 0)
		return nomem_damage(s, at);
	d->classes[d->n_classes++] = (struct class_ref){
		.id = get_id(s, p),
		.offset = at,
		.size = (uint64_t)size,
		.end = b->end,
	};
	return size;
}

static int64_t walk_sub_record(struct hprof_source *s, struct dump *d,
			       const struct body *b, uint64_t at,
			       const struct walk *w)
{
	const uint8_t *p = in_at(&s->in, at, 1);
	unsigned tag, size;

	if (!p)
		return io_damage(s, at);
	tag = p[0];
	switch (tag) {
	case S_CLASS_DUMP:
		/* a class object is no neighbour of the instances */
		observe(&s->evidence, 0, NULL);
		return note_class_dump(s, d, b, at, index_class_dump(s, b, at));
	case S_INSTANCE_DUMP:
		return walk_instance(s, b, at, w);
	case S_OBJ_ARRAY_DUMP:
	case S_PRIM_ARRAY_DUMP:
		return walk_array(s, b, at, tag, w);
	default:
		size = root_body_size(tag, s->id_size);
		if (!size)
			return damage(s, HT_E_CORRUPT, at,
				      "unknown heap dump sub-record tag 0x%02x",
				      tag);
		if (b->end - at < 1 + size)
			return overrun(s, b, at, tag, 1 + size);
		if (w->chase_only)
			return 1 + size;
		p = in_at(&s->in, at, 1 + size);
		if (!p)
			return io_damage(s, at);
		if (add_root(s, d, at, tag, p + 1) < 0)
			return -1;
		return 1 + size;
	}
}

/* The size of the CLASS_DUMP at `at` in a walk that only chases names:
 * read again, the first pass having checked it. */
static int64_t class_dump_size(struct hprof_source *s, const struct body *b,
			       uint64_t at)
{
	struct cursor cur = {.s = s, .at = at + 1, .end = b->end};
	unsigned id = s->id_size;
	const uint8_t *p = take(&cur, class_dump_fixed(id) + 2);
	struct bad_value bad;

	if (!p || skip_values(&cur, 2, be16(p + class_dump_fixed(id)), NULL, NULL,
			      &bad) < 0 ||
	    !(p = take(&cur, 2)) ||
	    skip_values(&cur, id, be16(p), NULL, NULL, &bad) < 0 ||
	    !(p = take(&cur, 2)) ||
	    !take(&cur, (size_t)be16(p) * (id + 1)))
		return -1;
	return (int64_t)(cur.at - at);
}

/* Walks the sub-records of one body. The first pass clips the segment to
 * what is intact; a chasing walk stops at w->limit. */
static int walk_body(struct hprof_source *s, struct dump *d, struct body *b,
		     const struct walk *w)
{
	uint64_t at = b->record_at + RECORD_HEADER_LEN, body;

	while (at < b->end && (!w->chase_only || at < w->limit)) {
		int64_t n;
		const uint8_t *p = in_at(&s->in, at, 1);

		if (w->chase_only && p && p[0] == S_CLASS_DUMP)
			n = class_dump_size(s, b, at);
		else
			n = walk_sub_record(s, d, b, at, w);
		if (n < 0) {
			b->end = at;
			return -1;
		}
		at += (uint64_t)n;
	}
	body = b->record_at + RECORD_HEADER_LEN;
	if (!w->chase_only && b->end < b->claimed_end)
		return damage(s, HT_E_TRUNCATED, b->end,
			      "file ends inside the %s record at byte %llu "
			      "(%llu of its %llu bytes)", record_name(b->tag),
			      (unsigned long long)b->record_at,
			      (unsigned long long)(b->end - body),
			      (unsigned long long)(b->claimed_end - body));
	return 0;
}

/* ---- The index pass: the record sequence ------------------------------- */

static struct dump *open_dump(struct hprof_source *s, uint64_t at)
{
	if (HPROF_GROW(s->dumps, s->n_dumps + 1, s->cap_dumps) < 0)
		return NULL;
	memset(&s->dumps[s->n_dumps], 0, sizeof(s->dumps[0]));
	s->dumps[s->n_dumps].offset = at;
	return &s->dumps[s->n_dumps++];
}

static int index_heap_record(struct hprof_source *s, uint64_t at,
			     unsigned tag, uint32_t len)
{
	struct walk w = {0};
	struct dump *d;
	struct body b = {
		.record_at = at,
		.tag = tag,
		.claimed_end = at + RECORD_HEADER_LEN + len,
	};
	int rc;

	b.end = b.claimed_end < s->in.size ? b.claimed_end : s->in.size;
	if (tag == R_HEAP_DUMP || !s->in_segments) {
		if (tag == R_HEAP_DUMP && s->in_segments)
			return damage(s, HT_E_CORRUPT, at,
				      "HEAP_DUMP record inside a heap dump of "
				      "segments (no HEAP_DUMP_END before it)");
		d = open_dump(s, at);
		if (!d)
			return nomem_damage(s, at);
		d->begin_us = s->record_us;
		s->in_segments = tag == R_HEAP_DUMP_SEGMENT;
	}
	d = &s->dumps[s->n_dumps - 1];
	rc = walk_body(s, d, &b, &w);
	if (b.end > at + RECORD_HEADER_LEN) {
		if (HPROF_GROW(d->segs, d->n_segs + 1, d->cap_segs) < 0)
			return nomem_damage(s, at);
		d->segs[d->n_segs++] = (struct segment){
			.offset = at + RECORD_HEADER_LEN,
			.length = b.end - at - RECORD_HEADER_LEN,
		};
	}
	if (rc == 0 && tag == R_HEAP_DUMP) {
		d->closed = true;
		d->end_offset = at;
		d->end_us = s->record_us;
	}
	return rc;
}

static int index_record(struct hprof_source *s, uint64_t at, unsigned tag,
			uint32_t len)
{
	const uint8_t *p;

	switch (tag) {
	case R_UTF8:
		if (len < s->id_size)
			return damage(s, HT_E_CORRUPT, at,
				      "UTF8 record of %u bytes, shorter than "
				      "an id", len);
		return index_utf8(s, at, len);
	case R_TRACE:
		if (len < 12)
			return damage(s, HT_E_CORRUPT, at,
				      "TRACE record of %u bytes, shorter than "
				      "its header", len);
		return index_trace(s, at, len);
	case R_HEAP_DUMP:
	case R_HEAP_DUMP_SEGMENT:
		return index_heap_record(s, at, tag, len);
	case R_HEAP_DUMP_END:
		/* an END with no dump open ends nothing: some writers end
		 * dumps of one HEAP_DUMP record with one */
		if (s->in_segments) {
			s->dumps[s->n_dumps - 1].closed = true;
			s->dumps[s->n_dumps - 1].end_offset = at;
			s->dumps[s->n_dumps - 1].end_us = s->record_us;
			s->in_segments = false;
		}
		return 0;
	case R_LOAD_CLASS:
	case R_FRAME:
	case R_START_THREAD:
		p = in_at(&s->in, at + RECORD_HEADER_LEN, len);
		if (!p)
			return io_damage(s, at);
		if (tag == R_LOAD_CLASS)
			return index_load_class(s, at, p);
		if (tag == R_FRAME)
			return index_frame(s, at, p);
		return index_start_thread(s, at, p);
	default:
		return 0; /* records of no use here: their length was checked */
	}
}

/* The first pass over every record. Damage stops it (and is noted); only
 * running out of memory for the damage itself cannot happen. */
static void index_file(struct hprof_source *s)
{
	uint64_t at = FILE_HEADER_LEN;

	while (at < s->in.size) {
		const uint8_t *p;
		unsigned tag;
		uint32_t len;
		int64_t fixed;

		if (s->in.size - at < RECORD_HEADER_LEN) {
			damage(s, HT_E_TRUNCATED, at,
			       "file ends inside a record header (%llu of %d "
			       "bytes)", (unsigned long long)(s->in.size - at),
			       RECORD_HEADER_LEN);
			return;
		}
		p = in_at(&s->in, at, RECORD_HEADER_LEN);
		if (!p) {
			io_damage(s, at);
			return;
		}
		tag = p[0];
		s->record_us = be32(p + 1);
		len = be32(p + 5);
		fixed = fixed_length(tag, s->id_size);
		if (fixed < 0) {
			damage(s, HT_E_CORRUPT, at,
			       "unknown record tag 0x%02x", tag);
			return;
		}
		if (fixed > 0 && len != (uint64_t)fixed) {
			damage(s, HT_E_CORRUPT, at,
			       "%s record of %u bytes (it must have %lld)",
			       record_name(tag), len, (long long)fixed);
			return;
		}
		if (tag != R_HEAP_DUMP && tag != R_HEAP_DUMP_SEGMENT &&
		    s->in.size - at - RECORD_HEADER_LEN < len) {
			damage(s, HT_E_TRUNCATED, at,
			       "file ends inside %s %s record (%llu of %u "
			       "bytes)", article(record_name(tag)),
			       record_name(tag),
			       (unsigned long long)(s->in.size - at -
						    RECORD_HEADER_LEN), len);
			return;
		}
		if (index_record(s, at, tag, len) < 0)
			return;
		at += RECORD_HEADER_LEN + (uint64_t)len;
	}
	if (s->in_segments)
		damage(s, HT_E_TRUNCATED, at,
		       "file ends inside a heap dump (no HEAP_DUMP_END after "
		       "its segments)");
}

/* ---- Names of threads: the chase --------------------------------------- */

/* Where String.value and String.coder lie in a String's fields. */
static void find_string_fields(struct hprof_source *s)
{
	struct hclass *c = class_of(s, s->string_class);
	uint64_t at = 0;

	s->string_value_at = -1;
	s->string_coder_at = -1;
	if (!c)
		return;
	for (uint32_t i = 0; i < c->n_fields; i++) {
		const char *name = c->names[i];

		if (name && strcmp(name, "value") == 0 &&
		    hprof_type_is_ref(c->types[i]))
			s->string_value_at = (int64_t)at;
		else if (name && strcmp(name, "coder") == 0 &&
			 c->types[i] == HPROF_BYTE)
			s->string_coder_at = (int64_t)at;
		at += hprof_type_width(c->types[i], s->id_size);
	}
}

/* Walks the intact bodies again up to `limit`, chasing what is wanted. */
static void chase_walk(struct hprof_source *s, uint64_t limit)
{
	struct walk w = {.chase_only = true, .limit = limit};

	for (size_t i = 0; i < s->n_dumps; i++) {
		struct dump *d = &s->dumps[i];

		for (size_t j = 0; j < d->n_segs; j++) {
			const struct segment *seg = &d->segs[j];
			struct body b = {
				.record_at = seg->offset - RECORD_HEADER_LEN,
				.end = seg->offset + seg->length,
			};

			b.claimed_end = b.end;
			if (b.record_at + RECORD_HEADER_LEN >= limit)
				return;
			if (walk_body(s, d, &b, &w) < 0)
				return;
		}
	}
}

/*
 * A Thread's name String, and that String's array, may lie before it in
 * the file, where the first pass could not know they were wanted. Each
 * further walk stops where the last of what it looks for must lie: a
 * String before the Thread that names it, an array before its String.
 */
static void chase_names(struct hprof_source *s)
{
	uint64_t limit = 0;

	for (size_t i = 0; i < s->n_chases; i++) {
		const struct wanted_string *w =
			&s->strings_wanted[s->chases[i].string];

		if (!w->found && s->chases[i].thread_at > limit)
			limit = s->chases[i].thread_at;
	}
	if (limit)
		chase_walk(s, limit);
	/* an array after its String was wanted when the walk passed it,
	 * unless the String itself was only found by the walk above */
	limit = 0;
	for (size_t i = 0; i < s->n_strings_wanted; i++) {
		const struct wanted_string *w = &s->strings_wanted[i];

		if (!w->found || s->arrays_wanted[w->array].found)
			continue;
		if (w->found_late)
			limit = UINT64_MAX;
		else if (w->at > limit)
			limit = w->at;
	}
	if (limit)
		chase_walk(s, limit);
	for (size_t i = 0; i < s->n_chases; i++) {
		const struct wanted_string *w =
			&s->strings_wanted[s->chases[i].string];
		uint32_t t;

		if (!w->found || !s->arrays_wanted[w->array].found)
			continue;
		for (t = 0; t < s->n_threads; t++) {
			struct thread *th = &s->threads[t];

			if (th->object == s->chases[i].thread && !th->name)
				th->name = s->arrays_wanted[w->array].text;
		}
	}
}

static void name_threads(struct hprof_source *s)
{
	for (size_t i = 0; i < s->n_threads; i++) {
		struct thread *t = &s->threads[i];

		if (t->name_id && !t->name)
			t->name = utf8_of(s, t->name_id);
	}
	if (s->n_chases)
		chase_names(s);
}

/* ---- The object layout ------------------------------------------------- */

/* The layout the addresses fit best: the fewest objects reaching past
 * their neighbour, then the most that end exactly where it begins, then
 * the smallest (compressed oops, which every heap under 32 GB has unless
 * told otherwise). */
static enum jvm_model best_model(const struct evidence *e)
{
	int best = 0;

	for (int m = 1; m < 3; m++)
		if (e->overlaps[m] < e->overlaps[best] ||
		    (e->overlaps[m] == e->overlaps[best] &&
		     e->exact[m] > e->exact[best]))
			best = m;
	return (enum jvm_model)best;
}

/* When the layout given contradicts the addresses (they fit a layout of
 * the other kind of references better, and say so by objects that end
 * where the next begins), what they show, into s->contradiction. */
static void check_given(struct hprof_source *s, bool yes)
{
	const struct evidence *e = &s->evidence;
	enum jvm_model best = best_model(e);
	enum jvm_model given = yes ? JVM_COMPRESSED : JVM_WIDE_OOPS;

	if (e->exact[best] == 0 || (best == JVM_COMPRESSED) == yes)
		return;
	snprintf(s->contradiction, sizeof(s->contradiction),
		 "they fit %s: %llu of %llu adjacent objects end where the "
		 "next begins (as %s: %llu, and %llu reach past it)",
		 jvm_layouts[best].name, (unsigned long long)e->exact[best],
		 (unsigned long long)e->pairs, jvm_layouts[given].name,
		 (unsigned long long)e->exact[given],
		 (unsigned long long)e->overlaps[given]);
}

/* The layout the option asks for, or the one the addresses fit best. */
static void decide_model(struct hprof_source *s, char *why, size_t size)
{
	const struct evidence *e = &s->evidence;
	enum jvm_model best;

	if (s->id_size == 4) {
		s->model = JVM_32BIT;
		snprintf(why, size, "4-byte ids");
		return;
	}
	if (s->choice != HT_COMPRESSED_OOPS_AUTO) {
		bool yes = s->choice == HT_COMPRESSED_OOPS_YES;

		s->model = yes ? JVM_COMPRESSED : JVM_WIDE_OOPS;
		snprintf(why, size, "given: compressed oops %s",
			 yes ? "yes" : "no");
		check_given(s, yes);
		return;
	}
	best = best_model(e);
	s->model = best;
	if (e->exact[best] == 0)
		snprintf(why, size, "auto: no adjacent objects to tell by, "
			 "assumed");
	else
		snprintf(why, size, "auto: %llu of %llu adjacent objects end "
			 "where the next begins",
			 (unsigned long long)e->exact[best],
			 (unsigned long long)e->pairs);
}

/* The size of java.lang.Class without statics, from its dumped fields
 * and those HotSpot adds; the header alone if the dump lacks it. */
static uint64_t mirror_base(struct hprof_source *s)
{
	struct hclass *c;

	if (s->has_mirror_base[s->model])
		return s->mirror_base[s->model];
	c = s->class_class ? class_of(s, s->class_class) : NULL;
	if (c && class_layout(s, c, s->model))
		s->mirror_base[s->model] = c->size[s->model];
	else
		s->mirror_base[s->model] = jvm_layouts[s->model].header;
	s->has_mirror_base[s->model] = true;
	return s->mirror_base[s->model];
}

static void fill_header(struct hprof_source *s, const char *why)
{
	time_t secs = (time_t)(s->timestamp_ms / 1000);
	struct tm tm;
	size_t n = 0;

	snprintf(s->meta_values[n], sizeof(s->meta_values[n]), "%s",
		 s->version);
	s->metadata[n].key = "hprof_version";
	n++;
	snprintf(s->meta_values[n], sizeof(s->meta_values[n]), "%u",
		 s->id_size);
	s->metadata[n].key = "hprof_id_size";
	n++;
	if (gmtime_r(&secs, &tm)) {
		snprintf(s->meta_values[n], sizeof(s->meta_values[n]),
			 "%04d-%02d-%02dT%02d:%02d:%02d.%03uZ",
			 tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday,
			 tm.tm_hour, tm.tm_min, tm.tm_sec,
			 (unsigned)(s->timestamp_ms % 1000));
		s->metadata[n].key = "hprof_time";
		n++;
	}
	snprintf(s->meta_values[n], sizeof(s->meta_values[n]), "%s",
		 jvm_layouts[s->model].name);
	s->metadata[n].key = "object_layout";
	n++;
	snprintf(s->meta_values[n], sizeof(s->meta_values[n]), "%s", why);
	s->metadata[n].key = "object_layout_from";
	n++;
	if (s->contradiction[0]) {
		snprintf(s->meta_values[n], sizeof(s->meta_values[n]), "%s",
			 s->contradiction);
		s->metadata[n].key = "object_layout_contradicted";
		n++;
	}
	for (size_t i = 0; i < n; i++)
		s->metadata[i].value = s->meta_values[i];
	s->header = (struct ht_header){
		.version = HT_FORMAT_VERSION,
		.runtime = "jvm",
		.pointer_size = s->id_size,
		.reports_survivors = false,
		.n_metadata = n,
		.metadata = s->metadata,
	};
}

/* ---- The event pass: failing ------------------------------------------- */

static int fail_with(struct hprof_source *s, const struct ht_error *e,
		     struct ht_error *err)
{
	s->failure = *e;
	s->loss = (struct ht_loss){.lost = true, .offset = e->offset};
	if (s->in.size > e->offset)
		s->loss.bytes_lost = s->in.size - e->offset;
	s->phase = PH_FAILED;
	if (err)
		*err = s->failure;
	return -1;
}

/* Damage that only the event pass can see: a class missing for its
 * instances, or a file that changed since the first pass. */
static int fail(struct hprof_source *s, struct ht_error *err,
		enum ht_error_code code, uint64_t offset, const char *fmt, ...)
	HT_PRINTF(5, 6);

static int fail(struct hprof_source *s, struct ht_error *err,
		enum ht_error_code code, uint64_t offset, const char *fmt, ...)
{
	char cause[300];
	uint64_t lost = s->in.size > offset ? s->in.size - offset : 0;
	struct ht_error e;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cause, sizeof(cause), fmt, ap);
	va_end(ap);
	err_at_offset(&e, code, s->path, offset,
		      "%s; %llu %s from here to the end not read", cause,
		      (unsigned long long)lost, lost == 1 ? "byte" : "bytes");
	if (code == HT_E_IO)
		e.sys_errno = s->in.io_errno;
	return fail_with(s, &e, err);
}

static int fail_read(struct hprof_source *s, struct ht_error *err,
		     uint64_t offset)
{
	char cause[128];
	enum ht_error_code code = read_failure(&s->in, cause, sizeof(cause));

	return fail(s, err, code, offset, "%s", cause);
}

/* ---- The event pass: names --------------------------------------------- */

/* The position of the event being made; the only one of its fields that
 * changes from event to event are set, as this runs once per object. */
static void place_event(struct hprof_source *s, uint64_t offset)
{
	s->last.event_index = s->events++;
	s->last.offset = offset;
}

static void start_event(struct hprof_source *s, struct ht_event *ev,
			enum ht_event_type type, uint64_t offset)
{
	memset(ev, 0, sizeof(*ev));
	ev->type = type;
	place_event(s, offset);
}

static bool is_array_name(const char *name)
{
	return name && name[0] == '[';
}

/* The class event of the LOAD_CLASS at `i`; 0 when it has no name. */
static int class_event(struct hprof_source *s, size_t i, struct ht_event *ev)
{
	const struct loaded_class *l = &s->loaded[i];
	const char *internal = utf8_of(s, l->name_id);
	struct hclass *c;
	const char *name;

	if (!internal)
		return 0;
	name = java_name(s, internal);
	if (!name)
		return -1;
	start_event(s, ev, HT_EV_CLASS, l->offset);
	ev->u.class_.id = l->class_id;
	ev->u.class_.name = name;
	/* a class whose instances all have one size */
	c = class_of(s, l->class_id);
	if (c && !is_array_name(internal) && l->class_id != s->class_class &&
	    class_layout(s, c, s->model)) {
		ev->u.class_.has_size = true;
		ev->u.class_.size = c->size[s->model];
	}
	return 1;
}

static ht_id thread_id(const struct thread *t)
{
	return t->object ? t->object : t->serial;
}

static int name_put(struct hprof_source *s, size_t *len, const char *text)
{
	size_t n = strlen(text);

	if (HPROF_GROW(s->name_buf, *len + n + 1, s->cap_name_buf) < 0)
		return -1;
	memcpy(s->name_buf + *len, text, n + 1);
	*len += n;
	return 0;
}

/* Where a frame is, as a Java stack trace says it: "(Main.java:12)",
 * "(Main.java)" when the line is not known, "(native)" for a native
 * method; nothing when the dump names no source file. */
static int put_place(struct hprof_source *s, size_t *len,
		     const struct frame *fr)
{
	const char *file = fr->source_file ? utf8_of(s, fr->source_file)
					   : NULL;
	char line[16];

	if (fr->line == LINE_NATIVE)
		return name_put(s, len, "(native)");
	if (!file || !*file)
		return 0;
	if (name_put(s, len, "(") < 0 || name_put(s, len, file) < 0)
		return -1;
	if (fr->line > 0) {
		snprintf(line, sizeof(line), ":%d", (int)fr->line);
		if (name_put(s, len, line) < 0)
			return -1;
	}
	return name_put(s, len, ")");
}

/* "java.lang.Object.wait(Object.java:338)": the declaring class and the
 * method, as the JVMTI recorder names methods, then where the frame is. */
static const char *method_name(struct hprof_source *s, const struct frame *fr)
{
	const char *cls = NULL, *method = utf8_of(s, fr->method);
	const char *java_cls = NULL;
	size_t len = 0;
	uint32_t i;

	if (idmap_get(&s->loaded_by_serial, fr->class_serial, &i))
		cls = utf8_of(s, s->loaded[i].name_id);
	if (cls && !(java_cls = java_name(s, cls)))
		return NULL;
	if (name_put(s, &len, java_cls ? java_cls : "?") < 0 ||
	    name_put(s, &len, ".") < 0 ||
	    name_put(s, &len, method ? method : "?") < 0 ||
	    put_place(s, &len, fr) < 0)
		return NULL;
	return s->name_buf;
}

/* Fields go out this many to an event, or more when one class has more. */
#define FIELDS_PER_EVENT 256u

/* The reference fields of class c, instance then static, into s->fields
 * from *n on. */
static int class_fields(struct hprof_source *s, const struct hclass *c,
			size_t *n)
{
	uint32_t own = c->first_static - c->first_field, k = 0, v = 0;
	uint64_t offset = 0;

	if (HPROF_GROW(s->fields, *n + own + c->n_static_refs +
				       c->n_own_values + c->n_static_values,
		       s->cap_fields) < 0)
		return -1;
	for (uint32_t i = 0; i < c->n_fields; i++) {
		struct ht_field *f;
		uint64_t at = offset;

		offset += hprof_type_width(c->types[i], s->id_size);
		if (!hprof_type_is_ref(c->types[i])) {
			if (!s->want_values)
				continue;
			/* HPROF numbers its basic types as trace.h does */
			s->fields[(*n)++] = (struct ht_field){
				.id = c->first_value + v++,
				.class_id = c->id,
				.name = c->names[i] ? c->names[i] : "",
				.kind = HT_FIELD_INSTANCE,
				.has_offset = true,
				.offset = at,
				.type = c->types[i],
			};
			continue;
		}
		f = &s->fields[(*n)++];
		/* offset: where the class's own values lie in an
		 * INSTANCE_DUMP, first for an instance of the class itself */
		*f = (struct ht_field){
			.id = c->first_field + k++,
			.class_id = c->id,
			.name = c->names[i] ? c->names[i] : "",
			.kind = HT_FIELD_INSTANCE,
			.has_offset = true,
			.offset = at,
		};
	}
	for (uint32_t i = 0; i < c->n_static_refs; i++) {
		s->fields[(*n)++] = (struct ht_field){
			.id = c->first_static + i,
			.class_id = c->id,
			.name = c->static_names[i] ? c->static_names[i] : "",
			.kind = HT_FIELD_STATIC,
		};
	}
	for (uint32_t i = 0; i < c->n_static_values; i++) {
		struct static_value sv = statics_value(c, i);

		s->fields[(*n)++] = (struct ht_field){
			.id = sv.id,
			.class_id = c->id,
			.name = sv.name ? sv.name : "",
			.kind = HT_FIELD_STATIC,
			.type = sv.type,
		};
	}
	return 0;
}

/*
 * The links, declared by no class, into s->fields from *n on (trace.h:
 * the first field ids of every dump read here). They are the edge from
 * each object to its class, which HPROF leaves implicit in the class id,
 * and those from a class object to what its CLASS_DUMP names. The JVM
 * keeps a class while any instance is alive, and a class loader while any
 * of its classes is; without these edges a class with live instances
 * could be unreachable, and a loader would seem to retain classes that
 * their instances keep. A class holds its superclass loaded too, so
 * <super> is an edge as well, as in Eclipse MAT.
 */
static int link_fields(struct hprof_source *s, size_t *n)
{
	static const char *const names[] = {
		[HT_LINK_ID_CLASS] = HT_LINK_CLASS,
		[HT_LINK_ID_SUPER] = HT_LINK_SUPER,
		[HT_LINK_ID_LOADER] = HT_LINK_LOADER,
		[HT_LINK_ID_SIGNERS] = HT_LINK_SIGNERS,
		[HT_LINK_ID_DOMAIN] = HT_LINK_DOMAIN,
	};

	if (HPROF_GROW(s->fields, *n + HT_LINK_ID_END, s->cap_fields) < 0)
		return -1;
	for (unsigned id = HT_LINK_ID_CLASS; id < HT_LINK_ID_END; id++)
		s->fields[(*n)++] = (struct ht_field){
			.id = id,
			.name = names[id],
			.kind = HT_FIELD_INSTANCE,
		};
	return 0;
}

/* The id of Reference.referent, 0 when the dump has no CLASS_DUMP of
 * java.lang.ref.Reference with that field. */
static uint32_t find_referent_field(struct hprof_source *s)
{
	const struct hclass *r = s->reference_class
		? class_of(s, s->reference_class) : NULL;
	uint32_t k = 0;

	for (uint32_t i = 0; r && i < r->n_fields; i++) {
		if (!hprof_type_is_ref(r->types[i]))
			continue;
		if (r->names[i] && strcmp(r->names[i], "referent") == 0)
			return r->first_field + k;
		k++;
	}
	return 0;
}

/* After the real fields, the synthetic referent of each strength class
 * the dump has a CLASS_DUMP of, where Reference.referent is known: ids
 * after the last real one, into s->fields from *n on. */
static int strength_fields(struct hprof_source *s, size_t *n)
{
	s->strength_declared = true;
	s->referent_field = find_referent_field(s);
	if (!s->referent_field)
		return 0;
	if (HPROF_GROW(s->fields, *n + 4, s->cap_fields) < 0)
		return -1;
	for (uint8_t i = 0; i < 4; i++) {
		if (!s->strength_class[i] ||
		    !class_of(s, s->strength_class[i]) ||
		    s->next_field > UINT32_MAX - 1)
			continue;
		s->strength_field[i] = s->next_field++;
		s->fields[(*n)++] = (struct ht_field){
			.id = s->strength_field[i],
			.class_id = s->strength_class[i],
			.name = "referent",
			.kind = (uint8_t)(HT_FIELD_SOFT + i),
		};
	}
	return 0;
}

/*
 * The next fields event: the links, then the reference fields of the
 * classes with a CLASS_DUMP, in the order they were indexed (and their
 * ids given), then the synthetic referents (strength_fields), before any
 * dump that names them. 1 an event, 0 none left, -1 out of memory.
 */
static int fields_event(struct hprof_source *s, struct ht_event *ev)
{
	size_t n = 0;

	if (!s->links_declared) {
		if (link_fields(s, &n) < 0)
			return -1;
		s->links_declared = true;
	}
	while (s->field_class < s->n_classes && n < FIELDS_PER_EVENT) {
		const struct hclass *c = &s->classes[s->field_class++];

		if (class_fields(s, c, &n) < 0)
			return -1;
	}
	if (s->field_class == s->n_classes && !s->strength_declared &&
	    strength_fields(s, &n) < 0)
		return -1;
	if (n == 0)
		return 0;
	start_event(s, ev, HT_EV_FIELDS, 0);
	ev->u.fields.count = n;
	ev->u.fields.fields = s->fields;
	return 1;
}

/* The names before the first dump: 1 an event, 0 none left, -1 failed. */
static int next_name(struct hprof_source *s, struct ht_event *ev,
		     struct ht_error *err)
{
	while (s->phase == PH_CLASSES && s->cursor < s->n_loaded) {
		int rc = class_event(s, s->cursor++, ev);

		if (rc < 0)
			return fail(s, err, HT_E_NOMEM, 0, "%s", nomem_cause());
		if (rc > 0)
			return 1;
	}
	if (s->phase == PH_CLASSES) {
		s->phase = PH_FIELDS;
		s->field_class = 0;
	}
	if (s->phase == PH_FIELDS) {
		int rc = fields_event(s, ev);

		if (rc < 0)
			return fail(s, err, HT_E_NOMEM, 0, "%s", nomem_cause());
		if (rc > 0)
			return 1;
		s->phase = PH_THREADS;
		s->cursor = 0;
	}
	while (s->phase == PH_THREADS && s->cursor < s->n_threads) {
		const struct thread *t = &s->threads[s->cursor++];

		if (!t->name)
			continue;
		start_event(s, ev, HT_EV_THREAD, 0);
		ev->u.thread.id = thread_id(t);
		ev->u.thread.name = t->name;
		return 1;
	}
	if (s->phase == PH_THREADS) {
		s->phase = PH_METHODS;
		s->cursor = 0;
	}
	while (s->cursor < s->n_frames) {
		const struct frame *fr = &s->frames[s->cursor++];
		const char *name;

		if (fr->method_id != fr->id)
			continue; /* named with the method's first frame */
		name = method_name(s, fr);
		if (!name)
			return fail(s, err, HT_E_NOMEM, 0, "%s", nomem_cause());
		start_event(s, ev, HT_EV_METHOD, 0);
		ev->u.method.id = fr->id;
		ev->u.method.name = name;
		return 1;
	}
	s->phase = PH_DUMP;
	return 0;
}

/* ---- The event pass: roots --------------------------------------------- */

static int plan_container(struct hprof_source *s, unsigned type, ht_id id1,
			  ht_id id2, uint64_t offset)
{
	if (HPROF_GROW(s->plan, s->n_plan + 1, s->cap_plan) < 0)
		return -1;
	s->plan[s->n_plan++] = (struct step){.type = (uint8_t)type,
					     .id1 = id1, .id2 = id2,
					     .offset = offset};
	return 0;
}

/* One root in the container planned last, joining the roots step before
 * it when there is one with room. */
static int plan_root(struct hprof_source *s, ht_id ref, uint64_t offset)
{
	struct step *last = s->n_plan ? &s->plan[s->n_plan - 1] : NULL;

	if (HPROF_GROW(s->plan_refs, s->n_plan_refs + 1, s->cap_plan_refs) < 0)
		return -1;
	if (!last || !last->roots || last->count == REFS_PER_EVENT) {
		if (HPROF_GROW(s->plan, s->n_plan + 1, s->cap_plan) < 0)
			return -1;
		s->plan[s->n_plan++] = (struct step){.roots = true,
						     .offset = offset,
						     .first = s->n_plan_refs};
		last = &s->plan[s->n_plan - 1];
	}
	s->plan_refs[s->n_plan_refs++] = ref;
	last->count++;
	return 0;
}

/* A root of a thread, in the order its containers go out: by thread,
 * the thread's own roots before its frames', frames from the top. */
struct thread_root {
	uint32_t serial;
	int64_t depth;     /* -1: in the thread's container */
	size_t index;      /* into the dump's roots: file order */
	ht_id frame, method;
	uint8_t type;      /* of the frame's container */
};

static int compare_thread_roots(const void *x, const void *y)
{
	const struct thread_root *a = x, *b = y;

	if (a->serial != b->serial)
		return a->serial < b->serial ? -1 : 1;
	if (a->depth != b->depth)
		return a->depth < b->depth ? -1 : 1;
	return (a->index > b->index) - (a->index < b->index);
}

static bool is_thread_root(unsigned tag)
{
	return tag == S_ROOT_THREAD_OBJECT || tag == S_ROOT_JAVA_FRAME ||
	       tag == S_ROOT_JNI_LOCAL || tag == S_ROOT_NATIVE_STACK ||
	       tag == S_ROOT_THREAD_BLOCK;
}

static const struct trace *trace_of(const struct hprof_source *s,
				    uint32_t thread_serial)
{
	uint32_t i;

	if (idmap_get(&s->thread_by_serial, thread_serial, &i) &&
	    s->threads[i].has_trace &&
	    idmap_get(&s->trace_by_serial, s->threads[i].trace_serial, &i))
		return &s->traces[i];
	if (idmap_get(&s->trace_by_thread, thread_serial, &i))
		return &s->traces[i];
	return NULL;
}

/* The container of frame `depth` of trace t: a native method's frame is
 * C_RT_NATIVE, a compiled one's C_RT_JIT, any other C_RT_INTERPRETED
 * (HPROF does not say which frames HotSpot had compiled). */
static void frame_at(const struct hprof_source *s, const struct trace *t,
		     uint32_t depth, struct thread_root *tr)
{
	uint32_t i;

	tr->depth = depth;
	tr->frame = s->frame_ids[t->first + depth];
	tr->type = HT_C_RT_INTERPRETED;
	tr->method = tr->frame;
	if (idmap_get(&s->frame_by_id, tr->frame, &i)) {
		tr->method = s->frames[i].method_id;
		if (s->frames[i].line == LINE_NATIVE)
			tr->type = HT_C_RT_NATIVE;
		else if (s->frames[i].line == LINE_COMPILED)
			tr->type = HT_C_RT_JIT;
	}
}

/* The frame a JAVA_FRAME or JNI_LOCAL root lies in, when the thread's
 * trace has it; depth -1 (the thread's own container) otherwise. */
static void place_in_frame(const struct hprof_source *s, const struct root *r,
			   struct thread_root *tr)
{
	const struct trace *t;

	tr->depth = -1;
	if ((r->tag != S_ROOT_JAVA_FRAME && r->tag != S_ROOT_JNI_LOCAL) ||
	    r->depth < 0)
		return;
	t = trace_of(s, r->thread_serial);
	if (t && (uint32_t)r->depth < t->n_frames)
		frame_at(s, t, (uint32_t)r->depth, tr);
}

static ht_id thread_id_of(struct hprof_source *s, uint32_t serial)
{
	uint32_t i;

	if (idmap_get(&s->thread_by_serial, serial, &i))
		return thread_id(&s->threads[i]);
	return serial;
}

/* The frames of trace t from `from` up to (not including) `to`, each
 * begun with no roots: a developer reads the whole stack, not only the
 * frames whose locals hold objects. */
static int plan_empty_frames(struct hprof_source *s, const struct trace *t,
			     uint32_t from, uint32_t to, uint64_t offset)
{
	for (uint32_t depth = from; t && depth < to && depth < t->n_frames;
	     depth++) {
		struct thread_root fr;

		frame_at(s, t, depth, &fr);
		if (plan_container(s, fr.type, fr.frame, fr.method, offset) < 0)
			return -1;
	}
	return 0;
}

/* A file's dumps spread out at most this many times the frames its
 * traces hold: HotSpot writes one dump whose threads each have a trace
 * of their own, while a hostile file of many tiny dumps naming one long
 * trace would otherwise make millions of events a byte. */
#define MAX_SPREAD_PER_FRAME 64

/* The roots of one thread, tr[0..n) in container order: its container,
 * its own roots, then every frame of its trace from the top, each with
 * the roots its locals are. A trace is spread out once a dump (a thread
 * whose trace another's named already gets only the frames of its
 * roots), and within MAX_SPREAD_PER_FRAME, so that the frames stay
 * within what the file holds. */
static int plan_thread(struct hprof_source *s, const struct dump *d,
		       const struct thread_root *tr, size_t n,
		       uint8_t *spread)
{
	const struct trace *t = trace_of(s, tr[0].serial);
	uint64_t offset = d->roots[tr[0].index].offset;
	uint32_t next = 0; /* the first frame not yet begun */

	if (t && (spread[t - s->traces] ||
		  s->frames_spread + t->n_frames >
			  (uint64_t)s->n_frame_ids * MAX_SPREAD_PER_FRAME)) {
		t = NULL;
	} else if (t) {
		spread[t - s->traces] = 1;
		s->frames_spread += t->n_frames;
	}

	if (plan_container(s, HT_C_RT_THREAD, thread_id_of(s, tr[0].serial), 0,
			   offset) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		const struct root *r = &d->roots[tr[i].index];

		if (tr[i].depth >= 0 &&
		    (i == 0 || tr[i].depth != tr[i - 1].depth)) {
			if (plan_empty_frames(s, t, next,
					      (uint32_t)tr[i].depth,
					      r->offset) < 0 ||
			    plan_container(s, tr[i].type, tr[i].frame,
					   tr[i].method, r->offset) < 0)
				return -1;
			next = (uint32_t)tr[i].depth + 1;
		}
		if (plan_root(s, r->object, r->offset) < 0)
			return -1;
	}
	return plan_empty_frames(s, t, next, UINT32_MAX, offset);
}

static int plan_threads(struct hprof_source *s, const struct dump *d)
{
	uint64_t bytes = (d->n_roots ? d->n_roots : 1) *
			 sizeof(struct thread_root);
	struct thread_root *tr;
	uint8_t *spread;
	bool spread_charged;
	size_t n = 0;
	int rc = 0;

	if (mem_budget_charge(bytes) < 0)
		return -1;
	tr = malloc(bytes);
	if (!tr) {
		mem_budget_release(bytes);
		return -1;
	}
	for (size_t i = 0; i < d->n_roots; i++) {
		if (!is_thread_root(d->roots[i].tag))
			continue;
		tr[n] = (struct thread_root){
			.serial = d->roots[i].thread_serial,
			.index = i,
		};
		place_in_frame(s, &d->roots[i], &tr[n]);
		n++;
	}
	qsort(tr, n, sizeof(*tr), compare_thread_roots);
	/* a flag per trace: spread out in this dump already */
	spread = calloc(s->n_traces ? s->n_traces : 1, 1);
	spread_charged = spread && mem_budget_charge(s->n_traces) == 0;
	if (!spread_charged)
		rc = -1;
	for (size_t i = 0, j; i < n && rc == 0; i = j) {
		for (j = i + 1; j < n && tr[j].serial == tr[i].serial; j++)
			;
		rc = plan_thread(s, d, tr + i, j - i, spread);
	}
	if (spread_charged)
		mem_budget_release(s->n_traces);
	free(spread);
	free(tr);
	mem_budget_release(bytes);
	return rc;
}

/* Roots of one kind, all in one container of type `type`. */
static int plan_kind(struct hprof_source *s, const struct dump *d,
		     unsigned tag, unsigned type)
{
	bool begun = false;

	for (size_t i = 0; i < d->n_roots; i++) {
		const struct root *r = &d->roots[i];

		if (r->tag != tag)
			continue;
		if (!begun && plan_container(s, type, 0, 0, r->offset) < 0)
			return -1;
		begun = true;
		if (plan_root(s, r->object, r->offset) < 0)
			return -1;
	}
	return 0;
}

/* A sticky class is the root of its own C_RT_CLASS container. */
static int plan_classes(struct hprof_source *s, const struct dump *d)
{
	for (size_t i = 0; i < d->n_roots; i++) {
		const struct root *r = &d->roots[i];

		if (r->tag != S_ROOT_STICKY_CLASS)
			continue;
		if (plan_container(s, HT_C_RT_CLASS, r->object, 0,
				   r->offset) < 0 ||
		    plan_root(s, r->object, r->offset) < 0)
			return -1;
	}
	return 0;
}

static int build_plan(struct hprof_source *s, const struct dump *d)
{
	s->n_plan = 0;
	s->n_plan_refs = 0;
	s->plan_at = 0;
	if (plan_threads(s, d) < 0 || plan_classes(s, d) < 0 ||
	    plan_kind(s, d, S_ROOT_JNI_GLOBAL, HT_C_RT_STRONGPTR) < 0 ||
	    plan_kind(s, d, S_ROOT_MONITOR_USED, HT_C_RT_INTERNALVM) < 0 ||
	    plan_kind(s, d, S_ROOT_UNKNOWN, HT_C_RT_ROOTTABLE) < 0)
		return -1;
	return 0;
}

static int zero_flags(struct hprof_source *s, size_t n)
{
	size_t old = s->cap_zero_flags;

	if (HPROF_GROW(s->zero_flags, n, s->cap_zero_flags) < 0)
		return -1;
	memset(s->zero_flags + old, 0,
	       (s->cap_zero_flags - old) * sizeof(*s->zero_flags));
	return 0;
}

static void container_event(struct hprof_source *s, struct ht_event *ev,
			    unsigned type, ht_id id1, ht_id id2,
			    uint64_t offset)
{
	start_event(s, ev, HT_EV_BEGIN_CONTAINER, offset);
	ev->u.begin_container.type = (enum ht_container_type)type;
	ev->u.begin_container.id1 = id1;
	ev->u.begin_container.id2 = id2;
}

static int step_event(struct hprof_source *s, const struct step *st,
		      struct ht_event *ev)
{
	if (!st->roots) {
		container_event(s, ev, st->type, st->id1, st->id2, st->offset);
		return 0;
	}
	if (zero_flags(s, st->count) < 0)
		return -1;
	start_event(s, ev, HT_EV_ROOT_REFERENCES, st->offset);
	ev->u.root_references.count = st->count;
	ev->u.root_references.refs = s->plan_refs + st->first;
	ev->u.root_references.flags = s->zero_flags;
	return 0;
}

/* ---- The event pass: objects ------------------------------------------- */

/* Room for n references, and for their fields (an array's elements have
 * none, but its link to its class has one). */
static int reserve_refs(struct hprof_source *s, size_t n)
{
	return HPROF_GROW(s->refs, n ? n : 1, s->cap_refs);
}

static int reserve_ref_fields(struct hprof_source *s, size_t n)
{
	return HPROF_GROW(s->ref_fields, n ? n : 1, s->cap_ref_fields);
}

static void object_event(struct hprof_source *s, struct ht_event *ev,
			 uint64_t offset, ht_id id, ht_id class_id,
			 uint64_t size, size_t n_refs)
{
	struct ht_ev_object_references *o = &ev->u.object_references;

	/* every field set, none cleared twice: this is the hot path */
	ev->type = HT_EV_OBJECT_REFERENCES;
	place_event(s, offset);
	o->id = id;
	o->class_id = class_id;
	o->size = size;
	o->flags = 0;
	o->count = n_refs;
	o->refs = s->refs;
	o->ref_flags = NULL;
	o->has_generation = false;
	o->generation = 0;
	o->result = HT_RESULT_OK;
	o->ref_fields = NULL;
	o->n_values = 0;
	o->value_fields = NULL;
	o->values = NULL;
	o->array = NULL;
}

/* A value of a primitive type from HPROF's big-endian bytes, as values
 * carry it (trace.h: ht_value_load). */
static uint64_t hprof_value(unsigned type, const uint8_t *p)
{
	unsigned width = ht_value_type_width(type);
	uint8_t le[8];

	for (unsigned i = 0; i < width; i++)
		le[i] = p[width - 1 - i];
	return ht_value_load(type, le);
}

/*
 * A class object: java.lang.Class with the class's statics. Its
 * references are its static reference fields in the dump's order (the
 * pseudo-statics HotSpot adds, "<resolved_references>" and "<init_lock>",
 * included), then its links: its super class, class loader, signers and
 * protection domain.
 */
static int class_object(struct hprof_source *s, struct ht_event *ev,
			const struct class_ref *cr, struct ht_error *err)
{
	struct cursor cur = {.s = s, .at = cr->offset + 1, .end = cr->end};
	unsigned id = s->id_size;
	const uint8_t *p = take(&cur, class_dump_fixed(id) + 2);
	ht_id obj, tail[4];
	struct bad_value bad;
	uint64_t size;
	size_t n = 0, n_values = 0;
	uint16_t count;
	struct hclass *c;

	if (!p)
		goto changed;
	obj = get_id(s, p);
	for (int i = 0; i < 4; i++)
		tail[i] = get_id(s, p + (unsigned)(i + 1) * id + 4);
	if (skip_values(&cur, 2, be16(p + class_dump_fixed(id)), NULL, NULL,
			&bad) < 0 || !(p = take(&cur, 2)))
		goto changed;
	count = be16(p);
	if (reserve_refs(s, (size_t)count + 4) < 0 ||
	    reserve_ref_fields(s, (size_t)count + 4) < 0)
		return fail(s, err, HT_E_NOMEM, cr->offset, "%s", nomem_cause());
	c = class_of(s, obj);
	if (s->want_values &&
	    (HPROF_GROW(s->value_fields, (size_t)count + 1,
			s->cap_value_fields) < 0 ||
	     HPROF_GROW(s->values, (size_t)count + 1, s->cap_values) < 0))
		return fail(s, err, HT_E_NOMEM, cr->offset, "%s", nomem_cause());
	for (uint16_t i = 0; i < count; i++) {
		unsigned type, w;

		if (!(p = take(&cur, id + 1)))
			goto changed;
		type = p[id];
		w = hprof_type_width(type, id);
		if (!w || !(p = take(&cur, w)))
			goto changed;
		if (!hprof_type_is_ref(type)) {
			/* as the references: the first CLASS_DUMP's */
			if (c && n_values < c->n_static_values) {
				s->value_fields[n_values] =
					statics_value(c, (uint32_t)n_values).id;
				s->values[n_values++] = hprof_value(type, p);
			}
			continue;
		}
		/* the statics of the class's first CLASS_DUMP, which a
		 * later dump's may not match */
		s->ref_fields[n] = c && n < c->n_static_refs
					   ? c->first_static + n : 0;
		s->refs[n++] = get_id(s, p);
	}
	if (!(p = take(&cur, 2)) || !take(&cur, (size_t)be16(p) * (id + 1)))
		goto changed;
	memcpy(s->refs + n, tail, sizeof(tail));
	for (unsigned i = 0; i < 4; i++)
		s->ref_fields[n + i] = HT_LINK_ID_SUPER + i;
	n += 4;
	size = layout_mirror_size(&jvm_layouts[s->model], mirror_base(s),
				  c ? &c->statics : &(struct static_counts){0});
	object_event(s, ev, cr->offset, obj, s->class_class, size, n);
	ev->u.object_references.ref_fields = s->ref_fields;
	if (n_values) {
		ev->u.object_references.n_values = n_values;
		ev->u.object_references.value_fields = s->value_fields;
		ev->u.object_references.values = s->values;
	}
	return 1;
changed:
	if (cur.io)
		return fail_read(s, err, cr->offset);
	return fail(s, err, HT_E_IO, cr->offset,
		    "the file changed while it was read");
}

/* Why an instance's class cannot be used: it, or a super class, has no
 * CLASS_DUMP, or the chain of super classes loops. */
static int bad_class(struct hprof_source *s, struct ht_error *err,
		     uint64_t obj, uint64_t class_id)
{
	struct hclass *c = class_of(s, class_id);
	uint32_t depth = 0;

	if (!c)
		return fail(s, err, HT_E_CORRUPT, s->at,
			    "INSTANCE_DUMP of 0x%llx: its class 0x%llx has no "
			    "CLASS_DUMP", (unsigned long long)obj,
			    (unsigned long long)class_id);
	while (c->super_id && depth++ <= MAX_CLASS_DEPTH) {
		uint64_t super = c->super_id;

		c = class_of(s, super);
		if (!c)
			return fail(s, err, HT_E_CORRUPT, s->at,
				    "INSTANCE_DUMP of 0x%llx: super class "
				    "0x%llx of its class 0x%llx has no "
				    "CLASS_DUMP", (unsigned long long)obj,
				    (unsigned long long)super,
				    (unsigned long long)class_id);
	}
	if (depth > MAX_CLASS_DEPTH)
		return fail(s, err, HT_E_LIMIT, s->at,
			    "INSTANCE_DUMP of 0x%llx: its class 0x%llx has "
			    "more than %d super classes, or they loop",
			    (unsigned long long)obj,
			    (unsigned long long)class_id, MAX_CLASS_DEPTH);
	return fail(s, err, HT_E_NOMEM, s->at, "%s", nomem_cause());
}

/* The primitive values an instance of c holds in its field bytes p, in
 * the order of its refs: its own fields' first, then each super class's.
 * -1 when out of memory. */
static int instance_values(struct hprof_source *s, const struct hclass *c,
			   const uint8_t *p, struct ht_ev_object_references *o)
{
	const struct hclass *k = c;
	uint64_t base = 0, chain = 0;
	size_t n = 0;

	for (k = c; k; k = k->super_id ? &s->classes[k->super_at] : NULL)
		chain += k->n_own_values;
	if (HPROF_GROW(s->value_fields, chain + 1, s->cap_value_fields) < 0 ||
	    HPROF_GROW(s->values, chain + 1, s->cap_values) < 0)
		return -1;
	for (k = c;;) {
		uint64_t at = base;
		uint32_t v = 0;

		for (uint32_t i = 0; i < k->n_fields; i++) {
			unsigned type = k->types[i];

			if (!hprof_type_is_ref(type)) {
				s->value_fields[n] = k->first_value + v++;
				s->values[n++] = hprof_value(type, p + at);
			}
			at += hprof_type_width(type, s->id_size);
		}
		if (k->super_id == 0)
			break;
		base += k->own_bytes;
		k = &s->classes[k->super_at];
	}
	o->n_values = n;
	o->value_fields = n ? s->value_fields : NULL;
	o->values = n ? s->values : NULL;
	return 0;
}

static int instance_object(struct hprof_source *s, struct ht_event *ev,
			   uint64_t end, struct ht_error *err)
{
	unsigned id = s->id_size;
	unsigned head = 1 + 2 * id + 8;
	const uint8_t *p = end - s->at >= head ? in_at(&s->in, s->at, head)
					       : NULL;
	uint64_t obj, class_id;
	struct hclass *c;
	uint32_t n;

	if (!p)
		return fail_read(s, err, s->at);
	obj = get_id(s, p + 1);
	class_id = get_id(s, p + 5 + id);
	n = be32(p + 5 + 2 * id);
	c = class_of(s, class_id);
	if (!c || !chain_known(s, c))
		return bad_class(s, err, obj, class_id);
	if (n > MAX_INSTANCE_DATA)
		return fail(s, err, HT_E_LIMIT, s->at,
			    "INSTANCE_DUMP of 0x%llx: %u bytes of fields, over "
			    "the %u MiB limit", (unsigned long long)obj, n,
			    MAX_INSTANCE_DATA >> 20);
	if (n != c->data_bytes)
		return fail(s, err, HT_E_CORRUPT, s->at,
			    "INSTANCE_DUMP of 0x%llx holds %u bytes of fields; "
			    "those of its class 0x%llx take %llu",
			    (unsigned long long)obj, n,
			    (unsigned long long)class_id,
			    (unsigned long long)c->data_bytes);
	if ((!c->has_layout[s->model] && !class_layout(s, c, s->model)) ||
	    (c->n_refs >= s->cap_refs && reserve_refs(s, c->n_refs + 1) < 0) ||
	    (c->n_refs >= s->cap_ref_fields &&
	     reserve_ref_fields(s, c->n_refs + 1) < 0))
		return fail(s, err, HT_E_NOMEM, s->at, "%s", nomem_cause());
	p = end - s->at - head >= n ? in_at(&s->in, s->at + head, n) : NULL;
	if (!p)
		return fail_read(s, err, s->at);
	s->refs[0] = class_id;
	s->ref_fields[0] = HT_LINK_ID_CLASS;
	instance_refs(s, c, p, s->refs + 1, s->ref_fields + 1);
	object_event(s, ev, s->at, obj, class_id, c->size[s->model],
		     (size_t)c->n_refs + 1);
	ev->u.object_references.ref_fields = s->ref_fields;
	if (s->want_values && instance_values(s, c, p, &ev->u.object_references) < 0)
		return fail(s, err, HT_E_NOMEM, s->at, "%s", nomem_cause());
	s->at += head + n;
	return 1;
}

/* How many elements of an array of count elements of width bytes the
 * trace keeps: all up to HT_VALUES_WHOLE_MAX bytes, else a prefix. */
static uint32_t elements_kept(uint32_t count, unsigned width)
{
	if ((uint64_t)count * width <= HT_VALUES_WHOLE_MAX)
		return count;
	return HT_VALUES_PREFIX / width;
}

/* A primitive array's contents from its elements at `at` in the file
 * (big-endian), little-endian into s->array_bytes: the prefix kept, and
 * when that is not all, the hash of all, read a window at a time.
 * -1 when the file cannot be read. */
static int array_contents(struct hprof_source *s, unsigned type,
			  uint32_t count, uint64_t at)
{
	enum { WINDOW = 1 << 16 };
	unsigned width = ht_value_type_width(type);
	uint32_t kept = elements_kept(count, width);
	uint64_t h = 0xcbf29ce484222325u;

	s->array = (struct ht_array_values){
		.type = (uint8_t)type, .length = count, .stored = kept,
		.data = s->array_bytes };
	for (uint32_t done = 0; done < count;) {
		uint32_t n = count - done < WINDOW / width ? count - done
							   : WINDOW / width;
		const uint8_t *p = in_at(&s->in, at + (uint64_t)done * width,
					 (size_t)n * width);

		if (!p)
			return -1;
		for (uint32_t i = 0; i < n; i++) {
			uint8_t le[8];

			for (unsigned b = 0; b < width; b++)
				le[b] = p[i * width + width - 1 - b];
			if (done + i < kept)
				memcpy(s->array_bytes + (size_t)(done + i) * width,
				       le, width);
			/* FNV-1a, as ht_values_hash, over every element */
			for (unsigned b = 0; kept < count && b < width; b++) {
				h ^= le[b];
				h *= 0x100000001b3u;
			}
		}
		done += n;
	}
	if (kept < count)
		s->array.hash = h;
	return 0;
}

/* An array's link to its class, alone (a primitive array) or before the
 * first n elements, which are no fields: into refs and ref_fields. */
static int array_link(struct hprof_source *s, ht_id class_id, size_t n)
{
	if (reserve_refs(s, n + 1) < 0 || reserve_ref_fields(s, n + 1) < 0)
		return -1;
	s->refs[0] = class_id;
	s->ref_fields[0] = HT_LINK_ID_CLASS;
	memset(s->ref_fields + 1, 0, n * sizeof(*s->ref_fields));
	return 0;
}

/* The next part of the object array being delivered; the first starts
 * with its link to its class, so that elements keep their indexes in the
 * parts after it. */
static int array_part(struct hprof_source *s, struct ht_event *ev,
		      struct ht_error *err)
{
	uint32_t n = s->array_left < REFS_PER_EVENT ? s->array_left
						     : REFS_PER_EVENT;
	bool first = s->array_at == s->array_sub_at + s->array_head;
	size_t k = first ? 1 : 0;
	const uint8_t *p;

	if (first ? array_link(s, s->array_class, n) < 0
		  : reserve_refs(s, n) < 0)
		return fail(s, err, HT_E_NOMEM, s->array_sub_at,
			    "%s", nomem_cause());
	p = in_at(&s->in, s->array_at, (size_t)n * s->id_size);
	if (!p)
		return fail_read(s, err, s->array_sub_at);
	for (uint32_t i = 0; i < n; i++)
		s->refs[k + i] = get_id(s, p + i * s->id_size);
	object_event(s, ev, s->array_sub_at, s->array_id, s->array_class,
		     s->array_size, n + k);
	if (first)
		ev->u.object_references.ref_fields = s->ref_fields;
	s->array_left -= n;
	s->array_at += (uint64_t)n * s->id_size;
	if (s->array_left)
		ev->u.object_references.flags = HT_OBJ_MORE_REFERENCES;
	else
		s->array_open = false;
	return 1;
}

static int array_object(struct hprof_source *s, struct ht_event *ev,
			unsigned tag, uint64_t end, struct ht_error *err)
{
	unsigned id = s->id_size;
	unsigned head = tag == S_OBJ_ARRAY_DUMP ? 1 + 2 * id + 8 : 1 + id + 9;
	const uint8_t *p = end - s->at >= head ? in_at(&s->in, s->at, head)
					       : NULL;
	unsigned type;
	uint64_t bytes;
	uint32_t count;

	if (!p)
		return fail_read(s, err, s->at);
	count = be32(p + 5 + id);
	type = tag == S_OBJ_ARRAY_DUMP ? HPROF_OBJECT : p[9 + id];
	bytes = (uint64_t)count * hprof_type_width(type, id);
	if (end - s->at - head < bytes)
		return fail_read(s, err, s->at);
	s->array_id = get_id(s, p + 1);
	s->array_size = layout_array_size(&jvm_layouts[s->model], type, count);
	s->array_sub_at = s->at;
	s->at += head + bytes;
	if (tag == S_PRIM_ARRAY_DUMP) {
		ht_id class_id = s->prim_array_class[type];

		if (array_link(s, class_id, 0) < 0)
			return fail(s, err, HT_E_NOMEM, s->array_sub_at,
				    "%s", nomem_cause());
		object_event(s, ev, s->array_sub_at, s->array_id, class_id,
			     s->array_size, 1);
		ev->u.object_references.ref_fields = s->ref_fields;
		if (s->want_values) {
			if (array_contents(s, type, count,
					   s->array_sub_at + head) < 0)
				return fail_read(s, err, s->array_sub_at);
			ev->u.object_references.array = &s->array;
		}
		return 1;
	}
	s->array_class = get_id(s, p + 9 + id);
	s->array_left = count;
	s->array_head = head;
	s->array_at = s->array_sub_at + head;
	s->array_open = true;
	return array_part(s, ev, err);
}

static int compare_class_refs(const void *x, const void *y)
{
	const struct class_ref *a = x, *b = y;

	if (a->id != b->id)
		return a->id < b->id ? -1 : 1;
	return (a->offset > b->offset) - (a->offset < b->offset);
}

/* The dump's class objects by id, to go out among its other objects. */
static int sort_class_objects(struct hprof_source *s, const struct dump *d)
{
	s->next_class = 0;
	s->class_in_file = 0;
	if (HPROF_GROW(s->by_id, d->n_classes, s->cap_by_id) < 0)
		return -1;
	if (!d->n_classes)
		return 0;
	memcpy(s->by_id, d->classes, d->n_classes * sizeof(*s->by_id));
	qsort(s->by_id, d->n_classes, sizeof(*s->by_id), compare_class_refs);
	return 0;
}

/* The next object from the file, or a class object before it: 1 an
 * event, 0 the next sub-record is no object. */
static int object_at(struct hprof_source *s, struct ht_event *ev,
		     unsigned tag, uint64_t end, struct ht_error *err)
{
	const struct dump *d = &s->dumps[s->dump];
	const uint8_t *p = end - s->at > s->id_size
				   ? in_at(&s->in, s->at, 1 + s->id_size)
				   : NULL;

	if (!p)
		return fail_read(s, err, s->at);
	if (s->next_class < d->n_classes &&
	    s->by_id[s->next_class].id < get_id(s, p + 1))
		return class_object(s, ev, &s->by_id[s->next_class++], err);
	if (tag == S_INSTANCE_DUMP)
		return instance_object(s, ev, end, err);
	return array_object(s, ev, tag, end, err);
}

/*
 * The next object of the dump: 1 an event, 0 the dump has no more, -1
 * failed. Roots were delivered already and are skipped. Class objects,
 * which HotSpot writes before the others, go out among them in the order
 * of their ids (their addresses): the others come in address order, and
 * a dump whose objects all do spares the analyses a sort.
 */
static int next_object(struct hprof_source *s, struct ht_event *ev,
		       struct ht_error *err)
{
	const struct dump *d = &s->dumps[s->dump];

	if (s->array_open)
		return array_part(s, ev, err);
	for (;;) {
		const struct segment *seg;
		const uint8_t *p;
		uint64_t end;
		unsigned size;

		if (s->seg >= d->n_segs) {
			if (s->next_class < d->n_classes)
				return class_object(
					s, ev, &s->by_id[s->next_class++], err);
			return 0;
		}
		seg = &d->segs[s->seg];
		end = seg->offset + seg->length;
		if (s->at >= end) {
			if (++s->seg < d->n_segs)
				s->at = d->segs[s->seg].offset;
			continue;
		}
		p = in_at(&s->in, s->at, 1);
		if (!p)
			return fail_read(s, err, s->at);
		switch (p[0]) {
		case S_CLASS_DUMP:
			if (s->class_in_file >= d->n_classes ||
			    d->classes[s->class_in_file].offset != s->at)
				return fail_read(s, err, s->at);
			s->at += d->classes[s->class_in_file++].size;
			break;
		case S_INSTANCE_DUMP:
		case S_OBJ_ARRAY_DUMP:
		case S_PRIM_ARRAY_DUMP:
			return object_at(s, ev, p[0], end, err);
		default:
			size = root_body_size(p[0], s->id_size);
			if (!size)
				return fail_read(s, err, s->at);
			s->at += 1 + size;
		}
	}
}

/* ---- The event pass ---------------------------------------------------- */

/* A dump's begin or end at its record's time, in nanoseconds since the
 * header's timestamp (the trace's start), when the dump has times. */
static void dump_time(const struct dump *d, uint32_t us, struct ht_event *ev)
{
	if (!d->begin_us && !d->end_us)
		return;
	ev->has_time = true;
	ev->time = (uint64_t)us * 1000u;
}

static int begin_dump(struct hprof_source *s, struct ht_event *ev,
		      struct ht_error *err)
{
	const struct dump *d = &s->dumps[s->dump];

	if (build_plan(s, d) < 0 || sort_class_objects(s, d) < 0)
		return fail(s, err, HT_E_NOMEM, d->offset, "%s", nomem_cause());
	container_event(s, ev, HT_C_BEGIN, 0, 0, d->offset);
	dump_time(d, d->begin_us, ev);
	s->phase = PH_ROOTS;
	return 1;
}

static int next_root_step(struct hprof_source *s, struct ht_event *ev,
			  struct ht_error *err)
{
	const struct dump *d = &s->dumps[s->dump];

	if (s->plan_at < s->n_plan) {
		const struct step *st = &s->plan[s->plan_at++];

		if (step_event(s, st, ev) < 0)
			return fail(s, err, HT_E_NOMEM, st->offset,
				    "%s", nomem_cause());
		return 1;
	}
	container_event(s, ev, HT_C_HEAP, 0, 0,
			d->n_segs ? d->segs[0].offset : d->offset);
	s->seg = 0;
	s->at = d->n_segs ? d->segs[0].offset : 0;
	s->phase = PH_OBJECTS;
	return 1;
}

static int end_dump(struct hprof_source *s, struct ht_event *ev,
		    struct ht_error *err)
{
	const struct dump *d = &s->dumps[s->dump];

	if (!d->closed)
		return fail_with(s, &s->damage, err);
	container_event(s, ev, HT_C_END, 0, 0, d->end_offset);
	dump_time(d, d->end_us, ev);
	s->dump++;
	s->phase = PH_DUMP;
	return 1;
}

static int hprof_next(void *self, struct ht_event *ev, struct ht_error *err)
{
	struct hprof_source *s = self;
	int rc;

	for (;;) {
		switch (s->phase) {
		case PH_CLASSES:
		case PH_FIELDS:
		case PH_THREADS:
		case PH_METHODS:
			rc = next_name(s, ev, err);
			if (rc != 0)
				return rc;
			break;
		case PH_DUMP:
			if (s->dump < s->n_dumps)
				return begin_dump(s, ev, err);
			if (s->damaged)
				return fail_with(s, &s->damage, err);
			s->phase = PH_DONE;
			break;
		case PH_ROOTS:
			return next_root_step(s, ev, err);
		case PH_OBJECTS:
			rc = next_object(s, ev, err);
			if (rc != 0)
				return rc;
			s->phase = PH_DUMP_END;
			break;
		case PH_DUMP_END:
			return end_dump(s, ev, err);
		case PH_DONE:
			return 0;
		case PH_FAILED:
			if (err)
				*err = s->failure;
			return -1;
		}
	}
}

static struct ht_position hprof_position(const void *self)
{
	const struct hprof_source *s = self;

	return s->last;
}

static const struct ht_loss *hprof_loss(const void *self)
{
	const struct hprof_source *s = self;

	return &s->loss;
}

static void free_dumps(struct hprof_source *s)
{
	for (size_t i = 0; i < s->n_dumps; i++) {
		free(s->dumps[i].segs);
		free(s->dumps[i].roots);
		free(s->dumps[i].classes);
	}
	free(s->dumps);
}

static void free_classes(struct hprof_source *s)
{
	for (size_t i = 0; i < s->n_classes; i++) {
		struct hclass *c = &s->classes[i];

		free(c->types);
		free(c->names);
		free(c->own_refs);
		free(c->static_names);
		for (int m = 0; m < JVM_MODELS_; m++)
			if (c->has_layout[m])
				layout_free(&c->layout[m]);
	}
	free(s->classes);
}

static void hprof_close(void *self)
{
	struct hprof_source *s = self;

	if (!s)
		return;
	free_classes(s);
	free_dumps(s);
	idmap_free(&s->utf8);
	idmap_free(&s->loaded_by_serial);
	idmap_free(&s->loaded_by_id);
	idmap_free(&s->class_by_id);
	idmap_free(&s->frame_by_id);
	idmap_free(&s->method_by_key);
	idmap_free(&s->trace_by_serial);
	idmap_free(&s->trace_by_thread);
	idmap_free(&s->thread_by_serial);
	idmap_free(&s->chase_by_thread);
	idmap_free(&s->string_slot);
	idmap_free(&s->array_slot);
	free(s->utf8_text);
	free(s->loaded);
	free(s->frames);
	free(s->traces);
	free(s->frame_ids);
	free(s->threads);
	free(s->chases);
	free(s->strings_wanted);
	free(s->arrays_wanted);
	free(s->plan);
	free(s->plan_refs);
	free(s->by_id);
	free(s->refs);
	free(s->ref_fields);
	free(s->value_fields);
	free(s->values);
	free(s->fields);
	free(s->zero_flags);
	free(s->name_buf);
	free(s->in.buf);
	mem_budget_release(s->in.cap);
	mem_budget_release(s->charged);
	text_free(&s->text);
	if (s->inflated)
		fclose(s->inflated);
	if (s->spool)
		fclose(s->spool);
	/* standard input stays open for whoever reads it next */
	if (s->f && s->f != stdin)
		fclose(s->f);
	free(s);
}

static const struct ht_source_ops hprof_ops = {
	.format = "hprof",
	.next = hprof_next,
	.position = hprof_position,
	.loss = hprof_loss,
	.index = NULL,
	.close = hprof_close,
};

/* ---- Opening ----------------------------------------------------------- */

/* A pipe is copied to a temporary file: the dump is read twice. */
static int spool(struct hprof_source *s, struct ht_error *err)
{
	char buf[1 << 16];
	size_t n;
	uint64_t total = 0;

	s->spool = tmpfile();
	if (!s->spool) {
		err_sys(err, errno, s->path, "cannot make a temporary copy");
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), s->f)) > 0) {
		if (fwrite(buf, 1, n, s->spool) != n) {
			err_sys(err, errno, s->path,
				"cannot make a temporary copy");
			return -1;
		}
		total += n;
	}
	if (ferror(s->f)) {
		err_sys(err, errno ? errno : EIO, s->path, "cannot read");
		return -1;
	}
	if (fflush(s->spool) != 0) {
		err_sys(err, errno, s->path, "cannot make a temporary copy");
		return -1;
	}
	s->in.fd = fileno(s->spool);
	s->in.base = 0;
	s->in.size = total;
	return 0;
}

static int attach_input(struct hprof_source *s, struct ht_error *err)
{
	struct stat st;
	off_t at = ftello(s->f);

	if (fstat(fileno(s->f), &st) != 0 || !S_ISREG(st.st_mode) || at < 0)
		return spool(s, err);
	s->in.fd = fileno(s->f);
	s->in.base = at;
	s->in.size = st.st_size > at ? (uint64_t)(st.st_size - at) : 0;
	return 0;
}

static int read_file_header(struct hprof_source *s, struct ht_error *err)
{
	size_t have = s->in.size < FILE_HEADER_LEN ? (size_t)s->in.size
						   : FILE_HEADER_LEN;
	size_t prefix = strlen(MAGIC_PREFIX);
	const uint8_t *p = in_at(&s->in, 0, have);

	if (!p && s->in.io_errno == ENOMEM) {
		err_plain(err, HT_E_NOMEM, s->path, "%s", nomem_cause());
		return -1;
	}
	if (!p) {
		err_sys(err, s->in.io_errno ? s->in.io_errno : EIO, s->path,
			"cannot read");
		return -1;
	}
	if (memcmp(p, MAGIC_PREFIX, have < prefix ? have : prefix) != 0) {
		err_plain(err, HT_E_FORMAT, s->path, HT_NOT_A_TRACE);
		return -1;
	}
	if (have < FILE_HEADER_LEN) {
		err_at_offset(err, HT_E_TRUNCATED, s->path, 0,
			      "file ends inside the HPROF header (%zu of %d "
			      "bytes)", have, FILE_HEADER_LEN);
		return -1;
	}
	if ((memcmp(p + prefix, "1.0.1", 6) != 0 &&
	     memcmp(p + prefix, "1.0.2", 6) != 0)) {
		err_at_offset(err, HT_E_FORMAT, s->path, prefix,
			      "HPROF version \"%.5s\" is not supported (1.0.1 "
			      "and 1.0.2 are)", (const char *)p + prefix);
		return -1;
	}
	memcpy(s->version, p + prefix, 6);
	s->id_size = be32(p + MAGIC_LEN);
	if (s->id_size != 4 && s->id_size != 8) {
		err_at_offset(err, HT_E_FORMAT, s->path, MAGIC_LEN,
			      "identifier size %u (HPROF ids of 4 or 8 bytes "
			      "are supported)", s->id_size);
		return -1;
	}
	s->timestamp_ms = be64(p + MAGIC_LEN + 4);
	return 0;
}

/*
 * Inflates a gzipped dump once, into a temporary file that every pass then
 * reads as a plain dump. The passes jump back (the event pass reads the
 * records a dump's objects refer to), and a backward seek in a gzip stream
 * inflates again from its start: read through zlib, a 12 MB gzip of a
 * 44 MB dump took minutes where the plain dump takes a second. A gzip cut
 * short ends the HPROF there, and the index pass says where that falls;
 * damaged compressed data is refused at open, as nothing past it can be
 * read. The copy costs the dump's size on the temporary directory's disk.
 */
static int inflate_gzip(struct hprof_source *s, gzFile gz,
			struct ht_error *err)
{
	unsigned char buf[1 << 16];
	uint64_t total = 0;
	const char *msg, *colon;
	int r, zerr;

	s->inflated = tmpfile();
	if (!s->inflated) {
		err_sys(err, errno, s->path, "cannot make a temporary copy");
		return -1;
	}
	while ((r = gzread(gz, buf, sizeof(buf))) > 0) {
		if (fwrite(buf, 1, (size_t)r, s->inflated) != (size_t)r) {
			err_sys(err, errno, s->path,
				"cannot make a temporary copy");
			return -1;
		}
		total += (uint64_t)r;
	}
	msg = gzerror(gz, &zerr);
	if (gzdirect(gz)) {
		err_plain(err, HT_E_FORMAT, s->path, HT_NOT_A_TRACE);
		return -1;
	}
	if (zerr == Z_MEM_ERROR) {
		err_plain(err, HT_E_NOMEM, s->path, "%s", nomem_cause());
		return -1;
	}
	if (zerr == Z_ERRNO) {
		err_sys(err, errno ? errno : EIO, s->path, "cannot read");
		return -1;
	}
	if (zerr != Z_OK && zerr != Z_BUF_ERROR) {
		/* zlib's message starts with the name it knows, "<fd:N>: " */
		colon = strstr(msg, ": ");
		err_at_offset(err, HT_E_CORRUPT, s->path, total,
			      "damaged gzip data (%s)", colon ? colon + 2 : msg);
		return -1;
	}
	if (fflush(s->inflated) != 0) {
		err_sys(err, errno, s->path, "cannot make a temporary copy");
		return -1;
	}
	s->in.fd = fileno(s->inflated);
	s->in.base = 0;
	s->in.size = total;
	s->in.gz_cut = zerr == Z_BUF_ERROR;
	return 0;
}

/* Puts zlib between the file and the copy, on a descriptor of its own
 * that starts where the gzip does. */
static int attach_gzip(struct hprof_source *s, struct ht_error *err)
{
	int fd = dup(s->in.fd), rc;
	gzFile gz;

	if (fd < 0 || lseek(fd, s->in.base, SEEK_SET) < 0) {
		err_sys(err, errno, s->path, "cannot read");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	gz = gzdopen(fd, "rb");
	if (!gz) {
		close(fd);
		err_plain(err, HT_E_NOMEM, s->path, "%s", nomem_cause());
		return -1;
	}
	rc = inflate_gzip(s, gz, err);
	gzclose_r(gz);
	return rc;
}

/* A gzipped file that is not an HPROF dump is refused in words of its
 * own: "not a trace" would send the user looking at the wrong bytes. One
 * that starts as a dump goes on to read_file_header, which says where a
 * cut one ends. */
static int check_gzipped_hprof(struct hprof_source *s, struct ht_error *err)
{
	size_t prefix = strlen(MAGIC_PREFIX);
	size_t have = s->in.size < prefix ? (size_t)s->in.size : prefix;
	const uint8_t *p = have ? in_at(&s->in, 0, have) : NULL;

	if (have && (!p || memcmp(p, MAGIC_PREFIX, have) == 0))
		return 0;
	if (!have && s->in.gz_cut)
		err_at_offset(err, HT_E_TRUNCATED, s->path, 0,
			      "the gzip data ends before the first byte of "
			      "what it holds");
	else if (!have)
		err_plain(err, HT_E_FORMAT, s->path,
			  "a gzipped empty file: not a trace");
	else
		err_plain(err, HT_E_FORMAT, s->path,
			  "gzipped, but not an HPROF heap dump: only a Java "
			  "heap dump is read gzipped");
	return -1;
}

static int open_source(struct ht_reader *r, FILE *f, const char *path,
		       bool gzipped, struct ht_error *err)
{
	struct hprof_source *s = calloc(1, sizeof(*s));
	char why[128];

	if (!s) {
		if (f != stdin)
			fclose(f);
		err_plain(err, HT_E_NOMEM, path, "%s", nomem_cause());
		return -1;
	}
	s->path = path;
	s->f = f;
	s->string_value_at = STRING_FIELDS_UNKNOWN;
	s->choice = r->options.compressed_oops; /* checked by reader.c */
	s->want_values = r->options.values;
	if (attach_input(s, err) < 0 ||
	    (gzipped && (attach_gzip(s, err) < 0 ||
			 check_gzipped_hprof(s, err) < 0)) ||
	    read_file_header(s, err) < 0) {
		hprof_close(s);
		return -1;
	}
	index_file(s);
	name_threads(s);
	decide_model(s, why, sizeof(why));
	fill_header(s, why);
	r->ops = &hprof_ops;
	r->self = s;
	r->header = &s->header;
	return 0;
}

int hprof_source_open(struct ht_reader *r, FILE *f, const char *path,
		      struct ht_error *err)
{
	return open_source(r, f, path, false, err);
}

int hprof_source_open_gzip(struct ht_reader *r, FILE *f, const char *path,
			   struct ht_error *err)
{
	return open_source(r, f, path, true, err);
}
