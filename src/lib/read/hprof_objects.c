/*
 * hprof_objects.c - a dump's objects in the HPROF reader's event pass
 * (hprof_internal.h): the segments read again in file order, each
 * INSTANCE_DUMP, OBJ_ARRAY_DUMP and PRIM_ARRAY_DUMP an object event (an
 * object array in parts of REFS_PER_EVENT), the class objects among them
 * in the order of their ids, and, when asked, the values of each.
 *
 * This runs once per object: the event's fields are each set once, and
 * the helpers it calls per object are here or inline.
 */
#include "lib/read/hprof_internal.h"

#include <stdlib.h>
#include <string.h>

/* ---- Instances' references --------------------------------------------- */

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

/* ---- Objects ----------------------------------------------------------- */

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
	const uint8_t *p = hprof_take(&cur, class_dump_fixed(id) + 2);
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
	if (hprof_skip_values(&cur, 2, be16(p + class_dump_fixed(id)), NULL, NULL,
			&bad) < 0 || !(p = hprof_take(&cur, 2)))
		goto changed;
	count = be16(p);
	if (reserve_refs(s, (size_t)count + 4) < 0 ||
	    reserve_ref_fields(s, (size_t)count + 4) < 0)
		return hprof_fail(s, err, HT_E_NOMEM, cr->offset, "%s", hprof_nomem_cause());
	c = class_of(s, obj);
	if (s->want_values &&
	    (HPROF_GROW(s->value_fields, (size_t)count + 1,
			s->cap_value_fields) < 0 ||
	     HPROF_GROW(s->values, (size_t)count + 1, s->cap_values) < 0))
		return hprof_fail(s, err, HT_E_NOMEM, cr->offset, "%s", hprof_nomem_cause());
	for (uint16_t i = 0; i < count; i++) {
		unsigned type, w;

		if (!(p = hprof_take(&cur, id + 1)))
			goto changed;
		type = p[id];
		w = hprof_type_width(type, id);
		if (!w || !(p = hprof_take(&cur, w)))
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
	if (!(p = hprof_take(&cur, 2)) || !hprof_take(&cur, (size_t)be16(p) * (id + 1)))
		goto changed;
	memcpy(s->refs + n, tail, sizeof(tail));
	for (unsigned i = 0; i < 4; i++)
		s->ref_fields[n + i] = HT_LINK_ID_SUPER + i;
	n += 4;
	size = layout_mirror_size(&jvm_layouts[s->model], hprof_mirror_base(s),
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
		return hprof_fail_read(s, err, cr->offset);
	return hprof_fail(s, err, HT_E_IO, cr->offset,
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
		return hprof_fail(s, err, HT_E_CORRUPT, s->at,
			    "INSTANCE_DUMP of 0x%llx: its class 0x%llx has no "
			    "CLASS_DUMP", (unsigned long long)obj,
			    (unsigned long long)class_id);
	while (c->super_id && depth++ <= MAX_CLASS_DEPTH) {
		uint64_t super = c->super_id;

		c = class_of(s, super);
		if (!c)
			return hprof_fail(s, err, HT_E_CORRUPT, s->at,
				    "INSTANCE_DUMP of 0x%llx: super class "
				    "0x%llx of its class 0x%llx has no "
				    "CLASS_DUMP", (unsigned long long)obj,
				    (unsigned long long)super,
				    (unsigned long long)class_id);
	}
	if (depth > MAX_CLASS_DEPTH)
		return hprof_fail(s, err, HT_E_LIMIT, s->at,
			    "INSTANCE_DUMP of 0x%llx: its class 0x%llx has "
			    "more than %d super classes, or they loop",
			    (unsigned long long)obj,
			    (unsigned long long)class_id, MAX_CLASS_DEPTH);
	return hprof_fail(s, err, HT_E_NOMEM, s->at, "%s", hprof_nomem_cause());
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
		return hprof_fail_read(s, err, s->at);
	obj = get_id(s, p + 1);
	class_id = get_id(s, p + 5 + id);
	n = be32(p + 5 + 2 * id);
	c = class_of(s, class_id);
	if (!c || !chain_known(s, c))
		return bad_class(s, err, obj, class_id);
	if (n > MAX_INSTANCE_DATA)
		return hprof_fail(s, err, HT_E_LIMIT, s->at,
			    "INSTANCE_DUMP of 0x%llx: %u bytes of fields, over "
			    "the %u MiB limit", (unsigned long long)obj, n,
			    MAX_INSTANCE_DATA >> 20);
	if (n != c->data_bytes)
		return hprof_fail(s, err, HT_E_CORRUPT, s->at,
			    "INSTANCE_DUMP of 0x%llx holds %u bytes of fields; "
			    "those of its class 0x%llx take %llu",
			    (unsigned long long)obj, n,
			    (unsigned long long)class_id,
			    (unsigned long long)c->data_bytes);
	if ((!c->has_layout[s->model] && !hprof_class_layout(s, c, s->model)) ||
	    (c->n_refs >= s->cap_refs && reserve_refs(s, c->n_refs + 1) < 0) ||
	    (c->n_refs >= s->cap_ref_fields &&
	     reserve_ref_fields(s, c->n_refs + 1) < 0))
		return hprof_fail(s, err, HT_E_NOMEM, s->at, "%s", hprof_nomem_cause());
	p = end - s->at - head >= n ? in_at(&s->in, s->at + head, n) : NULL;
	if (!p)
		return hprof_fail_read(s, err, s->at);
	s->refs[0] = class_id;
	s->ref_fields[0] = HT_LINK_ID_CLASS;
	instance_refs(s, c, p, s->refs + 1, s->ref_fields + 1);
	object_event(s, ev, s->at, obj, class_id, c->size[s->model],
		     (size_t)c->n_refs + 1);
	ev->u.object_references.ref_fields = s->ref_fields;
	if (s->want_values && instance_values(s, c, p, &ev->u.object_references) < 0)
		return hprof_fail(s, err, HT_E_NOMEM, s->at, "%s", hprof_nomem_cause());
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
		return hprof_fail(s, err, HT_E_NOMEM, s->array_sub_at,
			    "%s", hprof_nomem_cause());
	p = in_at(&s->in, s->array_at, (size_t)n * s->id_size);
	if (!p)
		return hprof_fail_read(s, err, s->array_sub_at);
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
		return hprof_fail_read(s, err, s->at);
	count = be32(p + 5 + id);
	type = tag == S_OBJ_ARRAY_DUMP ? HPROF_OBJECT : p[9 + id];
	bytes = (uint64_t)count * hprof_type_width(type, id);
	if (end - s->at - head < bytes)
		return hprof_fail_read(s, err, s->at);
	s->array_id = get_id(s, p + 1);
	s->array_size = layout_array_size(&jvm_layouts[s->model], type, count);
	s->array_sub_at = s->at;
	s->at += head + bytes;
	if (tag == S_PRIM_ARRAY_DUMP) {
		ht_id class_id = s->prim_array_class[type];

		if (array_link(s, class_id, 0) < 0)
			return hprof_fail(s, err, HT_E_NOMEM, s->array_sub_at,
				    "%s", hprof_nomem_cause());
		object_event(s, ev, s->array_sub_at, s->array_id, class_id,
			     s->array_size, 1);
		ev->u.object_references.ref_fields = s->ref_fields;
		if (s->want_values) {
			if (array_contents(s, type, count,
					   s->array_sub_at + head) < 0)
				return hprof_fail_read(s, err, s->array_sub_at);
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
int hprof_sort_class_objects(struct hprof_source *s, const struct dump *d)
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
		return hprof_fail_read(s, err, s->at);
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
int hprof_next_object(struct hprof_source *s, struct ht_event *ev,
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
			return hprof_fail_read(s, err, s->at);
		switch (p[0]) {
		case S_CLASS_DUMP:
			if (s->class_in_file >= d->n_classes ||
			    d->classes[s->class_in_file].offset != s->at)
				return hprof_fail_read(s, err, s->at);
			s->at += d->classes[s->class_in_file++].size;
			break;
		case S_INSTANCE_DUMP:
		case S_OBJ_ARRAY_DUMP:
		case S_PRIM_ARRAY_DUMP:
			return object_at(s, ev, p[0], end, err);
		default:
			size = hprof_root_body_size(p[0], s->id_size);
			if (!size)
				return hprof_fail_read(s, err, s->at);
			s->at += 1 + size;
		}
	}
}
