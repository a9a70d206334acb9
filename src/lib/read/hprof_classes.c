/*
 * hprof_classes.c - the classes of an HPROF dump (hprof_internal.h):
 * their names (LOAD_CLASS and UTF8 records), their CLASS_DUMPs (read by
 * the index pass, and again, for the class object, by the event pass),
 * the chain of super classes each instance's fields follow, and the size
 * of an instance under each object layout (hprof_layout.c).
 */
#include "lib/read/hprof_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- Names ------------------------------------------------------------- */

const char *hprof_utf8_of(const struct hprof_source *s, uint64_t id)
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

	return l ? hprof_utf8_of(s, l->name_id) : NULL;
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
char *hprof_java_name(struct hprof_source *s, const char *internal)
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
	out = hprof_text_alloc(&s->text, len + 2 * dims + 1);
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
bool hprof_chain_ready(struct hprof_source *s, struct hclass *c)
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

/* The layout of c under model m, its super classes' first. false if the
 * chain is incomplete or memory runs out. */
bool hprof_class_layout(struct hprof_source *s, struct hclass *c,
			 enum jvm_model m)
{
	struct hclass *chain[MAX_CLASS_DEPTH + 1];
	size_t n = 0;

	if (c->has_layout[m])
		return true;
	if (!hprof_chain_ready(s, c))
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

/* The size of java.lang.Class without statics, from its dumped fields
 * and those HotSpot adds; the header alone if the dump lacks it. */
uint64_t hprof_mirror_base(struct hprof_source *s)
{
	struct hclass *c;

	if (s->has_mirror_base[s->model])
		return s->mirror_base[s->model];
	c = s->class_class ? class_of(s, s->class_class) : NULL;
	if (c && hprof_class_layout(s, c, s->model))
		s->mirror_base[s->model] = c->size[s->model];
	else
		s->mirror_base[s->model] = jvm_layouts[s->model].header;
	s->has_mirror_base[s->model] = true;
	return s->mirror_base[s->model];
}

/* ---- CLASS_DUMP -------------------------------------------------------- */

const uint8_t *hprof_take(struct cursor *c, size_t n)
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
int hprof_skip_values(struct cursor *cur, unsigned lead, uint16_t n,
		       struct static_counts *counts, struct static_refs *refs,
		       struct bad_value *bad)
{
	struct hprof_source *s = cur->s;

	for (uint16_t i = 0; i < n; i++) {
		uint64_t entry_at = cur->at;
		const uint8_t *p = hprof_take(cur, lead + 1);
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
			name = hprof_utf8_of(s, get_id(s, p));
			if (!name || name[0] != '<') {
				if (hprof_type_is_ref(t))
					counts->refs++;
				else
					counts->by_width[w]++;
			}
		}
		if (refs && hprof_type_is_ref(t)) {
			refs->names[refs->n++] = hprof_utf8_of(s, get_id(s, p));
		} else if (refs && refs->types) {
			refs->names[refs->room - 1 - refs->n_values] =
				hprof_utf8_of(s, get_id(s, p));
			refs->types[refs->n_values++] = (uint8_t)t;
		}
		if (!hprof_take(cur, w))
			return -1;
	}
	return 0;
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

int hprof_index_class_dump(struct hprof_source *s, const struct body *b,
			    uint64_t at)
{
	struct cursor cur = {.s = s, .at = at + 1, .end = b->end};
	unsigned id = s->id_size;
	struct hclass c = {.offset = at, .thread_name_at = -1};
	const uint8_t *p = hprof_take(&cur, class_dump_fixed(id) + 2);
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
	if (hprof_skip_values(&cur, 2, n, NULL, NULL, &bad) < 0)
		goto bad;
	if (!(p = hprof_take(&cur, 2)))
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
			return hprof_nomem_damage(s, at);
		c.static_names = statics.names;
		if (s->want_values)
			statics.types = (uint8_t *)(statics.names +
						    statics.room);
	}
	if (hprof_skip_values(&cur, id, be16(p), &c.statics,
			known ? NULL : &statics, &bad) < 0)
		goto bad;
	c.n_static_refs = statics.n;
	c.n_static_values = statics.n_values;
	if (!(p = hprof_take(&cur, 2)))
		goto short_body;
	c.n_fields = be16(p);
	if (!(p = hprof_take(&cur, (size_t)c.n_fields * (id + 1))))
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
			return hprof_damage(s, HT_E_CORRUPT, at,
				      "CLASS_DUMP of class 0x%llx: instance "
				      "field %u has type %u, not an HPROF type",
				      (unsigned long long)c.id, i, f[id]);
		}
		c.types[i] = f[id];
		c.names[i] = hprof_utf8_of(s, get_id(s, f));
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
	return hprof_nomem_damage(s, at);
bad:
	free(c.static_names);
	c.static_names = NULL;
	if (!cur.short_body && !cur.io)
		return hprof_damage(s, HT_E_CORRUPT, bad.at,
			      "CLASS_DUMP of class 0x%llx: %s %u has type %u, "
			      "not an HPROF type", (unsigned long long)c.id,
			      list, bad.index, bad.type);
short_body:
	free(c.static_names);
	if (cur.io)
		return hprof_io_damage(s, at);
	return hprof_overrun(s, b, at, S_CLASS_DUMP, 0);
}

/* The size of the CLASS_DUMP at `at` in a walk that only chases names:
 * read again, the first pass having checked it. */
int64_t hprof_class_dump_size(struct hprof_source *s, const struct body *b,
			       uint64_t at)
{
	struct cursor cur = {.s = s, .at = at + 1, .end = b->end};
	unsigned id = s->id_size;
	const uint8_t *p = hprof_take(&cur, class_dump_fixed(id) + 2);
	struct bad_value bad;

	if (!p || hprof_skip_values(&cur, 2, be16(p + class_dump_fixed(id)), NULL, NULL,
			      &bad) < 0 ||
	    !(p = hprof_take(&cur, 2)) ||
	    hprof_skip_values(&cur, id, be16(p), NULL, NULL, &bad) < 0 ||
	    !(p = hprof_take(&cur, 2)) ||
	    !hprof_take(&cur, (size_t)be16(p) * (id + 1)))
		return -1;
	return (int64_t)(cur.at - at);
}
