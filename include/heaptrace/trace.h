/*
 * heaptrace/trace.h - the event model, and reading and replaying traces.
 *
 * One event mirrors one profiler callback (or one query result the profiler
 * recorded) with its arguments kept: see heaptrace(1) and heaptrace(5).
 * A reader yields the events of a trace in recorded order, whatever the input
 * form (.ht binary, its YAML twin); a replay drives a table of callbacks
 * through the protocol state machine, which is how every analysis consumes a
 * trace.
 *
 * Errors are values: functions that can fail fill a struct ht_error whose
 * message names the file, the offset and the cause.
 */
#ifndef HEAPTRACE_TRACE_H
#define HEAPTRACE_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Version 2 added the fields event and the ref_fields and root_fields of
 * references; version 3 the time of GC starts and finishes and of
 * containers (a dump's begin and end), and values; version 4 allocation
 * sites: the stack event, the stack of an object_allocated, a method's
 * file and line. Versions 1 to 3 still read (they carry none of what
 * came after them). */
#define HT_FORMAT_VERSION 4

/* An object, class, thread, method, stack or container id as the runtime
 * gave it. Object ids are addresses and change when a GC moves objects. */
typedef uint64_t ht_id;

enum ht_event_type {
	HT_EV_CLASS = 1,
	HT_EV_THREAD,
	HT_EV_METHOD,
	HT_EV_OBJECT_ALLOCATED,
	HT_EV_GC_STARTED,
	HT_EV_GENERATION_BOUNDS,
	HT_EV_MOVED_REFERENCES,
	HT_EV_SURVIVING_REFERENCES,
	HT_EV_GC_FINISHED,
	HT_EV_BEGIN_CONTAINER,
	HT_EV_ROOT_REFERENCES,
	HT_EV_OBJECT_REFERENCES,
	HT_EV_FIELDS,
	HT_EV_STACK, /* version 4 */
};
#define HT_EV_FIRST HT_EV_CLASS
#define HT_EV_LAST HT_EV_STACK

/* CONTAINER_TYPE of the Microsoft VM's IHeapInfoCallback, same numbers. */
enum ht_container_type {
	HT_C_BEGIN = 1,
	HT_C_RT_THREAD = 2,
	HT_C_RT_JIT = 3,
	HT_C_RT_NATIVE = 4,
	HT_C_RT_NATIVEGC = 5,
	HT_C_RT_COM = 6,
	HT_C_RT_INTERPRETED = 7,
	HT_C_RT_FASTINTERPRETED = 8,
	HT_C_RT_INTERNALFRAME = 9,
	HT_C_RT_INTERNALVM = 10,
	HT_C_RT_CLASS = 11,
	HT_C_RT_ROOTTABLE = 12,
	HT_C_RT_STRONGPTR = 13,
	HT_C_RT_FINALIZED = 14,
	HT_C_HEAP = 15,
	HT_C_END = 16,
};
#define HT_C_FIRST HT_C_BEGIN
#define HT_C_LAST HT_C_END

/* JVM_OBJECT_FLAGS, same bits. */
#define HT_OBJ_ALREADY_REPORTED 0x00001u
#define HT_OBJ_ALREADY_VISITED 0x00002u
#define HT_OBJ_MORE_REFERENCES 0x10000u

/* ref_flags of object_references. A dependent reference is no field: a
 * dependent handle (the CLR's ConditionalWeakTable) makes the referrer,
 * its key, keep the referent, its value, alive. Readers that know no
 * ref_flags take it for a reference like any other, which it is for
 * reachability. */
#define HT_REF_DEPENDENT 0x1u

/* What the profiler's callback returned. */
enum ht_result {
	HT_RESULT_OK = 0,       /* S_OK */
	HT_RESULT_POSTPONE = 1, /* S_POSTPONE_REFERENCES */
	HT_RESULT_ABORT = 2,    /* E_FAIL: abort the heap dump */
};

/* COR_PRF_GC_ROOT_KIND, same numbers. */
enum ht_root_kind {
	HT_ROOT_OTHER = 0,
	HT_ROOT_STACK = 1,
	HT_ROOT_FINALIZER = 2,
	HT_ROOT_HANDLE = 3,
};
#define HT_ROOT_KIND_LAST HT_ROOT_HANDLE

/* COR_PRF_GC_ROOT_FLAGS, same bits. A weak root retains nothing. */
#define HT_ROOT_PINNING 0x1u
#define HT_ROOT_WEAK 0x2u
#define HT_ROOT_INTERIOR 0x4u
#define HT_ROOT_REFCOUNTED 0x8u
#define HT_ROOT_FLAGS_ALL 0xFu

/* COR_PRF_GC_REASON. */
enum ht_gc_reason {
	HT_GC_OTHER = 0,
	HT_GC_INDUCED = 1,
};

/* Whether a field belongs to each instance or to its class; the last four
 * (version 3) are instance fields that hold their referent less than
 * strongly, as java.lang.ref's SoftReference, WeakReference,
 * FinalReference and PhantomReference hold theirs: the strength is the
 * field's, so a trace declares one referent field per strength. Readers
 * before them refuse such a field as a kind out of range. */
enum ht_field_kind {
	HT_FIELD_INSTANCE = 0,
	HT_FIELD_STATIC = 1,
	HT_FIELD_SOFT = 2,
	HT_FIELD_WEAK = 3,
	HT_FIELD_FINAL = 4,
	HT_FIELD_PHANTOM = 5,
};
#define HT_FIELD_KIND_LAST HT_FIELD_PHANTOM

/* The JVM's basic types (HPROF and JVMTI number them alike): the type of
 * a primitive field and of a primitive array's elements (version 3,
 * values; doc/design.md section 1). A field without a type, or of type
 * HT_TYPE_OBJECT, is a reference. */
enum ht_value_type {
	HT_TYPE_NONE = 0,
	HT_TYPE_OBJECT = 2,
	HT_TYPE_BOOLEAN = 4,
	HT_TYPE_CHAR = 5,
	HT_TYPE_FLOAT = 6,
	HT_TYPE_DOUBLE = 7,
	HT_TYPE_BYTE = 8,
	HT_TYPE_SHORT = 9,
	HT_TYPE_INT = 10,
	HT_TYPE_LONG = 11,
};
#define HT_TYPE_LAST HT_TYPE_LONG

/* Bytes a value of a primitive type takes; 0 for a reference or a number
 * that is no primitive type. Names: ht_value_type_name. */
unsigned ht_value_type_width(unsigned type);

/* A producer keeps a primitive array's contents whole up to this many
 * bytes; a longer one, its first HT_VALUES_PREFIX bytes and the hash of
 * all (ht_values_hash). A reader takes any prefix. */
#define HT_VALUES_WHOLE_MAX 256
#define HT_VALUES_PREFIX 64
/* 64-bit FNV-1a of an array's element bytes, little-endian elements. */
uint64_t ht_values_hash(const uint8_t *bytes, size_t n);

/* A value of a primitive type from its little-endian bytes, as values
 * carries it: signed types sign-extended, char and boolean unsigned,
 * float and double their IEEE bits. */
uint64_t ht_value_load(unsigned type, const uint8_t *bytes);
/* The inverse: false (nothing written) when v is out of the type's
 * range or the type is no primitive. */
bool ht_value_store(unsigned type, uint64_t v, uint8_t *bytes);

/* A primitive array's contents (version 3, object_references.array). */
struct ht_array_values {
	uint8_t type;        /* element type: a primitive HT_TYPE_* */
	uint64_t length;     /* elements in the array */
	uint64_t stored;     /* elements whose bytes follow: all or a prefix */
	const uint8_t *data; /* stored * width bytes, each element's
				little-endian whatever the runtime's order */
	uint64_t hash;       /* when stored < length: ht_values_hash of all
				length * width bytes; 0 otherwise */
};

/* One reference field, as a fields event declares it. A reference names a
 * field by id (ref_fields, root_fields); the field is declared before the
 * end of the dump in which a reference names it, as class names are. */
struct ht_field {
	ht_id id;         /* the trace's own number for the field: nonzero,
			     unique in the trace; recorders choose small dense
			     numbers (1, 2, 3, ...) so they encode short */
	ht_id class_id;   /* the class that declares it; 0 for a link */
	const char *name; /* as the language writes it */
	uint8_t kind;     /* enum ht_field_kind */
	bool has_offset;
	uint64_t offset;  /* bytes from the object's start (instance fields)
			     or the statics' start, as the runtime gives it */
	/* version 3, values: a primitive field's enum ht_value_type; 0 (or
	 * HT_TYPE_OBJECT) a reference field. Last, so that initializers of
	 * the members above stay valid. */
	uint8_t type;
};

/* Links: references the runtime keeps that no class declares, each a
 * field of class 0 under one of these names (heaptrace(5)): an object to
 * its class, and a class object to its superclass, class loader, signers
 * and protection domain, as Eclipse MAT names them. */
#define HT_LINK_CLASS "<class>"
#define HT_LINK_SUPER "<super>"
#define HT_LINK_LOADER "<classloader>"
#define HT_LINK_SIGNERS "<signers>"
#define HT_LINK_DOMAIN "<protection_domain>"

/* The field ids the HPROF reader and the JVM recorder give the links, the
 * first of every trace they make, so that their traces of one program
 * name every reference alike; the classes' own fields follow from
 * HT_LINK_ID_END. Other recorders may number links as they like. */
enum ht_link_id {
	HT_LINK_ID_CLASS = 1,
	HT_LINK_ID_SUPER,
	HT_LINK_ID_LOADER,
	HT_LINK_ID_SIGNERS,
	HT_LINK_ID_DOMAIN,
	HT_LINK_ID_END,
};

/* The most frames a stack event holds (version 4): a producer keeps the
 * innermost ones of a deeper stack. */
#define HT_STACK_MAX_FRAMES 1024

/* Generations as the CLR numbers them. */
#define HT_GEN_LOH 3 /* large object heap */
#define HT_GEN_POH 4 /* pinned object heap */
#define HT_GEN_MAX 31 /* gc_started.generations is a bit set of 0..31 */

/* COR_PRF_GC_GENERATION_RANGE. */
struct ht_generation_range {
	uint32_t generation;
	ht_id start;
	uint64_t length;   /* bytes in use */
	uint64_t reserved; /* bytes reserved */
};

/* One block of MovedReferences: old <= id < old + length moves to
 * new + (id - old). */
struct ht_moved_block {
	ht_id old_id;
	ht_id new_id;
	uint64_t length;
};

/* One block of SurvivingReferences: objects in it stay where they are. */
struct ht_surviving_block {
	ht_id start;
	uint64_t length;
};

/*
 * One event. `type` says which member of the union is set. Arrays belong to
 * whoever produced the event: a reader keeps them valid until its next call,
 * the recording shim only reads them during the call. Optional parallel
 * arrays are NULL when absent; optional scalars have a has_ flag.
 */
struct ht_event {
	enum ht_event_type type;
	union {
		struct ht_ev_class {
			ht_id id;
			const char *name;
			bool has_size;
			uint64_t size; /* instance size */
		} class_;
		struct ht_ev_named {
			ht_id id;
			const char *name;
		} thread;
		struct ht_ev_method {
			ht_id id;
			const char *name;
			/* version 4, where the runtime says: the source
			 * file (NULL: not known) and line (0: not known)
			 * of the method, or of the place in it a frame
			 * stands at */
			const char *file;
			uint32_t line;
		} method;
		struct ht_ev_object_allocated {
			ht_id id;
			ht_id class_id;
			uint64_t size;
			/* version 4: the stack that allocated it (a stack
			 * event's id), 0 when not recorded */
			ht_id stack;
		} object_allocated;
		struct ht_ev_gc_started {
			bool has_gc;
			uint64_t gc;          /* the runtime's GC number */
			uint32_t generations; /* bit g set: generation g collected */
			enum ht_gc_reason reason;
		} gc_started;
		struct ht_ev_generation_bounds {
			size_t count;
			const struct ht_generation_range *ranges;
		} generation_bounds;
		struct ht_ev_moved_references {
			size_t count;
			const struct ht_moved_block *blocks;
		} moved_references;
		struct ht_ev_surviving_references {
			size_t count;
			const struct ht_surviving_block *blocks;
		} surviving_references;
		struct ht_ev_begin_container {
			enum ht_container_type type;
			ht_id id1;
			ht_id id2;
		} begin_container;
		struct ht_ev_root_references {
			size_t count;
			const ht_id *refs;
			const uint32_t *flags;      /* JVM_OBJECT_FLAGS per ref */
			const uint8_t *kinds;       /* optional: enum ht_root_kind */
			const uint8_t *root_flags;  /* optional: HT_ROOT_* bits */
			const ht_id *root_ids;      /* optional: CLR root ids */
			enum ht_result result;
			/* version 2, last so that initializers of the
			 * members above stay valid */
			const ht_id *root_fields;   /* optional: the static field
						       a root is, 0 = none */
		} root_references;
		struct ht_ev_object_references {
			ht_id id;
			ht_id class_id;
			uint64_t size;
			uint32_t flags; /* JVM_OBJECT_FLAGS of the object */
			size_t count;
			const ht_id *refs;          /* field order, 0 = null */
			const uint32_t *ref_flags;  /* optional, parallel to refs */
			bool has_generation;
			uint32_t generation;
			enum ht_result result;
			/* version 2, optional, parallel to refs: the field
			 * each ref was read from, 0 = none (an array element,
			 * or unknown). When present, a null ref may be left
			 * out without shifting the others. */
			const ht_id *ref_fields;
			/* version 3, values: the primitive fields read
			 * (field ids, declared with a type) and parallel
			 * their values, each its bits as a signed 64-bit
			 * number (signed types sign-extended, char and
			 * boolean unsigned, float and double their IEEE
			 * bits); and a primitive array's contents. */
			size_t n_values;
			const ht_id *value_fields;
			const uint64_t *values;
			const struct ht_array_values *array; /* or NULL */
		} object_references;
		struct ht_ev_fields {
			size_t count;
			const struct ht_field *fields;
		} fields;
		/* version 4: a stack, interned: declared once by its id
		 * (nonzero, unique in the trace), before the first
		 * object_allocated that names it; its frames are method
		 * ids, the innermost (the allocating method) first. */
		struct ht_ev_stack {
			ht_id id;
			size_t count; /* at most HT_STACK_MAX_FRAMES */
			const ht_id *frames;
		} stack;
	} u;
	/* version 3, on gc_started, gc_finished and begin_container only:
	 * when it happened, in nanoseconds of a monotonic clock since the
	 * trace's start (the recorder's open; an HPROF dump's header time).
	 * Last, so that initializers of the members above stay valid. */
	bool has_time;
	uint64_t time;
};

/* Whether an event of this type may carry a time (version 3):
 * gc_started, gc_finished, begin_container. */
bool ht_event_timed_type(enum ht_event_type type);

/* Trace header: who was recorded, and how the runtime reports. */
struct ht_metadata {
	const char *key;
	const char *value;
};

struct ht_header {
	uint32_t version;            /* HT_FORMAT_VERSION */
	const char *runtime;         /* "clr", "mono", "jvm", "msjvm", ... or NULL */
	const char *runtime_version; /* or NULL */
	uint32_t pointer_size;       /* 4 or 8 */
	bool reports_survivors;      /* every survivor inside a GC's start
				      * bounds is reported as a block */
	const char *command_line;    /* of the recorded process, or NULL */
	bool has_start_time;
	int64_t start_time;          /* seconds since the epoch, UTC */
	size_t n_metadata;
	const struct ht_metadata *metadata;
};

/* Names used everywhere: C API, YAML, `heaptrace cat`, man pages. NULL for
 * a value out of range; the parse functions return -1 for an unknown name. */
const char *ht_event_name(enum ht_event_type type);
const char *ht_container_name(enum ht_container_type type); /* "C_RT_JIT" */
const char *ht_result_name(enum ht_result result);          /* "ok" */
const char *ht_root_kind_name(enum ht_root_kind kind);      /* "stack" */
const char *ht_gc_reason_name(enum ht_gc_reason reason);    /* "induced" */
const char *ht_field_kind_name(enum ht_field_kind kind);    /* "static" */
const char *ht_value_type_name(unsigned type);              /* "int" */
int ht_event_parse(const char *name);
int ht_container_parse(const char *name);
int ht_result_parse(const char *name);
int ht_root_kind_parse(const char *name);
int ht_gc_reason_parse(const char *name);
int ht_field_kind_parse(const char *name);
int ht_value_type_parse(const char *name);

/* Whether containers of this type are stack frames (C_RT_JIT through
 * C_RT_INTERNALFRAME): a frame belongs to the thread container begun
 * before it, and its id2 names its method. False for any other value. */
bool ht_container_is_frame(enum ht_container_type type);

/*
 * Errors. `message` is complete and ready to print ("trace.ht: byte 4096:
 * chunk CRC mismatch ..."); `code` is for programs.
 */
enum ht_error_code {
	HT_OK = 0,
	HT_E_IO,         /* open/read/write failed: errno in sys_errno */
	HT_E_NOMEM,
	HT_E_FORMAT,     /* not a trace, bad magic, unsupported version */
	HT_E_CORRUPT,    /* damaged: CRC mismatch, undecodable payload */
	HT_E_TRUNCATED,  /* the file ends inside a chunk or header */
	HT_E_SYNTAX,     /* YAML text form: line and column in the message */
	HT_E_INVALID,    /* an argument or field out of range */
	HT_E_LIMIT,      /* a count or length past a documented limit */
	HT_E_STATE,      /* call not valid now (e.g. recorder stopped) */
};

struct ht_error {
	enum ht_error_code code;
	int sys_errno;
	uint64_t offset; /* byte offset in the input, where it applies */
	unsigned line;   /* 1-based line in a text input, 0 if none */
	unsigned column; /* 1-based column, 0 if none */
	char message[512];
};

/* ---- Reading ---------------------------------------------------------- */

struct ht_reader;

/* Where an event came from, for messages: its 0-based index in the trace,
 * the byte offset of the chunk (or of the YAML node) that holds it, its
 * offset inside the chunk's uncompressed payload, and for text its line and
 * column. */
struct ht_position {
	uint64_t event_index;
	uint64_t offset;
	uint64_t chunk_offset;   /* offset inside the uncompressed chunk */
	unsigned line, column;   /* 0 when not a text input */
};

/* What a damaged or truncated input lost: set when ht_reader_next stopped
 * early. Every event before the damage was delivered. */
struct ht_loss {
	bool lost;
	uint64_t offset;        /* where the damage starts */
	uint64_t bytes_lost;    /* bytes from there to the end of the file */
	uint64_t chunks_read;   /* intact chunks delivered */
	bool events_known;      /* the index survived: the counts below hold */
	uint64_t events_lost;
	uint64_t dumps_lost;
	uint64_t gcs_lost;
	/* The file ends inside its last chunk (or trailer) and has no
	 * index: its writer stopped in the middle of a write, as a process
	 * killed while the recorder wrote does, and nothing follows. */
	bool torn_tail;
};

/* What the index at the end of a .ht file says, when it is there. A file
 * without one was not closed by its recorder (the process crashed or was
 * killed): still fully readable, by scanning. */
struct ht_index_info {
	bool present;
	uint64_t events;
	uint64_t dumps;  /* C_BEGIN ... C_END brackets */
	uint64_t gcs;
	uint64_t chunks; /* event chunks */
	/* what the recording shim counted while recording */
	uint64_t recorder_violations[32];
	uint64_t dropped_events; /* events the shim could not record */
};

/* Opens FILE, sniffing its form (.ht, YAML text, or a supported foreign
 * dump), with the default options. "-" reads standard input. Returns NULL
 * and fills err on failure. */
struct ht_reader *ht_reader_open(const char *path, struct ht_error *err);

/* How the JVM that wrote an HPROF heap dump laid out references, which the
 * dump does not record and object sizes depend on (heaptrace(1), INPUT
 * FORMATS). */
enum ht_compressed_oops {
	HT_COMPRESSED_OOPS_AUTO = 0, /* told from the objects' addresses */
	HT_COMPRESSED_OOPS_YES,      /* 4-byte references, 12-byte headers */
	HT_COMPRESSED_OOPS_NO,       /* 8-byte references, compressed class
					pointers (JDK 15 and later) */
};

/* What a caller may tell a reader about its input; all zero (or a NULL
 * pointer) for the defaults, which are what ht_reader_open uses. Forms a
 * setting does not concern ignore it. */
struct ht_reader_options {
	enum ht_compressed_oops compressed_oops; /* HPROF only */
	/* HPROF only: deliver values (format version 3): each class's
	 * primitive instance fields declared with their types, each
	 * instance's values, each primitive array's contents (whole up to
	 * HT_VALUES_WHOLE_MAX bytes, else a prefix and the hash). Off, the
	 * events are those of a reader from before values. Other inputs
	 * deliver what they hold. */
	bool values;
	/* .ht only: a second thread reads, checks and inflates the next
	 * chunks while the caller decodes the current one, for a faster
	 * read on two cores. The events, errors and losses are the same as
	 * without it; the reader holds two more chunks. The thread starts at
	 * the first ht_reader_next and ends by ht_reader_close at the
	 * latest; the reader stays single-threaded to its caller. */
	bool read_ahead;
};

/* As ht_reader_open, with options (NULL for the defaults). A value out of
 * range is refused with HT_E_INVALID, before the file is opened. */
struct ht_reader *ht_reader_open_with(const char *path,
				      const struct ht_reader_options *options,
				      struct ht_error *err);
void ht_reader_close(struct ht_reader *r);

/* The trace header; valid until ht_reader_close. */
const struct ht_header *ht_reader_header(const struct ht_reader *r);

/* "ht", "yaml", ... */
const char *ht_reader_format(const struct ht_reader *r);

/* The path as given to ht_reader_open ("-" for standard input), which
 * messages about the trace name it by; valid until ht_reader_close. */
const char *ht_reader_path(const struct ht_reader *r);

/* Next event: 1 and *ev filled (valid until the next call), 0 at the end,
 * -1 on an error (err filled; ht_reader_loss tells what was lost). */
int ht_reader_next(struct ht_reader *r, struct ht_event *ev,
		   struct ht_error *err);

/* Position of the event last returned. */
struct ht_position ht_reader_position(const struct ht_reader *r);
const struct ht_loss *ht_reader_loss(const struct ht_reader *r);

/* The index of a .ht file, read at open when the file has one; NULL for
 * inputs that have no index at all (the YAML form). After the last event,
 * present == false means the file had none. */
const struct ht_index_info *ht_reader_index(const struct ht_reader *r);

/* After the last event or a read error: r is a trace its recorder never
 * closed (no index: the process was killed or crashed), read up to where
 * the writing stopped: the end of its last whole chunk, or inside a last
 * write the process's end tore (ht_loss.torn_tail). Such a trace is *cut
 * off*: sound as far as it goes. False for inputs without an index (YAML,
 * HPROF) and for damage anywhere else. */
bool ht_reader_cut_off(const struct ht_reader *r);

/* ---- Protocol violations ------------------------------------------------ */

/* Each rule of the protocol (heaptrace(5), PROTOCOL) has a code;
 * the name and a one-line description come from the functions below. */
enum ht_violation_code {
	HT_V_NONE = 0,
	HT_V_DUMP_NESTED,           /* C_BEGIN inside an open dump */
	HT_V_DUMP_NOT_OPEN,         /* container or C_END outside a dump */
	HT_V_DUMP_IN_GC,            /* C_BEGIN between gc_started and gc_finished */
	HT_V_DUMP_UNFINISHED,       /* trace ends inside a dump */
	HT_V_REFS_OUTSIDE,          /* root/object references outside dump and GC */
	HT_V_ROOTS_NO_CONTAINER,    /* root_references before any container */
	HT_V_ROOTS_IN_HEAP,         /* root_references in C_HEAP */
	HT_V_FRAME_NO_THREAD,       /* frame container before any C_RT_THREAD */
	HT_V_AFTER_HEAP,            /* a container other than C_END after C_HEAP */
	HT_V_AFTER_ABORT,           /* anything but C_END after an abort */
	HT_V_CONTINUATION_MISSING,  /* MORE_REFERENCES never continued */
	HT_V_CONTINUATION_MISMATCH, /* continuation with another class or size */
	HT_V_GC_NESTED,             /* gc_started inside a GC */
	HT_V_GC_NOT_OPEN,           /* gc_finished, moves or survivals outside a GC */
	HT_V_GC_IN_DUMP,            /* gc_started inside a heap dump */
	HT_V_GC_UNFINISHED,         /* trace ends inside a GC */
	HT_V_BOUNDS_IN_GC,          /* generation_bounds between a GC's start and finish */
	HT_V_BAD_VALUE,             /* a field out of range (container type, kind) */
	HT_V_FIELD_UNDECLARED,      /* a reference names a field not declared by
				       the end of its dump */
	HT_V_FIELD_REDECLARED,      /* a field id declared again differently */
	HT_V_COUNT_
};
_Static_assert(HT_V_COUNT_ <= 32, "ht_index_info has room for 32 codes");

const char *ht_violation_name(enum ht_violation_code code);
const char *ht_violation_text(enum ht_violation_code code);

/* ---- Replay ------------------------------------------------------------- */

/* What the state machine knows at an event: the replay passes it along. */
struct ht_replay_state {
	uint64_t event_index;
	bool in_dump;               /* inside C_BEGIN ... C_END */
	bool in_gc;                 /* inside gc_started ... gc_finished */
	bool dump_aborted;          /* a result of abort was seen in this dump */
	bool gc_dump;               /* the dump is a GC's references (CLR style),
				       not a C_BEGIN ... C_END bracket */
	int64_t dump;               /* number of the current (or last) dump, -1 before any */
	int64_t gc;                 /* number of the current (or last) GC, -1 before any */
	enum ht_container_type container;  /* 0 when none */
	ht_id container_id1, container_id2;
	ht_id thread_id;            /* id1 of the thread container begun last */
	bool has_thread;
	/* the thread the current container belongs to: a thread container
	 * itself, or for a stack frame container the thread it was first
	 * begun under in this dump (a frame begun again after other threads'
	 * containers still belongs to its own thread) */
	ht_id container_thread;
	bool container_has_thread;
	bool continuation;          /* this object_references continues an earlier one */
};

struct ht_violation {
	enum ht_violation_code code;
	struct ht_position where;
	char detail[256];           /* the particulars: ids, types */
};

/*
 * The callbacks of a replay, one per event type, each optional. A non-zero
 * return stops the replay and is returned by ht_replay. The `dump` callbacks
 * are called by the state machine when a dump (a C_BEGIN ... C_END bracket,
 * or the object and root references of one GC) begins and ends.
 */
struct ht_replay_callbacks {
	int (*on_event[HT_EV_LAST + 1])(void *ctx, const struct ht_event *ev,
					const struct ht_replay_state *st);
	int (*on_dump_begin)(void *ctx, const struct ht_replay_state *st);
	int (*on_dump_end)(void *ctx, const struct ht_replay_state *st);
	void (*on_violation)(void *ctx, const struct ht_violation *v);
};

struct ht_replay_summary {
	uint64_t events;
	uint64_t dumps;
	uint64_t gcs;
	uint64_t violations;
	bool read_error;            /* stopped by damage: see ht_reader_loss */
};

/* Replays every event of r in order. Returns 0 when the whole input was
 * read (violations or not), -1 on a read error (err filled; events before
 * it were delivered), or the non-zero value a callback returned. */
int ht_replay(struct ht_reader *r, const struct ht_replay_callbacks *cb,
	      void *ctx, struct ht_replay_summary *summary,
	      struct ht_error *err);

/* Library version, "MAJOR.MINOR.PATCH". */
const char *ht_version(void);

#ifdef __cplusplus
}
#endif
#endif
