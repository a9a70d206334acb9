/*
 * hprof_layout.c - Java object sizes as HotSpot lays objects out (see
 * hprof_layout.h), checked against `jcmd GC.class_histogram` of JDK 17
 * with compressed oops, without, and without compressed class pointers.
 *
 * The field layout follows HotSpot's FieldLayoutBuilder (JDK 15 and
 * later): a class starts from the blocks its super classes' fields
 * occupy, with the gaps between them free; its primitive fields, widest
 * first, then its references, each go into the smallest free gap that
 * holds it aligned to its own width (the highest such gap on a tie), or
 * else at the end. @Contended classes and field groups are padded with
 * 128 bytes and never fill gaps. The instance size is the end, rounded
 * to the word, then to the 8-byte object alignment.
 *
 * HPROF carries neither annotations nor the fields HotSpot injects into a
 * few JDK classes, so both come from tables of the JDK's own classes.
 */
#include "lib/read/hprof_layout.h"
#include "util/alloc.h"
#include "util/membudget.h"

#include <stdlib.h>
#include <string.h>

/* ContendedPaddingWidth, HotSpot's default. */
#define CONTENDED_PADDING 128u
/* -XX:ObjectAlignmentInBytes, HotSpot's default. */
#define OBJECT_ALIGNMENT 8u

const struct jvm_layout jvm_layouts[JVM_MODELS_] = {
	[JVM_COMPRESSED] = {"compressed-oops", 12, 4, 8, 16, 16},
	[JVM_WIDE_OOPS] = {"wide-oops", 12, 8, 8, 16, 16},
	[JVM_WIDE] = {"wide-oops-and-class-pointers", 16, 8, 8, 24, 24},
	[JVM_32BIT] = {"32-bit", 8, 4, 4, 12, 16},
};

unsigned hprof_type_width(unsigned t, unsigned id_size)
{
	switch (t) {
	case HPROF_ARRAY_OBJECT:
	case HPROF_OBJECT:
		return id_size;
	case HPROF_BOOLEAN:
	case HPROF_BYTE:
		return 1;
	case HPROF_CHAR:
	case HPROF_SHORT:
		return 2;
	case HPROF_FLOAT:
	case HPROF_INT:
		return 4;
	case HPROF_DOUBLE:
	case HPROF_LONG:
		return 8;
	default:
		return 0;
	}
}

/* The width of a field in the object, as opposed to in the dump. */
static unsigned field_width(const struct jvm_layout *m, unsigned t)
{
	return hprof_type_is_ref(t) ? m->ref : hprof_type_width(t, 0);
}

static uint64_t align_up(uint64_t n, uint64_t a)
{
	return (n + a - 1) / a * a;
}

/* ---- what HPROF does not say ------------------------------------------- */

/* A field HotSpot injects: a machine word (intptr_t), or an HPROF type. */
#define WORD_FIELD 0xff

struct injected {
	const char *class_name;
	uint8_t types[8]; /* 0-terminated */
};

/* javaClasses.hpp, *_INJECTED_FIELDS, as of JDK 17. */
static const struct injected injected_fields[] = {
	{"java/lang/Class", {WORD_FIELD, WORD_FIELD, HPROF_INT, HPROF_INT,
			     HPROF_OBJECT, HPROF_OBJECT, HPROF_OBJECT}},
	{"java/lang/ClassLoader", {WORD_FIELD}},
	{"java/lang/Module", {WORD_FIELD}},
	{"java/lang/invoke/MemberName", {WORD_FIELD}},
	{"java/lang/invoke/ResolvedMethodName", {HPROF_OBJECT, WORD_FIELD}},
	{"java/lang/invoke/MethodHandleNatives$CallSiteContext",
	 {WORD_FIELD, HPROF_LONG}},
	{"java/lang/StackFrameInfo", {HPROF_SHORT}},
	{"java/lang/InternalError", {HPROF_BOOLEAN}},
};

#define OWN_GROUP NULL

struct contended_field {
	const char *field;
	const char *group; /* OWN_GROUP: a group of its own */
};

struct contended {
	const char *class_name;
	bool whole_class;
	struct contended_field fields[4];
};

/* The JDK's own uses of @jdk.internal.vm.annotation.Contended, as of JDK
 * 17 (sizes checked against its class histogram). */
static const struct contended contended_classes[] = {
	{"java/lang/Thread", false,
	 {{"threadLocalRandomSeed", "tlr"},
	  {"threadLocalRandomProbe", "tlr"},
	  {"threadLocalRandomSecondarySeed", "tlr"}}},
	{"java/util/concurrent/ConcurrentHashMap$CounterCell", true, {{0}}},
	{"java/util/concurrent/atomic/Striped64$Cell", true, {{0}}},
	{"java/util/concurrent/Exchanger$Node", true, {{0}}},
	{"java/util/concurrent/ForkJoinPool", false, {{"ctl", "fjpctl"}}},
	{"java/util/concurrent/ForkJoinPool$WorkQueue", false,
	 {{"top", "w"}, {"source", "w"}, {"nsteals", "w"}}},
	{"java/util/concurrent/SubmissionPublisher$BufferedSubscription", false,
	 {{"demand", OWN_GROUP}, {"waiting", OWN_GROUP}}},
};


static const struct injected *injected_of(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(injected_fields); i++)
		if (strcmp(injected_fields[i].class_name, name) == 0)
			return &injected_fields[i];
	return NULL;
}

static const struct contended *contended_of(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(contended_classes); i++)
		if (strcmp(contended_classes[i].class_name, name) == 0)
			return &contended_classes[i];
	return NULL;
}

/* The contended entry of field `name`, or NULL when it is not contended. */
static const struct contended_field *contended_field(const struct contended *c,
						    const char *name)
{
	if (!c || !name)
		return NULL;
	for (size_t i = 0; i < ARRAY_SIZE(c->fields) && c->fields[i].field; i++)
		if (strcmp(c->fields[i].field, name) == 0)
			return &c->fields[i];
	return NULL;
}

/* ---- placing fields ---------------------------------------------------- */

struct builder {
	struct field_block *blocks; /* the class's own fields, placed */
	uint32_t n_blocks;
	size_t cap_blocks;
	struct field_block *holes;  /* free gaps, sorted by offset */
	uint32_t n_holes;
	size_t cap_holes;
	uint32_t tail;              /* where the free space at the end starts */
	bool failed;                /* out of memory */
};

static void push(struct field_block **a, uint32_t *n, size_t *cap,
		 struct field_block b, bool *failed)
{
	if (ALLOC_GROW(*a, (size_t)*n + 1, *cap) < 0) {
		*failed = true;
		return;
	}
	(*a)[(*n)++] = b;
}

static void add_block(struct builder *b, uint32_t offset, uint32_t size)
{
	push(&b->blocks, &b->n_blocks, &b->cap_blocks,
	     (struct field_block){offset, size}, &b->failed);
}

static void add_hole(struct builder *b, uint32_t offset, uint32_t size)
{
	push(&b->holes, &b->n_holes, &b->cap_holes,
	     (struct field_block){offset, size}, &b->failed);
}

static uint32_t padding_to(uint32_t offset, uint32_t align)
{
	return (uint32_t)(align_up(offset, align) - offset);
}

/* The smallest gap that holds `size` bytes aligned to `size`, searched
 * from the end as HotSpot does (so a tie goes to the highest), or -1. */
static long best_hole(const struct builder *b, uint32_t size)
{
	long best = -1;

	for (uint32_t i = b->n_holes; i-- > 0;) {
		const struct field_block *h = &b->holes[i];

		if (h->size < size + padding_to(h->offset, size))
			continue;
		if (best < 0 || h->size < b->holes[best].size)
			best = (long)i;
	}
	return best;
}

/* Splits hole i around a field of `size` at its first aligned offset. */
static void fill_hole(struct builder *b, uint32_t i, uint32_t size)
{
	struct field_block h = b->holes[i];
	uint32_t pad = padding_to(h.offset, size);
	uint32_t rest = h.size - pad - size;
	struct field_block pieces[2];
	uint32_t n = 0;

	add_block(b, h.offset + pad, size);
	if (pad)
		pieces[n++] = (struct field_block){h.offset, pad};
	if (rest)
		pieces[n++] = (struct field_block){h.offset + pad + size, rest};
	if (n == 2) {
		push(&b->holes, &b->n_holes, &b->cap_holes, pieces[1],
		     &b->failed);
		if (b->failed)
			return;
		memmove(&b->holes[i + 2], &b->holes[i + 1],
			(b->n_holes - i - 2) * sizeof(*b->holes));
		b->holes[i] = pieces[0];
		b->holes[i + 1] = pieces[1];
	} else if (n == 1) {
		b->holes[i] = pieces[0];
	} else {
		memmove(&b->holes[i], &b->holes[i + 1],
			(b->n_holes - i - 1) * sizeof(*b->holes));
		b->n_holes--;
	}
}

/* Places one field of `size` bytes (its alignment too); append_only
 * skips the gaps, as for @Contended fields and after padded supers. */
static void place(struct builder *b, uint32_t size, bool append_only)
{
	long hole = append_only ? -1 : best_hole(b, size);
	uint32_t pad;

	if (hole >= 0) {
		fill_hole(b, (uint32_t)hole, size);
		return;
	}
	pad = padding_to(b->tail, size);
	if (pad)
		add_hole(b, b->tail, pad);
	add_block(b, b->tail + pad, size);
	b->tail += pad + size;
}

static int compare_blocks(const void *x, const void *y)
{
	const struct field_block *a = x, *b = y;

	return (a->offset > b->offset) - (a->offset < b->offset);
}

/*
 * The super class's fields where they lie: the gaps between them are free
 * unless the super class itself uses @Contended: then they are padding,
 * 128 more bytes of it follow, and the new fields only append. Returns
 * whether they only append. Only the class's own fields become blocks.
 */
static bool start_from_super(struct builder *b, const struct jvm_layout *m,
			     const struct field_layout *super)
{
	b->tail = m->header;
	if (!super)
		return false;
	for (uint32_t i = 0; i < super->n_gaps && !super->contended; i++)
		add_hole(b, super->gaps[i].offset, super->gaps[i].size);
	b->tail = super->block_end;
	if (!super->contended)
		return false;
	b->tail += CONTENDED_PADDING;
	return super->has_fields;
}

/*
 * The gaps between the fields of the class laid out in b over super: the
 * super class's gaps and the space after its last field, less the blocks
 * of the class's own fields (sorted), which lie in one or the other.
 * As HotSpot's layout does, a later subclass may fill any of them, the
 * padding of an @Contended super class's super class included.
 */
static int own_gaps(const struct builder *b, const struct jvm_layout *m,
		    const struct field_layout *super, struct field_layout *out)
{
	uint32_t start = super ? super->block_end : m->header;
	uint32_t end = start, n_super = super ? super->n_gaps : 0;
	struct field_block *gaps = NULL;
	size_t cap = 0;
	uint32_t n = 0, own = 0;

	for (uint32_t i = 0; i < b->n_blocks; i++)
		if (b->blocks[i].offset + b->blocks[i].size > end)
			end = b->blocks[i].offset + b->blocks[i].size;
	/* each interval, cut by the own blocks that lie in it */
	for (uint32_t i = 0; i <= n_super; i++) {
		struct field_block g = i < n_super ? super->gaps[i]
			: (struct field_block){start, end - start};
		uint32_t at = g.offset, stop = g.offset + g.size;

		for (; own < b->n_blocks && b->blocks[own].offset < stop; own++) {
			const struct field_block *f = &b->blocks[own];

			if (f->offset > at) {
				if (ALLOC_GROW(gaps, (size_t)n + 1, cap) < 0)
					goto fail;
				gaps[n++] = (struct field_block){at,
								 f->offset - at};
			}
			at = f->offset + f->size;
		}
		if (stop > at) {
			if (ALLOC_GROW(gaps, (size_t)n + 1, cap) < 0)
				goto fail;
			gaps[n++] = (struct field_block){at, stop - at};
		}
	}
	SHRINK_ARRAY(gaps, n);
	/* the gaps are kept with the class: charged to the memory budget
	 * until layout_free */
	if (mem_budget_charge((uint64_t)n * sizeof(*gaps)) < 0)
		goto fail;
	out->block_end = end;
	out->has_fields = (super && super->has_fields) || b->n_blocks > 0;
	out->n_gaps = n;
	out->gaps = gaps;
	return 0;
fail:
	free(gaps);
	return -1;
}

/* The fields of one group: primitives widest first, then references. */
struct group {
	const char *name;
	uint32_t count[9]; /* primitives by width */
	uint32_t refs;
};

static void group_add(struct group *g, const struct jvm_layout *m,
		      unsigned t)
{
	if (hprof_type_is_ref(t))
		g->refs++;
	else
		g->count[field_width(m, t)]++;
}

static void place_group(struct builder *b, const struct jvm_layout *m,
			const struct group *g, bool append_only)
{
	static const unsigned widths[] = {8, 4, 2, 1};

	for (size_t w = 0; w < ARRAY_SIZE(widths); w++)
		for (uint32_t i = 0; i < g->count[widths[w]]; i++)
			place(b, widths[w], append_only);
	for (uint32_t i = 0; i < g->refs; i++)
		place(b, m->ref, append_only);
}

/* The group of a contended field: an existing one of the same name, or a
 * new one; HotSpot numbers groups in declaration order, the reverse of
 * the order HotSpot's dumper lists fields in. */
static struct group *group_for(struct group *groups, uint32_t *n,
			       const struct contended_field *f)
{
	for (uint32_t i = 0; f->group && i < *n; i++)
		if (groups[i].name && strcmp(groups[i].name, f->group) == 0)
			return &groups[i];
	memset(&groups[*n], 0, sizeof(groups[*n]));
	groups[*n].name = f->group;
	return &groups[(*n)++];
}

int layout_class(const struct jvm_layout *m, const struct class_fields *c,
		 const struct field_layout *super, struct field_layout *out)
{
	const struct injected *inj = injected_of(c->name);
	const struct contended *con = contended_of(c->name);
	struct group root = {0}, groups[ARRAY_SIZE(contended_classes[0].fields)];
	uint32_t n_groups = 0;
	struct builder b = {0};
	bool append_only = start_from_super(&b, m, super);
	bool padded = false;

	for (uint32_t i = c->n; i-- > 0;) {
		const struct contended_field *f =
			contended_field(con, c->names ? c->names[i] : NULL);

		group_add(f ? group_for(groups, &n_groups, f) : &root, m,
			  c->types[i]);
	}
	for (size_t i = 0; inj && i < ARRAY_SIZE(inj->types) && inj->types[i]; i++) {
		if (inj->types[i] == WORD_FIELD)
			root.count[m->word]++;
		else
			group_add(&root, m, inj->types[i]);
	}
	if (con && con->whole_class) {
		b.tail += CONTENDED_PADDING;
		append_only = padded = true;
	}
	place_group(&b, m, &root, append_only);
	for (uint32_t g = 0; g < n_groups; g++) {
		b.tail += CONTENDED_PADDING;
		place_group(&b, m, &groups[g], true);
		padded = true;
	}
	if (padded)
		b.tail += CONTENDED_PADDING;
	free(b.holes);
	if (b.n_blocks)
		qsort(b.blocks, b.n_blocks, sizeof(*b.blocks), compare_blocks);
	if (b.failed || own_gaps(&b, m, super, out) < 0) {
		free(b.blocks);
		return -1;
	}
	free(b.blocks);
	out->end = b.tail;
	out->contended = con != NULL;
	return 0;
}

void layout_free(struct field_layout *l)
{
	mem_budget_release((uint64_t)l->n_gaps * sizeof(*l->gaps));
	free(l->gaps);
	memset(l, 0, sizeof(*l));
}

uint64_t layout_instance_size(const struct jvm_layout *m,
			      const struct field_layout *l)
{
	return align_up(align_up(l->end, m->word), OBJECT_ALIGNMENT);
}

uint64_t layout_array_size(const struct jvm_layout *m, unsigned t,
			   uint64_t n)
{
	unsigned w = field_width(m, t);
	unsigned base = w == 8 ? m->array_base_8 : m->array_base;

	return align_up(base + n * w, OBJECT_ALIGNMENT);
}

/* The statics lie after the java.lang.Class fields, references first (the
 * collector scans them as one run), then the primitives, widest first,
 * each appended at its alignment. */
uint64_t layout_mirror_size(const struct jvm_layout *m, uint64_t class_size,
			    const struct static_counts *s)
{
	uint64_t end = (uint64_t)s->refs * m->ref;

	for (unsigned w = 8; w >= 1; w /= 2) {
		if (!s->by_width[w])
			continue;
		end = align_up(end, w) + (uint64_t)s->by_width[w] * w;
	}
	return align_up(class_size + align_up(end, m->word), OBJECT_ALIGNMENT);
}
