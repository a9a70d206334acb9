/*
 * fields.c - the reference fields of classes, and strings' contents.
 *
 * ObjectReferences gives no offsets: each class's reference fields (its
 * own and inherited, from GetClassLayout and the fields' signatures, and
 * those inside the structs it embeds, named by the chain of fields) are
 * laid out outside GCs, declared by a `fields` event, and published in a
 * lock-free map that the walk reads to tell which field a reference was
 * read from. A string's length and units are read in the walk where the
 * runtime's string layout says.
 */
#include "recorders/clr/clr.h"

#include <stdlib.h>
#include <string.h>

/* ---- reference fields ------------------------------------------------------ */

static size_t class_slot(uint64_t id)
{
	return (size_t)((id * 0x9E3779B97F4A7C15ull) >> 32);
}

/* In a GC as well: the fields of class cls, or NULL. */
const struct class_fields *fields_lookup(uint64_t cls)
{
	struct field_map *m = atomic_load(&state.fields);

	if (!m)
		return NULL;
	for (size_t i = class_slot(cls) & m->mask;; i = (i + 1) & m->mask) {
		uint64_t k = atomic_load_explicit(&m->keys[i],
						  memory_order_acquire);

		if (k == cls)
			return atomic_load(&m->values[i]);
		if (k == 0)
			return NULL;
	}
}

struct field_map *field_map_new(size_t cap)
{
	struct field_map *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->mask = cap - 1;
	m->keys = calloc(cap, sizeof(*m->keys));
	m->values = calloc(cap, sizeof(*m->values));
	if (!m->keys || !m->values) {
		free(m->keys);
		free(m->values);
		free(m);
		return NULL;
	}
	return m;
}

static void field_map_put(struct field_map *m, uint64_t cls,
			  struct class_fields *f)
{
	size_t i = class_slot(cls) & m->mask;

	while (atomic_load(&m->keys[i]) != 0 &&
	       atomic_load(&m->keys[i]) != cls)
		i = (i + 1) & m->mask;
	atomic_store(&m->values[i], f);
	atomic_store_explicit(&m->keys[i], cls, memory_order_release);
}

/* Under fields_lock: room for one more, in a bigger copy if need be. */
static struct field_map *field_map_room(void)
{
	struct field_map *m = atomic_load(&state.fields), *n;

	if (!m || state.fields_used + 1 <= (m->mask + 1) / 2)
		return m;
	n = field_map_new(2 * (m->mask + 1));
	if (!n)
		return NULL;
	for (size_t i = 0; i <= m->mask; i++) {
		uint64_t k = atomic_load(&m->keys[i]);

		if (k)
			field_map_put(n, k, atomic_load(&m->values[i]));
	}
	n->retired_next = m;
	atomic_store(&state.fields, n);
	return n;
}

/* The typedef's name, into out. */
static void type_def_name(struct clr_metadata *md, clr_token td, char *out,
			  size_t len)
{
	clr_wchar w[CLRN_SEGMENT_MAX];
	clr_ulong n = 0, flags = 0;
	clr_token extends = 0;

	out[0] = '\0';
	if (md && !CLR_FAILED(md->vtbl->GetTypeDefProps(md, td, w,
							CLRN_SEGMENT_MAX, &n,
							&flags, &extends)))
		clrn_from_utf16(out, len, w,
				n < CLRN_SEGMENT_MAX ? n : CLRN_SEGMENT_MAX);
}

/* A value type's class derives from System.ValueType or System.Enum. */
static bool is_value_class(clr_uptr cls)
{
	clr_uptr module = 0, parent = 0, pm = 0, pp = 0, args[1];
	clr_token td = 0, ptd = 0;
	clr_ulong n_args = 0;
	struct clr_metadata *md;
	char name[CLRN_SEGMENT_MAX];

	if (CLR_FAILED(state.info->vtbl->GetClassIDInfo2(
		    state.info, cls, &module, &td, &parent, 0, &n_args,
		    args)) || !parent ||
	    CLR_FAILED(state.info->vtbl->GetClassIDInfo2(
		    state.info, parent, &pm, &ptd, &pp, 0, &n_args, args)))
		return false;
	md = metadata_of(pm);
	type_def_name(md, ptd, name, sizeof(name));
	release_metadata(md);
	return strcmp(name, "System.ValueType") == 0 ||
	       strcmp(name, "System.Enum") == 0;
}

/* Does a field of this signature hold a reference? A type parameter does
 * when the class's argument for it is no value type. */
static bool sig_is_reference(const uint8_t *sig, size_t len, clr_uptr cls)
{
	clr_uptr module = 0, parent = 0, args[CLRN_MAX_ARGS];
	clr_token td = 0;
	clr_ulong n_args = 0;
	unsigned param = 0;

	switch (clrn_field_sig(sig, len, &param)) {
	case CLRN_HOLDS_REFERENCE:
		return true;
	case CLRN_HOLDS_TYPE_PARAM:
		if (CLR_FAILED(state.info->vtbl->GetClassIDInfo2(
			    state.info, cls, &module, &td, &parent,
			    CLRN_MAX_ARGS, &n_args, args)) ||
		    param >= n_args || param >= CLRN_MAX_ARGS)
			return false;
		return !is_value_class(args[param]);
	default:
		return false;
	}
}

static int by_offset(const void *a, const void *b)
{
	const struct field_ref *x = a, *y = b;

	return (x->offset > y->offset) - (x->offset < y->offset);
}

/* A struct's n reference fields by offset, their names with them (a
 * struct has few: an insertion sort). */
static void sort_named(struct field_ref *f, char **names, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		struct field_ref x = f[i];
		char *name = names[i];
		size_t j = i;

		for (; j > 0 && f[j - 1].offset > x.offset; j--) {
			f[j] = f[j - 1];
			names[j] = names[j - 1];
		}
		f[j] = x;
		names[j] = name;
	}
}

/* The trace's type of a primitive field or array element of this
 * CorElementType, as wide as the runtime's (an unsigned one as the signed
 * type of its width, a native integer as a long on 64-bit, an unsigned
 * short as a char, which the trace loads unsigned); 0 for no primitive. */
static uint8_t value_type(unsigned et)
{
	switch (et) {
	case 0x02: return HT_TYPE_BOOLEAN;
	case 0x03: return HT_TYPE_CHAR;
	case 0x04: case 0x05: return HT_TYPE_BYTE;
	case 0x06: return HT_TYPE_SHORT;
	case 0x07: return HT_TYPE_CHAR;
	case 0x08: case 0x09: return HT_TYPE_INT;
	case 0x0a: case 0x0b: return HT_TYPE_LONG;
	case 0x0c: return HT_TYPE_FLOAT;
	case 0x0d: return HT_TYPE_DOUBLE;
	case 0x18: case 0x19:
		return sizeof(void *) == 8 ? HT_TYPE_LONG : HT_TYPE_INT;
	default: return 0;
	}
}

/* Does a field of this signature embed a struct (a value type that is no
 * primitive), whose references the walk may find inside it? */
static bool sig_is_struct(const uint8_t *sig, size_t len)
{
	unsigned et = clrn_field_type(sig, len);
	unsigned param = 0;

	/* a generic instance of a value type: VALUETYPE follows GENERICINST */
	return et == 0x11 ||
	       (et == 0x15 && clrn_field_sig(sig, len, &param) ==
				      CLRN_HOLDS_VALUE);
}

/* The bytes field i of a class's own laid-out ones spans: up to the next
 * one's offset, the last one to the object's end. */
static uint32_t span_of(const struct clr_field_offset *lay, size_t n,
			size_t i)
{
	uint32_t next = UINT32_MAX;

	for (size_t j = 0; j < n; j++)
		if (lay[j].offset > lay[i].offset &&
		    (uint32_t)lay[j].offset - lay[i].offset < next)
			next = (uint32_t)lay[j].offset - lay[i].offset;
	return next;
}

enum own_kind { OWN_REFERENCES, OWN_VALUES, OWN_STRUCTS };

/* Structs nested deeper than this in an object have their references
 * named by the outermost struct alone. */
#define STRUCT_NEST_MAX 8
/* A TypeDef's and a TypeRef's token tables, in a token's top byte
 * (ECMA-335 II.22). */
#define TYPE_DEF_TOKEN 0x02000000u
#define TYPE_REF_TOKEN 0x01000000u

static const struct class_fields *class_fields_of(clr_uptr cls, int depth);

/*
 * The class of a struct that a TypeRef names (a struct of another module),
 * which the runtime does not give (GetClassFromToken reads a TypeRef's row
 * as a TypeDef's): the one TypeDef of that full name among the modules
 * loaded (EnumModules; a reference assembly's TypeRef leads to a facade
 * that forwards it, so the name is looked for in every module), its class
 * from that module's token. The struct is loaded: the embedding class's
 * layout needed it. A name defined in two modules, a nested struct, or
 * one not found gives 0. Answers are kept by name, under fields_lock.
 */
static struct {
	size_t n, cap;
	struct named_struct {
		char *name;
		clr_uptr cls;
	} *s;
} structs_by_name;

static clr_uptr struct_in_modules(const clr_wchar *name)
{
	struct clr_object_enum *modules = NULL;
	clr_uptr batch[64], found = 0;
	clr_ulong got = 0;

	if (CLR_FAILED(state.info->vtbl->EnumModules(state.info, &modules)) ||
	    !modules)
		return 0;
	while (modules->vtbl->Next(modules, 64, batch, &got) == CLR_S_OK ||
	       got) {
		for (clr_ulong i = 0; i < got; i++) {
			struct clr_metadata *md = metadata_of(batch[i]);
			clr_token td = 0;
			clr_uptr cls = 0;

			if (md && !CLR_FAILED(md->vtbl->FindTypeDefByName(
					  md, name, 0, &td)) &&
			    state.info->vtbl->GetClassFromToken(
				    state.info, batch[i], td, &cls) == CLR_S_OK &&
			    cls && cls != found)
				found = found ? UINTPTR_MAX : cls;
			release_metadata(md);
		}
		if (got < 64)
			break;
		got = 0;
	}
	modules->vtbl->Release(modules);
	return found == UINTPTR_MAX ? 0 : found;
}

static clr_uptr struct_by_ref(struct clr_metadata *md, clr_token tr)
{
	clr_wchar w[CLRN_SEGMENT_MAX];
	clr_ulong n = 0;
	clr_token scope = 0;
	char name[CLRN_SEGMENT_MAX * 3];
	struct named_struct *grown;
	clr_uptr cls;

	/* a nested type's scope is the TypeRef of the one it is nested in */
	if (CLR_FAILED(md->vtbl->GetTypeRefProps(md, tr, &scope, w,
						 CLRN_SEGMENT_MAX, &n)) ||
	    (scope & 0xFF000000u) == TYPE_REF_TOKEN || n >= CLRN_SEGMENT_MAX)
		return 0;
	w[n] = 0;
	clrn_from_utf16(name, sizeof(name), w, n);
	for (size_t i = 0; i < structs_by_name.n; i++)
		if (strcmp(structs_by_name.s[i].name, name) == 0)
			return structs_by_name.s[i].cls;
	cls = struct_in_modules(w);
	if (structs_by_name.n == structs_by_name.cap) {
		size_t cap = structs_by_name.cap ? 2 * structs_by_name.cap : 64;

		if (!(grown = realloc(structs_by_name.s, cap * sizeof(*grown))))
			return cls;
		structs_by_name.s = grown;
		structs_by_name.cap = cap;
	}
	structs_by_name.s[structs_by_name.n] =
		(struct named_struct){strdup(name), cls};
	if (structs_by_name.s[structs_by_name.n].name)
		structs_by_name.n++;
	return cls;
}

/*
 * Outside GCs, under fields_lock: the table of the struct a field of this
 * signature embeds in span bytes, when every reference inside it is one
 * of its named fields (nested structs' included, STRUCT_NEST_MAX deep at
 * most); NULL otherwise. The struct's class comes from the signature's
 * token: a TypeDef of the holder's own module through GetClassFromToken,
 * a TypeRef by its name (struct_by_ref). A generic instance, or a struct
 * not found, is named by the holder's field alone.
 */
static const struct class_fields *embedded_struct(clr_uptr module,
						  struct clr_metadata *md,
						  const uint8_t *sig,
						  size_t len, uint32_t span,
						  int depth)
{
	uint64_t coded = clrn_field_struct(sig, len);
	clr_token token = (clr_token)(coded >> 2);
	clr_uptr s = 0;
	const struct class_fields *e;

	/* the coded index's low bits are its table: 0 a TypeDef, 1 a
	 * TypeRef */
	if (!coded || coded >> 2 > 0xFFFFFF || depth >= 64)
		return NULL;
	if ((coded & 3) == 0) {
		if (state.info->vtbl->GetClassFromToken(
			    state.info, module, TYPE_DEF_TOKEN | token, &s) !=
		    CLR_S_OK)
			return NULL;
	} else if ((coded & 3) == 1) {
		s = struct_by_ref(md, TYPE_REF_TOKEN | token);
	}
	if (!s || !(e = class_fields_of(s, depth + 1)))
		return NULL;
	if (e->n_structs || (e->n && !e->names) ||
	    e->nest + 1 > STRUCT_NEST_MAX)
		return NULL;
	/* its references lie within the bytes the holder gives it */
	for (size_t j = 0; j < e->n; j++)
		if (e->f[j].offset < sizeof(void *) ||
		    e->f[j].offset + sizeof(uint64_t) >
			    (uint64_t)span + sizeof(void *))
			return NULL;
	return e;
}

/* Declares one field of class cls: into *out with a new id, and in the
 * trace. */
static void declare_field(clr_uptr cls, const char *name, uint32_t offset,
			  uint32_t length, uint8_t type, struct field_ref *out)
{
	struct ht_field f;

	*out = (struct field_ref){
		.offset = offset,
		.length = length,
		.id = ++state.last_field,
		.type = type,
	};
	f = (struct ht_field){
		.id = out->id,
		.class_id = cls,
		.name = name,
		.kind = HT_FIELD_INSTANCE,
		.has_offset = true,
		.offset = offset,
		.type = type,
	};
	ht_fields(state.trace.rec, 1, &f);
}

/*
 * Declares the fields of one kind among a class's own laid-out ones, each
 * into out[] (room for cap) with a new id, its name into names[] when
 * given; how many. With out NULL, only counts them. *nest, when given,
 * becomes how many structs deep the deepest reference declared lies.
 *
 * Its references: the fields that hold one, and those inside each struct
 * it embeds whose table names them all (embedded_struct), each declared
 * as the class's own field at its offset inside the object, named by the
 * chain of fields that leads to it ("inner.Key", "inner.deep.Key"), so
 * that the walk finds it as any other field. With values, its primitive
 * fields, typed. Its other embedded structs (OWN_STRUCTS), declared as
 * reference fields spanning the struct's bytes: a reference read from
 * inside one is named by it.
 */
static size_t own_fields(clr_uptr cls, clr_uptr module,
			 const struct clr_field_offset *lay, size_t n,
			 uint32_t extra, enum own_kind kind, int depth,
			 struct field_ref *out, size_t cap, char **names,
			 uint8_t *nest)
{
	struct clr_metadata *md = metadata_of(module);
	size_t k = 0;

	if (!md)
		return 0;
	for (size_t i = 0; i < n; i++) {
		clr_wchar w[CLRN_SEGMENT_MAX];
		char name[CLRN_SEGMENT_MAX * 3];
		clr_ulong len = 0, attr = 0, sig_size = 0, ctype = 0, csize = 0;
		const uint8_t *sig = NULL;
		const void *cval = NULL;
		clr_token td = 0;
		const struct class_fields *e = NULL;
		uint8_t type = 0;
		uint32_t at = lay[i].offset + extra;

		if (CLR_FAILED(md->vtbl->GetFieldProps(
			    md, lay[i].field, &td, w, CLRN_SEGMENT_MAX, &len,
			    &attr, &sig, &sig_size, &ctype, &cval, &csize)) ||
		    (attr & 0x10))
			continue; /* static */
		if (kind != OWN_VALUES && sig_is_struct(sig, sig_size))
			e = embedded_struct(module, md, sig, sig_size,
					    span_of(lay, n, i), depth);
		if (kind == OWN_VALUES ?
			    !(type = value_type(clrn_field_type(sig,
								sig_size))) :
		    kind == OWN_STRUCTS ? !sig_is_struct(sig, sig_size) || e :
			    !e && !sig_is_reference(sig, sig_size, cls))
			continue;
		if (!out) {
			k += e ? e->n : 1;
			continue;
		}
		/* a struct's table made between the count and now */
		if (k + (e ? e->n : 1) > cap)
			break;
		if (nest && e && e->n && e->nest + 1 > *nest)
			*nest = (uint8_t)(e->nest + 1);
		clrn_from_utf16(name, sizeof(name), w,
				len < CLRN_SEGMENT_MAX ? len : CLRN_SEGMENT_MAX);
		if (!e) {
			declare_field(cls, name, at,
				      kind == OWN_STRUCTS ? span_of(lay, n, i)
							  : 0,
				      type, &out[k]);
			if (names)
				names[k] = strdup(name);
			k++;
			continue;
		}
		/* inside the struct: its fields' offsets count the
		 * MethodTable pointer a boxed one has */
		for (size_t j = 0; j < e->n; j++) {
			char chain[sizeof(name)];
			struct clrn_buf b;

			clrn_init(&b, chain, sizeof(chain));
			clrn_put(&b, name);
			clrn_put(&b, ".");
			clrn_put(&b, e->names[j] ? e->names[j] : "?");
			declare_field(cls, chain,
				      at + e->f[j].offset - (uint32_t)sizeof(void *),
				      0, 0, &out[k]);
			if (names)
				names[k] = strdup(chain);
			k++;
		}
	}
	release_metadata(md);
	return k;
}

/* Under fields_lock, outside GCs: the table of a class that is no array,
 * NULL when the runtime cannot lay it out yet. */
static struct class_fields *build_fields(clr_uptr cls, int depth)
{
	clr_uptr module = 0, parent = 0, args[CLRN_MAX_ARGS];
	clr_token td = 0;
	clr_ulong n_args = 0, n_lay = 0, size = 0;
	const struct class_fields *up = NULL;
	struct clr_field_offset *lay = NULL;
	struct class_fields *f;
	size_t inherited, up_values, up_structs, own_refs = 0, k = 0, kv = 0,
							       ks = 0;
	uint32_t extra = 0;
	bool values = state.opt.values, value_class = false;
	char **names = NULL;

	if (CLR_FAILED(state.info->vtbl->GetClassIDInfo2(
		    state.info, cls, &module, &td, &parent, CLRN_MAX_ARGS,
		    &n_args, args)))
		return NULL;
	if (parent && depth < 64 && !(up = class_fields_of(parent, depth + 1)))
		return NULL;
	if (CLR_FAILED(state.info->vtbl->GetClassLayout(state.info, cls, NULL,
							0, &n_lay, &size)))
		return NULL;
	if (n_lay && (!(lay = calloc(n_lay, sizeof(*lay))) ||
		      CLR_FAILED(state.info->vtbl->GetClassLayout(
			      state.info, cls, lay, n_lay, &n_lay, &size)))) {
		free(lay);
		return NULL;
	}
	inherited = up ? up->n : 0;
	up_values = up ? up->n_values : 0;
	up_structs = up ? up->n_structs : 0;
	if (n_lay) {
		value_class = is_value_class(cls);
		/* a boxed value type's fields follow its MethodTable pointer */
		extra = value_class ? sizeof(void *) : 0;
		/* the references its structs hold too (which lays those
		 * structs' tables out first) */
		own_refs = own_fields(cls, module, lay, n_lay, extra,
				      OWN_REFERENCES, depth, NULL, 0, NULL,
				      NULL);
	}
	f = calloc(1, sizeof(*f) + (inherited + up_values + up_structs +
				    own_refs + 2 * n_lay) * sizeof(f->f[0]));
	/* a struct keeps its references' names, for whatever embeds it (a
	 * struct inherits no field) */
	if (f && value_class && own_refs && !inherited &&
	    !(names = calloc(own_refs, sizeof(*names)))) {
		free(f);
		f = NULL;
	}
	if (f) {
		struct field_ref *v, *st;

		if (inherited)
			memcpy(f->f, up->f, inherited * sizeof(f->f[0]));
		k = own_fields(cls, module, lay, n_lay, extra, OWN_REFERENCES,
			       depth, f->f + inherited, own_refs, names,
			       &f->nest);
		f->n = inherited + k;
		if (names) {
			sort_named(f->f, names, f->n);
			f->names = names;
		} else {
			qsort(f->f, f->n, sizeof(f->f[0]), by_offset);
		}
		/* the primitive fields after the references, numbered after
		 * the class's references: without values, ids are as they
		 * were */
		v = f->f + f->n;
		if (up_values)
			memcpy(v, up->f + up->n, up_values * sizeof(v[0]));
		if (values)
			kv = own_fields(cls, module, lay, n_lay, extra,
					OWN_VALUES, depth, v + up_values,
					n_lay, NULL, NULL);
		f->n_values = up_values + kv;
		qsort(v, f->n_values, sizeof(v[0]), by_offset);
		/* then the embedded structs */
		st = v + f->n_values;
		if (up_structs)
			memcpy(st, up->f + up->n + up->n_values,
			       up_structs * sizeof(st[0]));
		ks = own_fields(cls, module, lay, n_lay, extra, OWN_STRUCTS,
				depth, st + up_structs, n_lay, NULL, NULL);
		f->n_structs = up_structs + ks;
		if (k || kv || ks)
			saw_class(cls); /* the declaring class gets named */
	}
	free(lay);
	return f;
}

/* CorElementType: the element types whose values are references. */
static bool holds_reference(uint32_t et)
{
	switch (et) {
	case 0x0e: /* string */
	case 0x12: /* class */
	case 0x14: /* array */
	case 0x15: /* generic instance (IsArrayClass gives it for none) */
	case 0x1c: /* object */
	case 0x1d: /* szarray */
		return true;
	default:
		return false;
	}
}

/* Under fields_lock: the table of an array class, whose elements the
 * walk reads (array_elements); NULL when its element struct cannot be
 * laid out yet. A struct's reference fields are declared as its own
 * class's (as a boxed one's, which is the class a struct's fields belong
 * to), their offsets here from the element's start, where a boxed one's
 * count its MethodTable pointer. */
static struct class_fields *build_array_fields(uint32_t et, clr_uptr elem,
					       clr_ulong rank, int depth)
{
	const struct class_fields *e;
	struct class_fields *f;

	if (et != 0x11 || !elem) { /* no valuetype */
		f = calloc(1, sizeof(*f));
		if (f) {
			f->elements = holds_reference(et) ? ELEMENTS_REFS
							  : ELEMENTS_NONE;
			f->element_type = value_type(et);
			f->rank = (uint32_t)rank;
		}
		return f;
	}
	if (depth >= 64 || !(e = class_fields_of(elem, depth + 1)))
		return NULL;
	f = calloc(1, sizeof(*f) + e->n * sizeof(f->f[0]));
	if (!f)
		return NULL;
	f->elements = e->n ? ELEMENTS_STRUCTS : ELEMENTS_NONE;
	f->rank = (uint32_t)rank;
	for (size_t j = 0; j < e->n; j++) {
		if (e->f[j].offset < sizeof(void *)) {
			free(f);
			return NULL; /* not a boxed struct's layout */
		}
		f->f[j] = (struct field_ref){
			.offset = e->f[j].offset - sizeof(void *),
			.id = e->f[j].id,
		};
	}
	f->n = e->n;
	return f;
}

static const struct class_fields *class_fields_of(clr_uptr cls, int depth)
{
	const struct class_fields *have = fields_lookup(cls);
	struct class_fields *f;
	struct field_map *m;
	uint32_t et = 0;
	clr_uptr base = 0;
	clr_ulong rank = 0;

	if (have)
		return have;
	if (state.info->vtbl->IsArrayClass(state.info, cls, &et, &base,
					   &rank) == CLR_S_OK) {
		if (!(f = build_array_fields(et, base, rank, depth)))
			return NULL;
	} else if (!(f = build_fields(cls, depth))) {
		return NULL;
	}
	m = field_map_room();
	if (!m) {
		free(f);
		return NULL;
	}
	field_map_put(m, cls, f);
	state.fields_used++;
	return f;
}

/* Outside GCs: makes the table of class cls, if it has none yet. The
 * recorder thread does not wait for the lock, which a thread of the
 * program may hold while a GC waits for the recorder thread. */
void prepare_fields(clr_uptr cls, bool wait)
{
	if (!cls || fields_lookup(cls))
		return;
	if (!wait) {
		if (pthread_mutex_trylock(&state.fields_lock) != 0)
			return; /* at the next dump's end */
	} else {
		pthread_mutex_lock(&state.fields_lock);
	}
	if (!class_fields_of(cls, 0))
		atomic_fetch_add(&state.fields_failed, 1);
	pthread_mutex_unlock(&state.fields_lock);
}

void prepare_fields_of(uint64_t cls, void *ctx)
{
	(void)ctx;
	prepare_fields((clr_uptr)cls, false);
}

/* Outside any GC: waits for a class load that holds the lock. */
void prepare_fields_waiting(uint64_t cls, void *ctx)
{
	(void)ctx;
	prepare_fields((clr_uptr)cls, true);
}

/* In the walk, for a reference no field holds: the struct embedded in the
 * object that holds it (its pointer found among the struct's aligned
 * words), or 0. */
static ht_id struct_field_holding(const struct class_fields *c,
				  clr_uptr object, uint64_t size, uint64_t ref)
{
	const struct field_ref *st = c->f + c->n + c->n_values;

	for (size_t j = 0; j < c->n_structs; j++) {
		uint64_t end = (uint64_t)st[j].offset + st[j].length;

		/* the size counts the header before the object's start */
		if (end > size - sizeof(void *))
			end = size - sizeof(void *);
		for (uint64_t at = st[j].offset; at + sizeof(uint64_t) <= end;
		     at += sizeof(uint64_t)) {
			uint64_t word;

			memcpy(&word, (const void *)(object + at), sizeof(word));
			if (word == ref)
				return st[j].id;
		}
	}
	return 0;
}

/* In the walk: the field each reference was read from, by matching the
 * pointers the class's fields hold with the references reported (each
 * pointer used once: two fields may hold the same object). */
void match_fields(const struct class_fields *c, clr_uptr object,
		  uint64_t size, size_t n, const clr_uptr *refs,
		  ht_id *out)
{
	uint64_t held[MATCH_FIELDS_MAX];
	size_t m = c->n < MATCH_FIELDS_MAX ? c->n : MATCH_FIELDS_MAX;
	size_t cursor = 0;

	for (size_t j = 0; j < m; j++) {
		held[j] = 0;
		if (c->f[j].offset + sizeof(uint64_t) <= size)
			memcpy(&held[j], (const void *)(object + c->f[j].offset),
			       sizeof(uint64_t));
	}
	for (size_t i = 0; i < n; i++) {
		out[i] = 0;
		if (!refs[i])
			continue;
		/* mostly in the fields' order: look from the last match on */
		for (size_t t = 0; t < m; t++) {
			size_t j = (cursor + t) % m;

			if (held[j] == refs[i]) {
				out[i] = c->f[j].id;
				held[j] = 0;
				cursor = j + 1;
				break;
			}
		}
		if (!out[i] && c->n_structs)
			out[i] = struct_field_holding(c, object, size, refs[i]);
	}
}

/* ---- arrays' elements ------------------------------------------------------- */

/* In the walk, for a class without a table: when it is an array, its
 * table made in *t from IsArrayClass (which takes no lock) and, for an
 * array of structs, the struct's own table if it has one; else NULL. The
 * recorder makes the class's own at the dump's end. */
const struct class_fields *array_fields_now(clr_uptr cls,
					    union array_table *t)
{
	uint32_t et = 0;
	clr_uptr elem = 0;
	clr_ulong rank = 0;
	const struct class_fields *e;

	if (state.info->vtbl->IsArrayClass(state.info, cls, &et, &elem,
					   &rank) != CLR_S_OK)
		return NULL;
	t->c.elements = holds_reference(et) ? ELEMENTS_REFS : ELEMENTS_NONE;
	t->c.element_type = value_type(et);
	t->c.rank = (uint32_t)rank;
	t->c.n = 0;
	t->c.n_values = 0;
	t->c.n_structs = 0;
	t->c.names = NULL;
	t->c.nest = 0;
	if (et != 0x11)
		return &t->c;
	if (!elem || !(e = fields_lookup(elem)) || e->n > ELEMENT_FIELDS_MAX)
		return NULL;
	for (size_t j = 0; j < e->n; j++) {
		if (e->f[j].offset < sizeof(void *))
			return NULL;
		t->c.f[j] = (struct field_ref){
			.offset = e->f[j].offset - sizeof(void *),
			.id = e->f[j].id,
		};
	}
	t->c.n = e->n;
	t->c.elements = e->n ? ELEMENTS_STRUCTS : ELEMENTS_NONE;
	return &t->c;
}

/*
 * In the walk: an array's references at their elements' indexes, where
 * ObjectReferences gives the non-null ones alone (an index is then a
 * position among those). The array is read where the runtime lays it out
 * (an SZ array's length after the MethodTable pointer, its elements two
 * pointers on; a multi-dimensional one's after its rank's bounds and
 * lengths), which its size confirms (the elements fill the rest exactly),
 * and the non-null references read must be the ones reported, in order:
 * otherwise false, and the walk records what the runtime reported.
 *
 * An array of references is recorded as its elements, nulls 0 (the trace
 * keeps a null in place, as HPROF's arrays do), from the array's memory
 * itself. An array of structs gives each element's reference fields, nulls
 * too, in element order, each with its field: the element's index is how
 * many references of that field come before it. Those come in parts of
 * BATCH, recorded here with HT_OBJ_MORE_REFERENCES but the last, which
 * *last holds for the walk to record as the object's.
 */
bool array_elements(clr_uptr object, clr_uptr cls, uint64_t size,
		    const struct class_fields *c, size_t n,
		    const clr_uptr *refs, struct array_part *last)
{
	const uint8_t *data;
	uint64_t header = 2 * sizeof(void *), bytes, length, stride, k;
	uint32_t count;
	size_t seen = 0, part = 0;

	if (c->elements == ELEMENTS_NONE)
		return false;
	if (c->rank > 1)
		header += 2 * sizeof(uint32_t) * (uint64_t)c->rank;
	memcpy(&count, (const void *)(object + sizeof(void *)), sizeof(count));
	/* the size counts the object header before the object's start */
	if (size < sizeof(void *) + header)
		return false;
	bytes = size - sizeof(void *) - header;
	length = count;
	data = (const uint8_t *)(object + header);
	stride = length ? bytes / length : 0;
	k = c->elements == ELEMENTS_REFS ? 1 : c->n;
	if ((length && bytes % length) || (!length && bytes) ||
	    (c->elements == ELEMENTS_REFS && stride != sizeof(uint64_t)) ||
	    (c->elements == ELEMENTS_STRUCTS &&
	     c->f[c->n - 1].offset + sizeof(uint64_t) > stride))
		return false;
	/* the non-null references read are the reported ones */
	for (uint64_t i = 0; i < length; i++)
		for (uint64_t j = 0; j < k; j++) {
			uint64_t r;

			memcpy(&r, data + i * stride + (c->elements ==
							ELEMENTS_REFS ? 0 :
							c->f[j].offset),
			       sizeof(r));
			if (!r)
				continue;
			if (seen >= n || refs[seen] != r)
				return false;
			seen++;
		}
	if (seen != n)
		return false;
	if (c->elements == ELEMENTS_REFS) {
		last->n = length;
		last->refs = (const ht_id *)data;
		last->fields = NULL;
		return true;
	}
	for (uint64_t i = 0; i < length; i++)
		for (uint64_t j = 0; j < k; j++) {
			if (part == BATCH) {
				ht_object_references_fields(
					state.trace.rec, object, cls, size,
					HT_OBJ_MORE_REFERENCES, part,
					last->refs_buf, NULL, last->fields_buf,
					-1, HT_RESULT_OK);
				part = 0;
			}
			memcpy(&last->refs_buf[part],
			       data + i * stride + c->f[j].offset,
			       sizeof(uint64_t));
			last->fields_buf[part++] = c->f[j].id;
		}
	last->n = part;
	last->refs = last->refs_buf;
	last->fields = last->fields_buf;
	return true;
}

/* ---- sizes ------------------------------------------------------------------ */

/*
 * An object's size as the runtime has it (Object::GetSize, what its heap
 * walk events and so dotnet-gcdump give): GetObjectSize2's, except that
 * GetObjectSize2 rounds a size below the GC's minimum object (24 bytes on
 * 64-bit) up to a pointer's multiple. Only an empty string is that small:
 * its 22 bytes (header, MethodTable pointer, length, the terminating unit)
 * become 24, so a string of length 0 is given its own size back. In a GC
 * or outside: the length is read from the object, which is at its id
 * (string_contents says why that is safe); 0 when the runtime gives none.
 */
uint64_t object_size(clr_uptr object, clr_uptr cls)
{
	clr_uptr size = 0;
	uint32_t units;

	if (CLR_FAILED(state.info->vtbl->GetObjectSize2(state.info, object,
							&size)))
		return 0;
	if (size != 3 * sizeof(void *) || !cls || !state.string_layout ||
	    cls != atomic_load_explicit(&state.string_class,
					memory_order_relaxed) ||
	    state.string_length_at + sizeof(units) > size)
		return size;
	memcpy(&units, (const void *)(object + state.string_length_at),
	       sizeof(units));
	if (units != 0)
		return size;
	/* the object header before the object's start, the terminator */
	return sizeof(void *) + state.string_units_at + 2;
}

/* ---- strings' contents (--values) ------------------------------------------ */

/* At the start: where a string's length and UTF-16 units lie, as offsets
 * from the object's start (an empty string's size needs them, values the
 * units). The units are recorded as the object's array
 * of chars, which the trace wants little-endian: the runtime's own order
 * on the platforms CoreCLR runs on, so no copy is needed. */
bool string_layout(void)
{
	clr_ulong length_at = 0, units_at = 0;

	if (__BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__ ||
	    CLR_FAILED(state.info->vtbl->GetStringLayout2(state.info,
							  &length_at,
							  &units_at)))
		return false;
	state.string_length_at = length_at;
	state.string_units_at = units_at;
	return true;
}

/* Outside GCs (a class's load, the recorder thread): System.String's
 * class id, once, from the module of System.Object, in
 * which the chain of parents of any class ends. The walk knows a string
 * by its class id alone: it may not read metadata. */
void find_string_class(clr_uptr cls)
{
	static const clr_wchar string_name[] = {
		'S', 'y', 's', 't', 'e', 'm', '.', 'S', 't', 'r', 'i', 'n',
		'g', 0};
	clr_uptr module = 0, parent = 0, args[1], string = 0;
	clr_token td = 0;
	clr_ulong n_args = 0;
	struct clr_metadata *md;
	char name[CLRN_SEGMENT_MAX];

	if (!state.string_layout || atomic_load(&state.string_class))
		return;
	for (int depth = 0; cls && depth < 64; depth++, cls = parent)
		if (CLR_FAILED(state.info->vtbl->GetClassIDInfo2(
			    state.info, cls, &module, &td, &parent, 0, &n_args,
			    args)) || !parent)
			break;
	/* an interface's chain ends in itself */
	md = module ? metadata_of(module) : NULL;
	type_def_name(md, td, name, sizeof(name));
	if (md && strcmp(name, "System.Object") == 0 &&
	    !CLR_FAILED(md->vtbl->FindTypeDefByName(md, string_name, 0,
						    &td)) &&
	    !CLR_FAILED(state.info->vtbl->GetClassFromToken(state.info, module,
							    td, &string)))
		atomic_store(&state.string_class, string);
	release_metadata(md);
}

void find_string_class_of(uint64_t cls, void *ctx)
{
	(void)ctx;
	find_string_class((clr_uptr)cls);
}

/*
 * In the walk: the contents of object, of class cls and size bytes, when
 * it is a string, into *out; false otherwise. Reading the object's memory
 * here is safe: ObjectReferences comes while the runtime holds every
 * managed thread suspended for the GC, after the GC has moved what it
 * moves, so the object is where its id says and nothing writes to it
 * (nor could: a string is immutable once made); the length is checked
 * against the object's size before a unit is read. A non-GC heap object
 * (a literal) never moves and is never freed.
 */
static bool string_contents(clr_uptr object, uint64_t cls, uint64_t size,
			    struct ht_array_values *out)
{
	uint32_t units;

	if (!state.opt.values || !cls || cls != atomic_load_explicit(&state.string_class,
						memory_order_relaxed) ||
	    (uint64_t)state.string_length_at + sizeof(units) > size)
		return false;
	memcpy(&units, (const void *)(object + state.string_length_at),
	       sizeof(units));
	if (state.string_units_at + 2 * (uint64_t)units > size)
		return false;
	atomic_fetch_add_explicit(&state.strings_valued, 1,
				  memory_order_relaxed);
	return ht_array_values_of(HT_TYPE_CHAR,
				  (const uint8_t *)(object +
						    state.string_units_at),
				  units, out);
}

/* In the walk, with values: a primitive array's contents, read where
 * array_elements reads an array's elements (the elements filling the
 * object's size exactly, else nothing). */
static bool array_contents(clr_uptr object, const struct class_fields *c,
			   uint64_t size, struct ht_array_values *out)
{
	uint64_t header = 2 * sizeof(void *), width;
	uint32_t count;

	if (!c->element_type || c->elements != ELEMENTS_NONE)
		return false;
	if (c->rank > 1)
		header += 2 * sizeof(uint32_t) * (uint64_t)c->rank;
	width = ht_value_type_width(c->element_type);
	memcpy(&count, (const void *)(object + sizeof(void *)), sizeof(count));
	if (!width || size < sizeof(void *) + header ||
	    size - sizeof(void *) - header != (uint64_t)count * width)
		return false;
	return ht_array_values_of(c->element_type,
				  (const uint8_t *)(object + header), count,
				  out);
}

/*
 * In the walk, with values (and the non-GC heap's objects at a dump's
 * end): an object's primitive fields, read at their offsets (each within
 * the object's size), and a string's text or a primitive array's
 * contents; false when there is nothing to record. The memory is read as
 * a string's is (string_contents says why that is safe); a field is
 * little-endian, as the runtime keeps it on the platforms it runs on
 * (string_layout refuses values elsewhere).
 */
bool read_values(clr_uptr object, uint64_t cls, uint64_t size,
		 const struct class_fields *c, struct object_values *out)
{
	out->n = 0;
	out->has_array = false;
	if (!state.opt.values || !state.string_layout)
		return false;
	out->has_array = string_contents(object, cls, size, &out->array) ||
			 (c && array_contents(object, c, size, &out->array));
	for (size_t j = 0; c && j < c->n_values && out->n < VALUES_MAX; j++) {
		const struct field_ref *f = &c->f[c->n + j];
		unsigned width = ht_value_type_width(f->type);

		if (!width || f->offset + width > size)
			continue;
		out->fields[out->n] = f->id;
		out->values[out->n++] = ht_value_load(
			f->type, (const uint8_t *)(object + f->offset));
	}
	return out->has_array || out->n;
}
