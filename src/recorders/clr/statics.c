/*
 * statics.c - classes' static reference fields, by name, as roots.
 *
 * The runtime keeps a class's static references in slots of an array it
 * pins and holds by a GC handle: reported as they are, a static reads
 * "GC handle > System.Object[] > System.Object[][27]". Each static field
 * that holds a reference is therefore declared (a `fields` event of kind
 * static) when its class loads, and the address of its slot asked of the
 * runtime (GetAppDomainStaticAddress) outside GCs; the runtime gives it
 * once the class's static constructor has run, so a field it refuses is
 * asked again after each GC and while a dump is being named. In a dumped
 * GC, after the GC's moves, each slot that holds an object becomes a root
 * of kind other whose id is the class and whose field is the static.
 *
 * A static of a struct type is kept boxed: its slot holds the box, and
 * the address the runtime gives is of the box's contents, which moves
 * with the box. Its address is asked again in each dump, while the GC
 * holds every thread (the recorder thread names the dump then), and the
 * box is the root. Left as the runtime reports them: statics of a struct
 * from another module, of a class's type parameter, thread statics (one
 * slot per thread, in storage that the GC moves; the API gives a thread's
 * only on that thread or for its id), and the statics of a generic
 * class's instantiations, which the runtime (.NET 10) says incomplete for
 * ever: it looks whether the open generic class, never initialized itself,
 * has run its static constructor.
 *
 * The table is read inside GCs without a lock: entries live in chunks that
 * never move, appended under statics_lock and published by the count.
 */
#include "recorders/clr/clr.h"

#include <stdlib.h>
#include <string.h>

#define CHUNK 1024
#define CHUNKS_MAX 4096
#define FIELDS_PER_CALL 64

/* metadata: CorFieldAttr, token kinds */
#define FD_STATIC 0x10u
#define FD_LITERAL 0x40u
#define FD_HAS_RVA 0x100u
#define MD_TYPE_REF 0x01000000u
#define MD_TYPE_DEF 0x02000000u
#define MODULE_COLLECTIBLE 0x10u
#define CORPROF_E_DATA_INCOMPLETE ((clr_hresult)0x80131351u)

enum slot_kind {
	SLOT_REFERENCE, /* the slot holds the object */
	SLOT_BOXED,     /* the address is of a box's contents */
};

enum slot_status {
	SLOT_PENDING, /* the runtime has not given its address yet */
	SLOT_READY,
	SLOT_REFUSED, /* nor will it */
};

struct static_slot {
	uint64_t cls;     /* the class (an instantiation, for a generic) */
	ht_id field;      /* as declared */
	clr_token token;
	uint8_t kind;
	_Atomic uint8_t status;
	_Atomic uint64_t address;
	/* a box's: the naming ticket its address was read for */
	_Atomic uint64_t ticket;
};

static struct {
	struct static_slot *chunk[CHUNKS_MAX];
	_Atomic size_t n;          /* published entries */
	pthread_mutex_t lock;      /* appenders */
	_Atomic uint64_t app_domain;
	_Atomic uint64_t roots;    /* reported, for the report */
} statics = {.lock = PTHREAD_MUTEX_INITIALIZER};

static struct static_slot *slot_at(size_t i)
{
	return &statics.chunk[i / CHUNK][i % CHUNK];
}

/* ---- which fields ----------------------------------------------------------- */

/* The name of the class a type token extends ("System.ValueType"). */
static void base_name(struct clr_metadata *md, clr_token td, char *out,
		      size_t len)
{
	clr_wchar w[CLRN_SEGMENT_MAX];
	clr_ulong n = 0, flags = 0;
	clr_token extends = 0, scope = 0;
	clr_hresult hr = CLR_E_FAIL;

	out[0] = '\0';
	if (CLR_FAILED(md->vtbl->GetTypeDefProps(md, td, w, CLRN_SEGMENT_MAX,
						 &n, &flags, &extends)))
		return;
	if ((extends & 0xFF000000u) == MD_TYPE_REF)
		hr = md->vtbl->GetTypeRefProps(md, extends, &scope, w,
					       CLRN_SEGMENT_MAX, &n);
	else if ((extends & 0xFF000000u) == MD_TYPE_DEF)
		hr = md->vtbl->GetTypeDefProps(md, extends, w,
					       CLRN_SEGMENT_MAX, &n, &flags,
					       &scope);
	if (!CLR_FAILED(hr))
		clrn_from_utf16(out, len, w,
				n < CLRN_SEGMENT_MAX ? n : CLRN_SEGMENT_MAX);
}

/* How a static field of this signature is kept: a reference in its slot,
 * a struct of this module boxed (an enum is kept as its number), or -1
 * when it holds no object we read. */
static int static_kind(struct clr_metadata *md, const uint8_t *sig,
		       size_t len)
{
	unsigned param = 0;
	uint64_t coded;
	char base[CLRN_SEGMENT_MAX * 3];

	if (clrn_field_sig(sig, len, &param) == CLRN_HOLDS_REFERENCE)
		return SLOT_REFERENCE;
	/* a struct of this module: a TypeDef (table 0 of the coded index) */
	if (!(coded = clrn_field_struct(sig, len)) || (coded & 3) != 0)
		return -1;
	base_name(md, MD_TYPE_DEF | (clr_token)(coded >> 2), base,
		  sizeof(base));
	return strcmp(base, "System.ValueType") == 0 ? SLOT_BOXED : -1;
}

/* The app domain whose statics are read: .NET has one, that of any
 * managed thread (a class loads on one). */
static uint64_t app_domain(void)
{
	clr_uptr thread = 0, domain = 0;

	if (atomic_load(&statics.app_domain))
		return atomic_load(&statics.app_domain);
	if (!CLR_FAILED(state.info->vtbl->GetCurrentThreadID(state.info,
							     &thread)) &&
	    !CLR_FAILED(state.info->vtbl->GetThreadAppDomain(
		    state.info, thread, &domain)))
		atomic_store(&statics.app_domain, domain);
	return domain;
}

/* Under statics.lock: room for one more entry. */
static struct static_slot *append(void)
{
	size_t n = atomic_load(&statics.n);

	if (n / CHUNK >= CHUNKS_MAX)
		return NULL;
	if (!statics.chunk[n / CHUNK] &&
	    !(statics.chunk[n / CHUNK] = calloc(CHUNK, sizeof(struct static_slot))))
		return NULL;
	return slot_at(n);
}

/*
 * Attached again, in a library the runtime kept loaded after the last
 * detach: the table's fields were declared in the last trace, with ids
 * the new one gives to others. Nothing reads the table between the two
 * recordings (no GC is recorded), so it is emptied in place; its chunks
 * are kept for the new one.
 */
void statics_forget(void)
{
	size_t n = atomic_load(&statics.n);

	atomic_store(&statics.n, 0);
	for (size_t c = 0; c * CHUNK < n && c < CHUNKS_MAX; c++)
		if (statics.chunk[c])
			memset(statics.chunk[c], 0,
			       CHUNK * sizeof(struct static_slot));
	atomic_store(&statics.app_domain, 0);
	atomic_store(&statics.roots, 0);
}

/* Declares one static field of cls and adds it to the table. */
static void add_static(uint64_t cls, clr_token token, const char *name,
		       int kind)
{
	struct static_slot *s;
	struct ht_field f;
	ht_id id;

	pthread_mutex_lock(&state.fields_lock); /* field ids are fields.c's */
	id = ++state.last_field;
	pthread_mutex_unlock(&state.fields_lock);
	f = (struct ht_field){
		.id = id, .class_id = cls, .name = name,
		.kind = HT_FIELD_STATIC,
	};
	ht_fields(state.trace.rec, 1, &f);
	pthread_mutex_lock(&statics.lock);
	s = append();
	if (s) {
		*s = (struct static_slot){.cls = cls, .field = id,
					  .token = token,
					  .kind = (uint8_t)kind};
		atomic_fetch_add_explicit(&statics.n, 1, memory_order_release);
	}
	pthread_mutex_unlock(&statics.lock);
}

static bool collectible(clr_uptr module)
{
	clr_ulong n = 0, flags = 0;
	clr_uptr assembly = 0;
	const uint8_t *base = NULL;

	return !CLR_FAILED(state.info->vtbl->GetModuleInfo2(
		       state.info, module, &base, 0, &n, NULL, &assembly,
		       &flags)) &&
	       (flags & MODULE_COLLECTIBLE);
}

/* On the loading thread, outside GCs: the static reference fields of
 * class cls, declared and tabled. A collectible class's statics go with
 * its class: they are left as the runtime reports them. */
void statics_class_loaded(clr_uptr cls)
{
	clr_uptr module = 0, parent = 0, args[1];
	clr_token td = 0, tokens[FIELDS_PER_CALL];
	clr_ulong n_args = 0, got = 0;
	struct clr_metadata *md;
	void *e = NULL;
	bool any = false;

	app_domain();
	if (CLR_FAILED(state.info->vtbl->GetClassIDInfo2(
		    state.info, cls, &module, &td, &parent, 0, &n_args,
		    args)) || !td || collectible(module) ||
	    !(md = metadata_of(module)))
		return;
	while (!CLR_FAILED(md->vtbl->EnumFields(md, &e, td, tokens,
						FIELDS_PER_CALL, &got)) &&
	       got) {
		for (clr_ulong i = 0; i < got; i++) {
			clr_wchar w[CLRN_SEGMENT_MAX];
			char name[CLRN_SEGMENT_MAX * 3];
			clr_ulong len = 0, attr = 0, sig_size = 0, ctype = 0;
			clr_ulong csize = 0;
			const uint8_t *sig = NULL;
			const void *cval = NULL;
			clr_token owner = 0;
			int kind;

			if (CLR_FAILED(md->vtbl->GetFieldProps(
				    md, tokens[i], &owner, w, CLRN_SEGMENT_MAX,
				    &len, &attr, &sig, &sig_size, &ctype,
				    &cval, &csize)) ||
			    (attr & (FD_STATIC | FD_LITERAL | FD_HAS_RVA)) !=
				    FD_STATIC ||
			    (kind = static_kind(md, sig, sig_size)) < 0)
				continue;
			clrn_from_utf16(name, sizeof(name), w,
					len < CLRN_SEGMENT_MAX ? len
							       : CLRN_SEGMENT_MAX);
			add_static(cls, tokens[i], name, kind);
			any = true;
		}
	}
	if (e)
		md->vtbl->CloseEnum(md, e);
	release_metadata(md);
	if (any)
		saw_class(cls); /* its roots name it */
}

/* ---- where they are --------------------------------------------------------- */

/*
 * On the recorder thread: asks the runtime where the statics it has not
 * given yet are. In a dump (ticket nonzero: the recorder thread names it
 * while the GC holds every thread, after the GC's moves) each box is
 * asked again: the address of its contents is good until the next GC.
 */
void statics_locate(uint64_t ticket)
{
	size_t n = atomic_load_explicit(&statics.n, memory_order_acquire);
	uint64_t domain = atomic_load(&statics.app_domain);

	if (!domain)
		return;
	for (size_t i = 0; i < n; i++) {
		struct static_slot *s = slot_at(i);
		uint8_t status = atomic_load(&s->status);
		void *at = NULL;
		clr_hresult hr;

		if (status == SLOT_REFUSED ||
		    (status == SLOT_READY &&
		     (s->kind == SLOT_REFERENCE || !ticket)))
			continue;
		hr = state.info->vtbl->GetAppDomainStaticAddress(
			state.info, s->cls, s->token, domain, &at);
		if (hr == CORPROF_E_DATA_INCOMPLETE)
			continue; /* its static constructor has not run */
		if (CLR_FAILED(hr) || !at) {
			atomic_store(&s->status, SLOT_REFUSED);
			continue;
		}
		atomic_store(&s->address, (uint64_t)(uintptr_t)at);
		if (s->kind == SLOT_BOXED)
			atomic_store_explicit(&s->ticket, ticket,
					      memory_order_release);
		atomic_store(&s->status, SLOT_READY);
	}
}

/* ---- roots ------------------------------------------------------------------ */

/*
 * In a dumped GC, after its moves and after the recorder thread named it
 * (ticket): each static that holds an object, as a root of kind other
 * with its class and field. The slot is read here, as the walk reads a
 * string: every managed thread is held, the GC has moved what it moves
 * and updated the slots, and the slot's array is pinned and lives as long
 * as its class. A box's address is used only when it was read in this
 * dump.
 */
void record_static_roots(uint64_t ticket)
{
	ht_id refs[BATCH], ids[BATCH], fields[BATCH];
	uint32_t obj_flags[BATCH] = {0};
	uint8_t kinds[BATCH], root_flags[BATCH] = {0};
	size_t n = atomic_load_explicit(&statics.n, memory_order_acquire);
	size_t m = 0;

	memset(kinds, HT_ROOT_OTHER, sizeof(kinds));
	for (size_t i = 0; i < n; i++) {
		struct static_slot *s = slot_at(i);
		uint64_t at, object = 0;

		if (atomic_load(&s->status) != SLOT_READY)
			continue;
		at = atomic_load(&s->address);
		if (s->kind == SLOT_REFERENCE)
			memcpy(&object, (const void *)(uintptr_t)at,
			       sizeof(object));
		else if (atomic_load_explicit(&s->ticket,
					      memory_order_acquire) == ticket)
			object = at - sizeof(void *);
		if (!object)
			continue;
		refs[m] = object;
		ids[m] = s->cls;
		fields[m] = s->field;
		if (++m == BATCH) {
			ht_root_references_fields(state.trace.rec, m, refs,
						  obj_flags, kinds, root_flags,
						  ids, fields, HT_RESULT_OK);
			atomic_fetch_add(&statics.roots, m);
			m = 0;
		}
	}
	if (m) {
		ht_root_references_fields(state.trace.rec, m, refs, obj_flags,
					  kinds, root_flags, ids, fields,
					  HT_RESULT_OK);
		atomic_fetch_add(&statics.roots, m);
	}
}
