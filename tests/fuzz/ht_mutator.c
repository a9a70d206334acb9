/*
 * ht_mutator.c - a structure-aware libFuzzer mutator for .ht inputs
 * (fuzz_ht, fuzz_replay; linked only into the libFuzzer builds).
 *
 * Random bytes almost never make a chunk whose CRC-32s, lengths and zlib
 * stream are all right, so byte mutation alone stops at the chunk checks
 * and the decoder, the replay and the analyses rarely see a hostile value.
 * This mutator takes the input apart (file header, chunks, each chunk's
 * events decoded into fields with their absolute ids), changes it as a
 * hostile producer would, and puts it back together: chunks compressed
 * again with correct lengths, CRCs, first-event indices and event counts,
 * and (mostly) a correct index chunk and trailer, so that the reader
 * accepts every chunk and the hostile content reaches what lies behind it.
 *
 * Strategies (one or a few per call, drawn from libFuzzer's Seed only, so
 * a run repeats):
 *   payload   LLVMFuzzerMutate on one chunk's decompressed payload
 *   count     a count or string length set to a hostile value: 0, 1,
 *             2^k+-1, at and just over what is left of the chunk (the
 *             decoder's own bound), the heaptrace(5) LIMITS (65535-byte
 *             strings, 2^32-3 objects, 2^32-1 refs), 2^63, 2^64-1
 *   number    the same values in any other field (sizes, flags, ids,
 *             generations, options, container types)
 *   collide   every object id (objects, refs, roots, blocks) of the file
 *             rewritten by one map that makes them share low bits, share
 *             high bits, collapse onto few values, wrap around 2^64 or
 *             sit at its top; or a few ids duplicated at random
 *   sizes     object sizes that add up to 2^63 (the bytes-per-dump limit)
 *   events    events duplicated (the same ids: a real duplicate, not
 *             shifted deltas), dropped, swapped, moved, or a run of them
 *             repeated many times inside one chunk
 *   more      an object split into a continuation (JVM_OBJ_MORE_REFERENCES)
 *             or a continuation flag set or cleared
 *   chunks    a chunk repeated many times (within the size limit),
 *             dropped, swapped, split at an event or merged with the next
 *   header    the file header payload mutated, its length and CRC fixed
 *   index     rebuilt (mostly), left stale, or dropped with the trailer
 *   zlib      levels 0 to 9; one chunk in 64 claims one event too many or
 *             too few (all else right)
 *   bare      one call in 16 writes the events alone, as a chunk payload
 *             (fuzz_ht decodes its input as one too); such an input, or
 *             any that decodes as events, is mutated the same way
 * LLVMFuzzerCustomCrossOver splices a run of events of the other input
 * into a chunk, or puts one of its chunks among the first's chunks;
 * and in one call in five plain LLVMFuzzerMutate on the whole file, so the
 * checks in front (CRCs, lengths, magic) are still fuzzed. Inputs that are
 * not a .ht (YAML, HPROF for fuzz_replay) and garbage that does not parse
 * go to LLVMFuzzerMutate as well.
 *
 * The event grammar below mirrors heaptrace(5), EVENT CODING, and
 * src/lib/common/codec.c; it is written out again here on purpose, so the
 * mutator does not share the decoder's mistakes.
 */
#include "lib/common/format.h"
#include "util/alloc.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed);
size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1,
				 const uint8_t *data2, size_t size2,
				 uint8_t *out, size_t max_out_size,
				 unsigned int seed);

/* Decompressed bytes a mutated file may hold in all, so that replay and
 * analyses stay well inside the run's timeout. */
#define RAW_BUDGET (128u << 10)
#define MAX_STRING 65535u
#define OBJ_MORE_REFERENCES 0x10000u
#define C_BEGIN 1u

/* ---- randomness: from libFuzzer's seed only ------------------------------ */

struct rng {
	uint64_t s;
};

static uint64_t rnd64(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

/* 0 .. n-1; n > 0 */
static size_t rnd(struct rng *r, size_t n)
{
	return n ? (size_t)(rnd64(r) % n) : 0;
}

static bool one_in(struct rng *r, size_t n)
{
	return rnd(r, n) == 0;
}

/* ---- growing arrays ------------------------------------------------------ */

/* memmove that takes n = 0 with null pointers, as an empty array has */
static void mem_move(void *to, const void *from, size_t n)
{
	if (n)
		memmove(to, from, n);
}

static void *grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;

	if (p && need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	p = realloc(p, n * elem);
	if (!p)
		abort(); /* the fuzzer's own memory: nothing sensible to do */
	*cap = n;
	return p;
}

struct buf {
	uint8_t *d;
	size_t n, cap;
};

static void buf_put(struct buf *b, const void *p, size_t n)
{
	b->d = grow(b->d, &b->cap, b->n + n + 1, 1);
	if (n)
		mem_move(b->d + b->n, p, n);
	b->n += n;
}

static void buf_byte(struct buf *b, uint8_t v)
{
	buf_put(b, &v, 1);
}

static void buf_varint(struct buf *b, uint64_t v)
{
	while (v >= 0x80) {
		buf_byte(b, (uint8_t)(v | 0x80));
		v >>= 7;
	}
	buf_byte(b, (uint8_t)v);
}

static uint64_t zigzag(uint64_t v)
{
	return (v << 1) ^ (uint64_t)((int64_t)v >> 63);
}

static uint64_t unzigzag(uint64_t v)
{
	return (v >> 1) ^ (uint64_t)-(int64_t)(v & 1);
}

/* As varint_get: at most 10 bytes, the last at most 1. */
static int varint(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
	const uint8_t *p = *pp;
	uint64_t v = 0;
	unsigned shift = 0;

	for (;;) {
		uint8_t b;

		if (p >= end)
			return -1;
		b = *p++;
		if (shift == 63 && b > 1)
			return -1;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			break;
		shift += 7;
		if (shift > 63)
			return -1;
	}
	*pp = p;
	*out = v;
	return 0;
}

/* ---- the event model ----------------------------------------------------- */

/* A field of an event. Stream-coded ids hold their absolute value, so that
 * events can be moved, copied and rewritten and coded again right. */
enum tok_kind {
	K_U,      /* plain varint, role below */
	K_BYTES,  /* raw bytes: string body, root kinds or flags */
	K_OBJ,    /* object stream id */
	K_CLS,    /* class stream id */
	K_ROOT,   /* root stream reference */
	K_REF,    /* an object's reference: aux 0 null, 1 absolute, 2 delta */
	K_GBSTART,/* generation range start, delta within the event */
	K_MNEW,   /* moved block's new id: coded as the shift's delta */
	K_RID,    /* root id, delta within the event */
};

enum tok_role {
	R_NONE,
	R_OPT,
	R_COUNT,  /* aux: bytes per element, the decoder's bound */
	R_STRLEN,
	R_SIZE,   /* an object's or class's size */
	R_U32,    /* flags, generations: the decoder refuses > 2^32-1 */
	R_OFLAGS, /* object_references flags */
	R_ID,     /* thread, method, container ids, GC number */
	R_CTYPE,  /* container type */
	R_LEN,
	R_OWNER,  /* on K_OBJ: the object of object_references */
};

struct tok {
	uint8_t kind, role, aux;
	uint64_t v;
	const uint8_t *bytes; /* K_BYTES */
	size_t n;
};

struct event {
	uint8_t type;
	size_t tok, ntok;
};

struct model {
	struct tok *t;
	size_t nt, tcap;
	struct event *e;
	size_t ne, ecap;
};

static size_t add_tok(struct model *m, uint8_t kind, uint8_t role, uint64_t v)
{
	m->t = grow(m->t, &m->tcap, m->nt + 1, sizeof(*m->t));
	m->t[m->nt] = (struct tok){.kind = kind, .role = role, .v = v};
	return m->nt++;
}

/* Copies event ev (its tokens too), so that the copy can change alone. */
static size_t clone_event(struct model *m, size_t ev)
{
	struct event e = m->e[ev];

	m->t = grow(m->t, &m->tcap, m->nt + e.ntok, sizeof(*m->t));
	mem_move(m->t + m->nt, m->t + e.tok, e.ntok * sizeof(*m->t));
	e.tok = m->nt;
	m->nt += e.ntok;
	m->e = grow(m->e, &m->ecap, m->ne + 1, sizeof(*m->e));
	m->e[m->ne] = e;
	return m->ne++;
}

/* The parse of one payload: the decoder's grammar and its refusals. */
struct parser {
	struct model *m;
	const uint8_t *p, *end;
	uint64_t obj, cls, root; /* stream bases */
};

#define NEED(x)                   \
	do {                      \
		if ((x) < 0)      \
			return -1; \
	} while (0)

static int p_u(struct parser *ps, uint8_t role, uint64_t *out)
{
	uint64_t v;

	NEED(varint(&ps->p, ps->end, &v));
	if ((role == R_U32 || role == R_OFLAGS || role == R_CTYPE) &&
	    v > UINT32_MAX)
		return -1;
	add_tok(ps->m, K_U, role, v);
	if (out)
		*out = v;
	return 0;
}

static int p_delta(struct parser *ps, uint8_t kind, uint64_t *base,
		   uint8_t role)
{
	uint64_t v;

	NEED(varint(&ps->p, ps->end, &v));
	*base += unzigzag(v);
	add_tok(ps->m, kind, role, *base);
	return 0;
}

static int p_count(struct parser *ps, unsigned min_bytes, size_t *out)
{
	uint64_t v;
	size_t i;

	NEED(varint(&ps->p, ps->end, &v));
	if (v > (uint64_t)(ps->end - ps->p) / min_bytes)
		return -1;
	i = add_tok(ps->m, K_U, R_COUNT, v);
	ps->m->t[i].aux = (uint8_t)min_bytes;
	*out = (size_t)v;
	return 0;
}

static int p_bytes(struct parser *ps, size_t n)
{
	size_t i;

	if ((size_t)(ps->end - ps->p) < n)
		return -1;
	i = add_tok(ps->m, K_BYTES, R_NONE, 0);
	ps->m->t[i].bytes = ps->p;
	ps->m->t[i].n = n;
	ps->p += n;
	return 0;
}

static int p_string(struct parser *ps)
{
	uint64_t v;

	NEED(p_u(ps, R_STRLEN, &v));
	if (v == 0)
		return 0;
	if (v - 1 > MAX_STRING || v - 1 > (uint64_t)(ps->end - ps->p) ||
	    memchr(ps->p, 0, (size_t)(v - 1)))
		return -1;
	return p_bytes(ps, (size_t)(v - 1));
}

static int p_event(struct parser *ps, uint8_t type)
{
	uint64_t opts, v;
	size_t n;

	switch (type) {
	case 1: /* class */
		NEED(p_u(ps, R_OPT, &opts));
		if (opts & ~1ULL)
			return -1;
		NEED(p_delta(ps, K_CLS, &ps->cls, R_NONE));
		NEED(p_string(ps));
		if (opts & 1)
			NEED(p_u(ps, R_SIZE, NULL));
		return 0;
	case 2: /* thread */
	case 3: /* method */
		NEED(p_u(ps, R_ID, NULL));
		return p_string(ps);
	case 4: /* object_allocated */
		NEED(p_delta(ps, K_OBJ, &ps->obj, R_NONE));
		NEED(p_delta(ps, K_CLS, &ps->cls, R_NONE));
		return p_u(ps, R_SIZE, NULL);
	case 5: /* gc_started */
		NEED(p_u(ps, R_OPT, &opts));
		if (opts & ~3ULL)
			return -1;
		if (opts & 1)
			NEED(p_u(ps, R_ID, NULL));
		return p_u(ps, R_U32, NULL);
	case 6: /* generation_bounds */
		NEED(p_count(ps, 4, &n));
		for (size_t i = 0; i < n; i++) {
			NEED(p_u(ps, R_U32, NULL));
			NEED(varint(&ps->p, ps->end, &v));
			add_tok(ps->m, K_GBSTART, R_NONE, v); /* fixed below */
			NEED(p_u(ps, R_LEN, NULL));
			NEED(p_u(ps, R_LEN, NULL));
		}
		return 0;
	case 7: { /* moved_references */
		uint64_t shift = 0;

		NEED(p_count(ps, 3, &n));
		for (size_t i = 0; i < n; i++) {
			NEED(p_delta(ps, K_OBJ, &ps->obj, R_NONE));
			NEED(varint(&ps->p, ps->end, &v));
			shift += unzigzag(v);
			add_tok(ps->m, K_MNEW, R_NONE, ps->obj + shift);
			NEED(p_u(ps, R_LEN, NULL));
		}
		return 0;
	}
	case 8: /* surviving_references */
		NEED(p_count(ps, 2, &n));
		for (size_t i = 0; i < n; i++) {
			NEED(p_delta(ps, K_OBJ, &ps->obj, R_NONE));
			NEED(p_u(ps, R_LEN, NULL));
		}
		return 0;
	case 9: /* gc_finished */
		return 0;
	case 10: /* begin_container */
		NEED(p_u(ps, R_CTYPE, NULL));
		NEED(p_u(ps, R_ID, NULL));
		return p_u(ps, R_ID, NULL);
	case 11: { /* root_references */
		uint64_t prev = 0;

		NEED(p_u(ps, R_OPT, &opts));
		if (opts >> 5 || (opts >> 3) > 2)
			return -1;
		NEED(p_count(ps, 2, &n));
		for (size_t i = 0; i < n; i++)
			NEED(p_delta(ps, K_ROOT, &ps->root, R_NONE));
		for (size_t i = 0; i < n; i++)
			NEED(p_u(ps, R_U32, NULL));
		if (opts & 1)
			NEED(p_bytes(ps, n));
		if (opts & 2)
			NEED(p_bytes(ps, n));
		if (opts & 4)
			for (size_t i = 0; i < n; i++)
				NEED(p_delta(ps, K_RID, &prev, R_NONE));
		return 0;
	}
	case 12: { /* object_references */
		uint64_t prev;

		NEED(p_u(ps, R_OPT, &opts));
		if (opts >> 4 || (opts >> 2) > 2)
			return -1;
		NEED(p_delta(ps, K_OBJ, &ps->obj, R_OWNER));
		prev = ps->obj;
		NEED(p_delta(ps, K_CLS, &ps->cls, R_NONE));
		NEED(p_u(ps, R_SIZE, NULL));
		NEED(p_u(ps, R_OFLAGS, NULL));
		if (opts & 2)
			NEED(p_u(ps, R_U32, NULL));
		NEED(p_count(ps, 1, &n));
		for (size_t i = 0; i < n; i++) {
			size_t t;

			NEED(varint(&ps->p, ps->end, &v));
			if (v == 0) {
				add_tok(ps->m, K_REF, R_NONE, 0);
				continue;
			}
			if (v == 1) {
				NEED(varint(&ps->p, ps->end, &prev));
				t = add_tok(ps->m, K_REF, R_NONE, prev);
				ps->m->t[t].aux = 1;
				continue;
			}
			prev += unzigzag(v - 2);
			t = add_tok(ps->m, K_REF, R_NONE, prev);
			ps->m->t[t].aux = 2;
		}
		if (opts & 1)
			for (size_t i = 0; i < n; i++)
				NEED(p_u(ps, R_U32, NULL));
		return 0;
	}
	default:
		return -1;
	}
}

/* Parses payload[0..len) into m: appends its events, returns their index
 * range through *first and *count; *tail the offset of the first event that
 * does not decode (len when all do). */
static void parse_payload(struct model *m, const uint8_t *payload, size_t len,
			  size_t *first, size_t *count, size_t *tail)
{
	struct parser ps = {.m = m, .p = payload, .end = payload + len};

	*first = m->ne;
	*count = 0;
	while (ps.p < ps.end) {
		const uint8_t *at = ps.p;
		size_t nt = m->nt;
		uint8_t type = *ps.p++;

		if (p_event(&ps, type) < 0) {
			m->nt = nt;
			ps.p = at;
			break;
		}
		/* generation range starts: zigzag differences in the event */
		{
			uint64_t prev = 0;

			for (size_t i = nt; i < m->nt; i++)
				if (m->t[i].kind == K_GBSTART) {
					prev += unzigzag(m->t[i].v);
					m->t[i].v = prev;
				}
		}
		m->e = grow(m->e, &m->ecap, m->ne + 1, sizeof(*m->e));
		m->e[m->ne++] = (struct event){.type = type, .tok = nt,
					       .ntok = m->nt - nt};
		(*count)++;
	}
	*tail = (size_t)(ps.p - payload);
}

/* ---- coding events again ------------------------------------------------- */

struct bases {
	uint64_t obj, cls, root;
};

/* Appends event ev of m to b, its deltas against *bs. When mark is a
 * token of the event, *mark_end gets the offset in b after it. */
static void encode_event(struct buf *b, const struct model *m, size_t ev,
			 struct bases *bs, size_t mark, size_t *mark_end)
{
	const struct event *e = &m->e[ev];
	uint64_t ref_prev = 0, gb_prev = 0, shift_prev = 0, old = 0;
	uint64_t rid_prev = 0;

	buf_byte(b, e->type);
	for (size_t i = e->tok; i < e->tok + e->ntok; i++) {
		const struct tok *t = &m->t[i];

		switch (t->kind) {
		case K_U:
			buf_varint(b, t->v);
			break;
		case K_BYTES:
			buf_put(b, t->bytes, t->n);
			break;
		case K_OBJ:
			buf_varint(b, zigzag(t->v - bs->obj));
			bs->obj = old = t->v;
			if (t->role == R_OWNER)
				ref_prev = t->v;
			break;
		case K_CLS:
			buf_varint(b, zigzag(t->v - bs->cls));
			bs->cls = t->v;
			break;
		case K_ROOT:
			buf_varint(b, zigzag(t->v - bs->root));
			bs->root = t->v;
			break;
		case K_REF: {
			uint64_t z = zigzag(t->v - ref_prev);

			if (t->aux == 0) {
				buf_byte(b, 0);
				break;
			}
			if (t->aux == 1 || z > UINT64_MAX - 2) {
				buf_byte(b, 1);
				buf_varint(b, t->v);
			} else {
				buf_varint(b, z + 2);
			}
			ref_prev = t->v;
			break;
		}
		case K_GBSTART:
			buf_varint(b, zigzag(t->v - gb_prev));
			gb_prev = t->v;
			break;
		case K_MNEW: {
			uint64_t shift = t->v - old;

			buf_varint(b, zigzag(shift - shift_prev));
			shift_prev = shift;
			break;
		}
		case K_RID:
			buf_varint(b, zigzag(t->v - rid_prev));
			rid_prev = t->v;
			break;
		}
		if (i == mark && mark_end)
			*mark_end = b->n;
	}
}

/* ---- the file model ------------------------------------------------------ */

/* An event of some model: chunks may hold events of both inputs of a
 * cross-over. */
struct evref {
	struct model *m;
	size_t ev;
};

enum chunk_form {
	CH_EVENTS,   /* events (and a tail of undecodable bytes), coded again */
	CH_RAW,      /* a payload given as bytes, compressed again */
	CH_VERBATIM, /* the chunk's bytes as they were (did not inflate) */
};

struct chunk {
	uint8_t kind;
	uint8_t form;
	struct evref *ev;
	size_t nev, evcap;
	const uint8_t *tail;
	size_t tail_len;
	uint8_t *raw; /* CH_RAW, owned */
	size_t raw_len;
	const uint8_t *verb;
	size_t verb_len;
};

struct file {
	const uint8_t *header; /* the file header, CRC included */
	size_t header_len;
	uint8_t *own_header;   /* when mutated */
	struct chunk *c;
	size_t nc, ccap;
	/* the index chunk's payload after its totals: violation counts and
	 * dropped events, kept when the index is rebuilt */
	const uint8_t *index_rest;
	size_t index_rest_len;
	const uint8_t *index_raw; /* the old index payload, for a stale one */
	size_t index_raw_len;
	bool had_index;
	bool bare; /* a chunk payload alone, no file around it */
	struct model m;
	uint8_t **raws; /* inflated payloads, owned */
	size_t nraws, rawcap;
	size_t raw_total;
};

static void chunk_free(struct chunk *c)
{
	free(c->ev);
	free(c->raw);
}

static void file_free(struct file *f)
{
	for (size_t i = 0; i < f->nc; i++)
		chunk_free(&f->c[i]);
	free(f->c);
	for (size_t i = 0; i < f->nraws; i++)
		free(f->raws[i]);
	free(f->raws);
	free(f->m.t);
	free(f->m.e);
	free(f->own_header);
}

static struct chunk *add_chunk(struct file *f)
{
	f->c = grow(f->c, &f->ccap, f->nc + 1, sizeof(*f->c));
	memset(&f->c[f->nc], 0, sizeof(*f->c));
	return &f->c[f->nc++];
}

static void chunk_add_ev(struct chunk *c, struct model *m, size_t ev)
{
	c->ev = grow(c->ev, &c->evcap, c->nev + 1, sizeof(*c->ev));
	c->ev[c->nev++] = (struct evref){m, ev};
}

/* Inflates exactly raw_len bytes; NULL if the stream says otherwise. */
static uint8_t *inflate_payload(const uint8_t *in, size_t in_len,
				size_t raw_len)
{
	z_stream zs;
	uint8_t *out = malloc(raw_len + 1);
	int rc;

	if (!out)
		return NULL;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit(&zs) != Z_OK) {
		free(out);
		return NULL;
	}
	zs.next_in = (Bytef *)in;
	zs.avail_in = (uInt)in_len;
	zs.next_out = out;
	zs.avail_out = (uInt)raw_len + 1;
	rc = inflate(&zs, Z_FINISH);
	inflateEnd(&zs);
	if (rc != Z_STREAM_END || zs.total_out != raw_len) {
		free(out);
		return NULL;
	}
	return out;
}

/* Skips the index payload's entries and totals: what follows is kept. */
static void note_index(struct file *f, const uint8_t *raw, size_t len)
{
	const uint8_t *p = raw, *end = raw + len;
	uint64_t n, v;

	f->had_index = true;
	f->index_raw = raw;
	f->index_raw_len = len;
	if (varint(&p, end, &n) < 0 || n > len)
		return;
	for (uint64_t i = 0; i < 3 * n + 4; i++)
		if (varint(&p, end, &v) < 0)
			return;
	f->index_rest = p;
	f->index_rest_len = (size_t)(end - p);
}

/* 0 and f filled, or -1: not a .ht this mutator can take apart. */
static int parse_file(struct file *f, const uint8_t *d, size_t size)
{
	size_t at, hlen;

	memset(f, 0, sizeof(*f));
	if (size < HT_FILE_HEADER_FIXED + 4 ||
	    memcmp(d, HT_MAGIC, HT_MAGIC_LEN) != 0)
		return -1;
	hlen = get_le32(d + 12);
	if (hlen > size - HT_FILE_HEADER_FIXED - 4)
		return -1;
	f->header = d;
	f->header_len = at = HT_FILE_HEADER_FIXED + hlen + 4;
	while (size - at >= HT_CHUNK_HEADER_SIZE &&
	       memcmp(d + at, HT_CHUNK_MAGIC, 4) == 0) {
		const uint8_t *h = d + at;
		size_t stored = get_le32(h + 8), raw_len = get_le32(h + 12);
		struct chunk *c;
		uint8_t *raw = NULL;

		if (stored > size - at - HT_CHUNK_HEADER_SIZE)
			break;
		c = add_chunk(f);
		c->kind = h[4];
		if (raw_len <= RAW_BUDGET - f->raw_total &&
		    (c->kind == HT_CHUNK_EVENTS || c->kind == HT_CHUNK_INDEX))
			raw = inflate_payload(h + HT_CHUNK_HEADER_SIZE, stored,
					      raw_len);
		if (!raw) {
			c->form = CH_VERBATIM;
			c->verb = h;
			c->verb_len = HT_CHUNK_HEADER_SIZE + stored;
		} else {
			f->raws = grow(f->raws, &f->rawcap, f->nraws + 1,
				       sizeof(*f->raws));
			f->raws[f->nraws++] = raw;
			f->raw_total += raw_len;
			if (c->kind == HT_CHUNK_INDEX) {
				note_index(f, raw, raw_len);
				f->nc--; /* rebuilt at the end */
				chunk_free(c);
			} else {
				size_t first, count, tail;

				c->form = CH_EVENTS;
				parse_payload(&f->m, raw, raw_len, &first,
					      &count, &tail);
				for (size_t i = 0; i < count; i++)
					chunk_add_ev(c, &f->m, first + i);
				c->tail = raw + tail;
				c->tail_len = raw_len - tail;
			}
		}
		at += HT_CHUNK_HEADER_SIZE + stored;
	}
	return f->nc ? 0 : -1;
}

/* ---- hostile values ------------------------------------------------------ */

/* A hostile value for a field; left is what the payload holds after it
 * (for counts and string lengths, the decoder's bound). */
static uint64_t hostile(struct rng *r, const struct tok *t, uint64_t left)
{
	static const uint64_t fixed[] = {
		0, 1, 2, 3, 0x7f, 0x80, 0xff, 0x100, 0x3fff, 0x4000, 0xffff,
		0x10000, 0x10001, 0x7fffffff, 0x80000000, 0xfffffffdULL,
		0xfffffffeULL, 0xffffffffULL, 0x100000000ULL, 0x100000001ULL,
		0x7fffffffffffffffULL, 0x8000000000000000ULL,
		0x8000000000000001ULL, 0xfffffffffffffffeULL,
		0xffffffffffffffffULL,
	};
	unsigned k = (unsigned)rnd(r, 64);
	uint64_t p2 = (uint64_t)1 << k;

	if (t->role == R_COUNT && t->aux && one_in(r, 2)) {
		uint64_t fit = left / t->aux;

		switch (rnd(r, 4)) {
		case 0: return fit;
		case 1: return fit + 1;
		case 2: return fit ? fit - 1 : 0;
		default: return fit * 2 + rnd(r, 4);
		}
	}
	if (t->role == R_STRLEN && one_in(r, 2)) {
		switch (rnd(r, 6)) {
		case 0: return MAX_STRING;     /* 65534 bytes */
		case 1: return MAX_STRING + 1; /* 65535: the limit */
		case 2: return MAX_STRING + 2; /* one over */
		case 3: return left + 1;       /* all that is left */
		case 4: return left + 2;       /* one more */
		default: return left;
		}
	}
	if (t->role == R_OFLAGS && one_in(r, 2))
		return t->v ^ OBJ_MORE_REFERENCES;
	if ((t->role == R_U32 || t->role == R_CTYPE) && one_in(r, 2))
		return rnd(r, 3) == 0 ? 31 + rnd(r, 3) : rnd(r, 20);
	switch (rnd(r, 4)) {
	case 0: return p2 - 1;
	case 1: return p2;
	case 2: return p2 + 1;
	default: return fixed[rnd(r, ARRAY_SIZE(fixed))];
	}
}

/* ---- serializing --------------------------------------------------------- */

static void encode_chunk(struct buf *b, const struct chunk *c, size_t mark_ev,
			 size_t mark, size_t *mark_end)
{
	struct bases bs = {0, 0, 0};

	if (c->form == CH_RAW) {
		buf_put(b, c->raw, c->raw_len);
		return;
	}
	for (size_t i = 0; i < c->nev; i++)
		encode_event(b, c->ev[i].m, c->ev[i].ev, &bs,
			     i == mark_ev ? mark : SIZE_MAX, mark_end);
	buf_put(b, c->tail, c->tail_len);
}

/* What the reader will count in a payload: decodable events, and where
 * dumps and GCs begin (for the index). */
struct scan {
	uint32_t events;
	size_t *kinds; /* per event: 0, HT_INDEX_DUMP or HT_INDEX_GC */
	size_t cap;
};

static void scan_payload(struct scan *s, const uint8_t *raw, size_t len)
{
	struct model m = {0};
	size_t first, count, tail;

	parse_payload(&m, raw, len, &first, &count, &tail);
	s->kinds = grow(s->kinds, &s->cap, count + 1, sizeof(*s->kinds));
	for (size_t i = 0; i < count; i++) {
		const struct event *e = &m.e[i];

		s->kinds[i] = 0;
		if (e->type == 5)
			s->kinds[i] = HT_INDEX_GC;
		else if (e->type == 10 && e->ntok && m.t[e->tok].v == C_BEGIN)
			s->kinds[i] = HT_INDEX_DUMP;
	}
	s->events = count > UINT32_MAX ? UINT32_MAX : (uint32_t)count;
	free(m.t);
	free(m.e);
}

enum index_mode { IX_REBUILD, IX_STALE, IX_NONE };

/* Writes the whole file to out; 0, or -1 when it does not fit max. */
static size_t serialize(struct file *f, struct rng *r, uint8_t *out,
			size_t max)
{
	struct buf file = {0}, raw = {0}, ix = {0}, entries = {0};
	struct scan sc = {0};
	uint64_t events = 0, prev_event = 0, prev_offset = 0;
	uint64_t n_entries = 0, dumps = 0, gcs = 0, chunks = 0;
	enum index_mode mode;
	int level = one_in(r, 8) ? (int)rnd(r, 10) : one_in(r, 2) ? 1 : 6;
	size_t ret = 0, raw_total = 0;

	if (f->had_index)
		mode = one_in(r, 8) ? IX_NONE : one_in(r, 12) ? IX_STALE
							   : IX_REBUILD;
	else
		mode = one_in(r, 2) ? IX_NONE : IX_REBUILD;
	buf_put(&file, f->header, f->header_len);
	for (size_t i = 0; i < f->nc; i++) {
		struct chunk *c = &f->c[i];
		struct ht_chunk_header h = {
			.kind = c->kind, .compression = HT_COMPRESS_ZLIB,
		};
		uLongf zlen;
		size_t at = file.n;

		if (c->form == CH_VERBATIM) {
			buf_put(&file, c->verb, c->verb_len);
			continue;
		}
		raw.n = 0;
		encode_chunk(&raw, c, SIZE_MAX, SIZE_MAX, NULL);
		raw_total += raw.n;
		if (raw_total > RAW_BUDGET * 2)
			goto out;
		scan_payload(&sc, raw.d, raw.n);
		h.raw_length = (uint32_t)raw.n;
		h.first_event = events;
		h.events = sc.events;
		if (one_in(r, 64))
			h.events += one_in(r, 2) ? 1 : (uint32_t)-1;
		for (uint32_t k = 0; k < sc.events; k++) {
			if (!sc.kinds[k])
				continue;
			buf_varint(&entries, sc.kinds[k]);
			buf_varint(&entries, events + k - prev_event);
			buf_varint(&entries, at - prev_offset);
			prev_event = events + k;
			prev_offset = at;
			n_entries++;
			if (sc.kinds[k] == HT_INDEX_DUMP)
				dumps++;
			else
				gcs++;
		}
		events += sc.events;
		chunks++;
		zlen = compressBound((uLong)raw.n);
		if (at + HT_CHUNK_HEADER_SIZE + zlen > max + compressBound(0))
			goto out;
		file.d = grow(file.d, &file.cap,
			      at + HT_CHUNK_HEADER_SIZE + zlen + 1, 1);
		if (compress2(file.d + at + HT_CHUNK_HEADER_SIZE, &zlen,
			      raw.d ? raw.d : (const Bytef *)"", (uLong)raw.n,
			      level) != Z_OK)
			goto out;
		h.stored_length = (uint32_t)zlen;
		h.payload_crc = (uint32_t)crc32(0, file.d + at +
						HT_CHUNK_HEADER_SIZE, (uInt)zlen);
		chunk_header_put(file.d + at, &h);
		file.n = at + HT_CHUNK_HEADER_SIZE + zlen;
		if (file.n > max)
			goto out;
	}
	if (mode != IX_NONE) {
		struct ht_chunk_header h = {
			.kind = HT_CHUNK_INDEX, .compression = HT_COMPRESS_ZLIB,
			.first_event = events,
		};
		size_t at = file.n;
		uLongf zlen;
		uint8_t t[HT_TRAILER_SIZE];

		if (mode == IX_STALE) {
			buf_put(&ix, f->index_raw, f->index_raw_len);
		} else {
			buf_varint(&ix, n_entries);
			buf_put(&ix, entries.d, entries.n);
			buf_varint(&ix, events);
			buf_varint(&ix, dumps);
			buf_varint(&ix, gcs);
			buf_varint(&ix, chunks);
			if (f->index_rest)
				buf_put(&ix, f->index_rest, f->index_rest_len);
			else
				buf_put(&ix, "\0\0", 2);
		}
		zlen = compressBound((uLong)ix.n);
		file.d = grow(file.d, &file.cap,
			      at + HT_CHUNK_HEADER_SIZE + zlen + 1, 1);
		if (compress2(file.d + at + HT_CHUNK_HEADER_SIZE, &zlen,
			      ix.d ? ix.d : (const Bytef *)"", (uLong)ix.n,
			      level) != Z_OK)
			goto out;
		h.raw_length = (uint32_t)ix.n;
		h.stored_length = (uint32_t)zlen;
		h.payload_crc = (uint32_t)crc32(0, file.d + at +
						HT_CHUNK_HEADER_SIZE, (uInt)zlen);
		chunk_header_put(file.d + at, &h);
		file.n = at + HT_CHUNK_HEADER_SIZE + zlen;
		put_le64(t, at);
		put_le32(t + 8, (uint32_t)crc32(0, t, 8));
		mem_move(t + 12, HT_TRAILER_MAGIC, 4);
		buf_put(&file, t, sizeof(t));
	}
	if (file.n <= max) {
		mem_move(out, file.d, file.n);
		ret = file.n;
	}
out:
	free(file.d);
	free(raw.d);
	free(ix.d);
	free(entries.d);
	free(sc.kinds);
	return ret;
}

/* ---- strategies ---------------------------------------------------------- */

/* A chunk of events, or SIZE_MAX. */
static size_t pick_chunk(struct file *f, struct rng *r, bool with_events)
{
	size_t n = 0, k;

	for (size_t i = 0; i < f->nc; i++)
		if (f->c[i].form != CH_VERBATIM &&
		    (!with_events || (f->c[i].form == CH_EVENTS &&
				      f->c[i].nev)))
			n++;
	if (!n)
		return SIZE_MAX;
	k = rnd(r, n);
	for (size_t i = 0; i < f->nc; i++)
		if (f->c[i].form != CH_VERBATIM &&
		    (!with_events || (f->c[i].form == CH_EVENTS &&
				      f->c[i].nev)) && k-- == 0)
			return i;
	return SIZE_MAX;
}

/* The chunk's payload as bytes, LLVMFuzzerMutate'd. */
static int s_payload(struct file *f, struct rng *r)
{
	size_t ci = pick_chunk(f, r, false), cap;
	struct chunk *c;
	struct buf b = {0};

	if (ci == SIZE_MAX)
		return -1;
	c = &f->c[ci];
	encode_chunk(&b, c, SIZE_MAX, SIZE_MAX, NULL);
	cap = b.n * 2 + 64;
	b.d = grow(b.d, &b.cap, cap, 1);
	b.n = LLVMFuzzerMutate(b.d, b.n, cap);
	free(c->raw);
	c->raw = b.d;
	c->raw_len = b.n;
	c->form = CH_RAW;
	return 0;
}

/* A token of the file's events chosen by pred, with its chunk and event
 * slot; -1 if none. Reservoir sampling over all chunks. */
static int pick_tok(struct file *f, struct rng *r,
		    bool (*pred)(const struct tok *), size_t *ci, size_t *ei,
		    size_t *ti)
{
	size_t seen = 0;

	for (size_t c = 0; c < f->nc; c++) {
		struct chunk *ch = &f->c[c];

		if (ch->form != CH_EVENTS)
			continue;
		for (size_t e = 0; e < ch->nev; e++) {
			const struct model *m = ch->ev[e].m;
			const struct event *ev = &m->e[ch->ev[e].ev];

			for (size_t t = ev->tok; t < ev->tok + ev->ntok; t++)
				if (pred(&m->t[t]) && rnd(r, ++seen) == 0) {
					*ci = c;
					*ei = e;
					*ti = t - ev->tok;
				}
		}
	}
	return seen ? 0 : -1;
}

static bool is_count(const struct tok *t)
{
	return t->kind == K_U && (t->role == R_COUNT || t->role == R_STRLEN);
}

static bool is_number(const struct tok *t)
{
	return t->kind != K_BYTES && !(t->kind == K_REF && t->aux == 0);
}

/* Makes slot ei of chunk ci an event of its own (copied), so that a change
 * to it touches no other copy. */
static struct tok *own_tok(struct chunk *c, size_t ei, size_t ti)
{
	struct evref *er = &c->ev[ei];

	er->ev = clone_event(er->m, er->ev);
	return &er->m->t[er->m->e[er->ev].tok + ti];
}

static int s_number(struct file *f, struct rng *r, bool counts)
{
	size_t ci, ei, ti, end = 0;
	struct buf b = {0};
	struct evref *er;
	struct tok *t;

	if (pick_tok(f, r, counts ? is_count : is_number, &ci, &ei, &ti) < 0)
		return -1;
	t = own_tok(&f->c[ci], ei, ti);
	er = &f->c[ci].ev[ei];
	/* what is left of the payload after the field: the decoder's bound */
	encode_chunk(&b, &f->c[ci], ei, er->m->e[er->ev].tok + ti, &end);
	t->v = hostile(r, t, b.n - end);
	if (t->kind == K_REF && one_in(r, 2))
		t->aux = 1; /* absolute */
	free(b.d);
	return 0;
}

/* One id map for the whole file, so that a reference still names the
 * object it named, only by another id. */
struct idmap_fn {
	unsigned how, k;
	uint64_t c, mask;
};

static uint64_t map_id(const struct idmap_fn *fn, uint64_t v)
{
	switch (fn->how) {
	case 0: return (v << fn->k) | fn->c;             /* same low bits */
	case 1: return (v & fn->mask) | (fn->c << fn->k); /* same high bits */
	case 2: return v & fn->mask;                     /* collapse */
	case 3: return v * (fn->c | 1) << fn->k;         /* equal mod 2^k */
	case 4: return UINT64_MAX - v;                   /* top of the range */
	case 5: return v + fn->c;                        /* wrap around */
	default: return v ^ fn->c;
	}
}

static int s_collide(struct file *f, struct rng *r)
{
	struct idmap_fn fn = {
		.how = (unsigned)rnd(r, 7),
		.k = 1 + (unsigned)rnd(r, 62),
		.c = rnd64(r),
	};
	bool classes = one_in(r, 3), dup = one_in(r, 3);
	uint64_t pool[4];
	struct model *m = &f->m;

	fn.mask = ((uint64_t)1 << fn.k) - 1;
	if (fn.how == 1)
		fn.c &= UINT64_MAX >> fn.k;
	if (fn.how == 5)
		fn.c = (uint64_t)0 - rnd(r, 1u << 20);
	if (one_in(r, 2))
		fn.c &= 0xffff; /* small constants as well */
	for (size_t i = 0; i < 4; i++)
		pool[i] = 0;
	/* every token of the model: chunks share it */
	for (size_t i = 0; i < m->nt; i++) {
		struct tok *t = &m->t[i];
		bool id = t->kind == K_OBJ || t->kind == K_ROOT ||
			  t->kind == K_MNEW || (t->kind == K_REF && t->aux);

		if (classes)
			id = t->kind == K_CLS;
		if (!id)
			continue;
		if (dup) {
			/* a few ids made equal to earlier ones */
			if (one_in(r, 8))
				t->v = pool[rnd(r, 4)];
			else
				pool[rnd(r, 4)] = t->v;
		} else if (t->v != 0 || one_in(r, 4)) {
			t->v = map_id(&fn, t->v);
		}
	}
	return 0;
}

/* Object sizes that add up to 2^63 or just under or over. */
static int s_sizes(struct file *f, struct rng *r)
{
	struct model *m = &f->m;
	size_t n = 0;
	uint64_t each, extra = rnd(r, 3);

	for (size_t i = 0; i < m->nt; i++)
		n += m->t[i].kind == K_U && m->t[i].role == R_SIZE;
	if (!n)
		return -1;
	each = ((uint64_t)1 << 63) / n;
	for (size_t i = 0; i < m->nt; i++)
		if (m->t[i].kind == K_U && m->t[i].role == R_SIZE) {
			if (one_in(r, 2))
				m->t[i].v = each + extra - 1;
			else if (one_in(r, 4))
				m->t[i].v = UINT64_MAX - rnd(r, 3);
		}
	return 0;
}

static void insert_evs(struct chunk *c, size_t at, const struct evref *src,
		       size_t n)
{
	c->ev = grow(c->ev, &c->evcap, c->nev + n, sizeof(*c->ev));
	mem_move(c->ev + at + n, c->ev + at, (c->nev - at) * sizeof(*c->ev));
	mem_move(c->ev + at, src, n * sizeof(*src));
	c->nev += n;
}

static int s_events(struct file *f, struct rng *r)
{
	size_t ci = pick_chunk(f, r, true), a, b, n;
	struct chunk *c;

	if (ci == SIZE_MAX)
		return -1;
	c = &f->c[ci];
	a = rnd(r, c->nev);
	b = rnd(r, c->nev);
	switch (rnd(r, 6)) {
	case 0: /* drop */
		mem_move(c->ev + a, c->ev + a + 1,
			(c->nev - a - 1) * sizeof(*c->ev));
		c->nev--;
		return 0;
	case 1: { /* swap */
		struct evref t = c->ev[a];

		c->ev[a] = c->ev[b];
		c->ev[b] = t;
		return 0;
	}
	case 2: { /* move */
		struct evref t = c->ev[a];

		mem_move(c->ev + a, c->ev + a + 1,
			(c->nev - a - 1) * sizeof(*c->ev));
		c->nev--;
		insert_evs(c, b < c->nev ? b : c->nev, &t, 1);
		return 0;
	}
	case 3: { /* duplicate, right after or elsewhere */
		struct evref t = c->ev[a];

		n = 1 + rnd(r, one_in(r, 4) ? 64 : 3);
		for (size_t i = 0; i < n; i++)
			insert_evs(c, one_in(r, 2) ? a : b, &t, 1);
		return 0;
	}
	default: { /* a run of events repeated many times */
		size_t lo = a < b ? a : b, len = (a < b ? b - a : a - b) + 1;
		struct evref *ev;
		size_t times, total;

		if (len > 16)
			len = 1 + rnd(r, 16);
		times = 1 + rnd(r, one_in(r, 2) ? 16 : 4096);
		total = c->nev + len * times;
		ev = malloc(total * sizeof(*ev));
		if (!ev)
			abort();
		mem_move(ev, c->ev, (lo + len) * sizeof(*ev));
		for (size_t i = 1; i <= times; i++)
			mem_move(ev + lo + i * len, c->ev + lo,
			       len * sizeof(*ev));
		mem_move(ev + lo + (times + 1) * len, c->ev + lo + len,
		       (c->nev - lo - len) * sizeof(*ev));
		free(c->ev);
		c->ev = ev;
		c->nev = c->evcap = total;
		return 0;
	}
	}
}

static bool is_oflags(const struct tok *t)
{
	return t->kind == K_U && t->role == R_OFLAGS;
}

/* An object split into a continuation, or its continuation flag turned. */
static int s_more(struct file *f, struct rng *r)
{
	size_t ci, ei, ti, cpos = SIZE_MAX, n, k, ntok, base;
	struct chunk *c;
	struct model *m;
	struct event e;
	struct evref second;
	bool flags;

	if (pick_tok(f, r, is_oflags, &ci, &ei, &ti) < 0)
		return -1;
	c = &f->c[ci];
	if (one_in(r, 3)) {
		own_tok(c, ei, ti)->v ^= OBJ_MORE_REFERENCES;
		return 0;
	}
	/* two events with the same id, the first flagged: refs [0, k) in
	 * the first, [k, n) in the second, ref flags alike; the second
	 * maybe with another class or size (a continuation mismatch) */
	m = c->ev[ei].m;
	e = m->e[c->ev[ei].ev];
	for (size_t t = e.tok; t < e.tok + e.ntok; t++)
		if (m->t[t].kind == K_U && m->t[t].role == R_COUNT)
			cpos = t - e.tok;
	if (cpos == SIZE_MAX)
		return -1;
	ntok = e.ntok;
	if (m->t[e.tok + cpos].v > ntok) /* a hostile count already */
		return -1;
	n = (size_t)m->t[e.tok + cpos].v;
	flags = ntok == cpos + 1 + 2 * n && n;
	if (!flags && ntok != cpos + 1 + n)
		return -1;
	k = rnd(r, n + 1);
	c->ev[ei].ev = clone_event(m, c->ev[ei].ev);
	second = (struct evref){m, clone_event(m, c->ev[ei].ev)};
	/* the first: drop refs [k, n) and their flags */
	base = m->e[c->ev[ei].ev].tok;
	m->t[base + ti].v |= OBJ_MORE_REFERENCES;
	m->t[base + cpos].v = k;
	if (flags)
		mem_move(m->t + base + cpos + 1 + k,
			m->t + base + cpos + 1 + n, k * sizeof(*m->t));
	m->e[c->ev[ei].ev].ntok = cpos + 1 + k + (flags ? k : 0);
	/* the second: drop refs [0, k) and their flags */
	base = m->e[second.ev].tok;
	m->t[base + cpos].v = n - k;
	mem_move(m->t + base + cpos + 1, m->t + base + cpos + 1 + k,
		(ntok - cpos - 1 - k) * sizeof(*m->t));
	if (flags)
		mem_move(m->t + base + cpos + 1 + (n - k),
			m->t + base + cpos + 1 + (n - k) + k,
			(n - k) * sizeof(*m->t));
	m->e[second.ev].ntok = cpos + 1 + (n - k) + (flags ? n - k : 0);
	if (one_in(r, 4))
		for (size_t t = base; t < base + cpos; t++)
			if ((m->t[t].kind == K_CLS ||
			     (m->t[t].kind == K_U && m->t[t].role == R_SIZE)) &&
			    one_in(r, 2))
				m->t[t].v += 1 + rnd(r, 3);
	insert_evs(c, one_in(r, 2) ? ei + 1 : ei + 1 + rnd(r, c->nev - ei),
		   &second, 1);
	return 0;
}

static int s_chunks(struct file *f, struct rng *r, size_t max)
{
	size_t ci = pick_chunk(f, r, false), n;
	struct chunk *c;

	if (ci == SIZE_MAX)
		return -1;
	switch (rnd(r, 5)) {
	case 0: { /* repeated many times: same events, same ids */
		size_t times = 1 + rnd(r, one_in(r, 2) ? 8 : 256);

		/* room left: each copy costs at least a chunk header */
		n = f->nc + times;
		if (n * (HT_CHUNK_HEADER_SIZE + 8) > max)
			times = max / (HT_CHUNK_HEADER_SIZE + 8) > f->nc ?
				max / (HT_CHUNK_HEADER_SIZE + 8) - f->nc : 0;
		if (!times)
			return -1;
		f->c = grow(f->c, &f->ccap, f->nc + times, sizeof(*f->c));
		c = &f->c[ci];
		mem_move(f->c + ci + 1 + times, f->c + ci + 1,
			(f->nc - ci - 1) * sizeof(*f->c));
		for (size_t i = 1; i <= times; i++) {
			struct chunk *d = &f->c[ci + i];

			*d = *c;
			d->ev = NULL;
			d->evcap = 0;
			d->raw = NULL;
			if (c->nev) {
				d->ev = malloc(c->nev * sizeof(*d->ev));
				if (!d->ev)
					abort();
				mem_move(d->ev, c->ev, c->nev * sizeof(*d->ev));
				d->evcap = c->nev;
			}
			if (c->form == CH_RAW) {
				d->raw = malloc(c->raw_len + 1);
				if (!d->raw)
					abort();
				mem_move(d->raw, c->raw, c->raw_len);
			}
		}
		f->nc += times;
		return 0;
	}
	case 1: /* dropped */
		if (f->nc < 2)
			return -1;
		chunk_free(&f->c[ci]);
		mem_move(f->c + ci, f->c + ci + 1,
			(f->nc - ci - 1) * sizeof(*f->c));
		f->nc--;
		return 0;
	case 2: { /* swapped */
		size_t cj = rnd(r, f->nc);
		struct chunk t = f->c[ci];

		f->c[ci] = f->c[cj];
		f->c[cj] = t;
		return 0;
	}
	case 3: { /* split at an event */
		struct chunk *d;
		size_t at;

		c = &f->c[ci];
		if (c->form != CH_EVENTS || c->nev < 2)
			return -1;
		at = 1 + rnd(r, c->nev - 1);
		f->c = grow(f->c, &f->ccap, f->nc + 1, sizeof(*f->c));
		mem_move(f->c + ci + 2, f->c + ci + 1,
			(f->nc - ci - 1) * sizeof(*f->c));
		f->nc++;
		c = &f->c[ci];
		d = &f->c[ci + 1];
		*d = *c;
		d->raw = NULL;
		d->nev = c->nev - at;
		d->evcap = d->nev;
		d->ev = malloc(d->nev * sizeof(*d->ev));
		if (!d->ev)
			abort();
		mem_move(d->ev, c->ev + at, d->nev * sizeof(*d->ev));
		c->nev = at;
		c->tail = NULL;
		c->tail_len = 0;
		return 0;
	}
	default: { /* merged with the next */
		struct chunk *d;

		c = &f->c[ci];
		if (ci + 1 >= f->nc || c->form != CH_EVENTS ||
		    f->c[ci + 1].form != CH_EVENTS)
			return -1;
		d = &f->c[ci + 1];
		insert_evs(c, c->nev, d->ev, d->nev);
		c->tail = d->tail; /* the first one's is lost */
		c->tail_len = d->tail_len;
		chunk_free(d);
		mem_move(f->c + ci + 1, f->c + ci + 2,
			(f->nc - ci - 2) * sizeof(*f->c));
		f->nc--;
		return 0;
	}
	}
}

/* The file header payload mutated; its length and CRC made right. */
static int s_header(struct file *f, struct rng *r)
{
	size_t hlen, cap;
	uint8_t *h;

	(void)r;
	if (f->bare)
		return -1;
	hlen = f->header_len - HT_FILE_HEADER_FIXED - 4;
	cap = hlen * 2 + 64;
	h = malloc(HT_FILE_HEADER_FIXED + cap + 4);
	if (!h)
		abort();
	mem_move(h, f->header, HT_FILE_HEADER_FIXED + hlen);
	hlen = LLVMFuzzerMutate(h + HT_FILE_HEADER_FIXED, hlen, cap);
	put_le32(h + 12, (uint32_t)hlen);
	put_le32(h + HT_FILE_HEADER_FIXED + hlen,
		 (uint32_t)crc32(0, h, (uInt)(HT_FILE_HEADER_FIXED + hlen)));
	free(f->own_header);
	f->own_header = h;
	f->header = h;
	f->header_len = HT_FILE_HEADER_FIXED + hlen + 4;
	return 0;
}

static int one_strategy(struct file *f, struct rng *r, size_t max)
{
	switch (rnd(r, 16)) {
	case 0: case 1: case 2:
		return s_payload(f, r);
	case 3: case 4: case 5:
		return s_number(f, r, true);
	case 6: case 7:
		return s_number(f, r, false);
	case 8: case 9:
		return s_collide(f, r);
	case 10:
		return s_sizes(f, r);
	case 11: case 12:
		return s_events(f, r);
	case 13:
		return s_more(f, r);
	case 14:
		return s_chunks(f, r, max);
	default:
		return one_in(r, 2) ? s_header(f, r) : -1; /* index only */
	}
}

/* The events alone, as fuzz_ht also reads its input: a chunk payload. */
static size_t serialize_bare(struct file *f, uint8_t *out, size_t max)
{
	struct buf b = {0};
	size_t ret = 0;

	for (size_t i = 0; i < f->nc; i++)
		if (f->c[i].form != CH_VERBATIM)
			encode_chunk(&b, &f->c[i], SIZE_MAX, SIZE_MAX, NULL);
	if (b.n <= max && b.n <= RAW_BUDGET) {
		mem_move(out, b.d, b.n);
		ret = b.n;
	}
	free(b.d);
	return ret;
}

static size_t mutate_file(struct file *f, struct rng *r, uint8_t *out,
			  size_t max)
{
	size_t n = 1 + (one_in(r, 3) ? rnd(r, 4) : 0);

	for (size_t i = 0; i < n; i++)
		(void)one_strategy(f, r, max);
	if (f->bare || one_in(r, 16))
		return serialize_bare(f, out, max);
	return serialize(f, r, out, max);
}

/* Input that is not a .ht but decodes as events (fuzz_ht's other reading
 * of its input): one chunk of them, written back bare. */
static int parse_bare(struct file *f, const uint8_t *d, size_t size)
{
	size_t first, count, tail;
	struct chunk *c;

	file_free(f);
	memset(f, 0, sizeof(*f));
	f->bare = true;
	if (size > RAW_BUDGET)
		return -1;
	parse_payload(&f->m, d, size, &first, &count, &tail);
	if (count == 0)
		return -1;
	c = add_chunk(f);
	c->kind = HT_CHUNK_EVENTS;
	c->form = CH_EVENTS;
	for (size_t i = 0; i < count; i++)
		chunk_add_ev(c, &f->m, first + i);
	c->tail = d + tail;
	c->tail_len = size - tail;
	return 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size,
			       unsigned int seed)
{
	struct rng r = {.s = seed * 0x2545f4914f6cdd1dULL + 1};
	struct file f;
	uint8_t *copy;
	size_t n = 0;

	if (one_in(&r, 5) || !(copy = malloc(size ? size : 1)))
		return LLVMFuzzerMutate(data, size, max_size);
	/* the model points into the input: parse a copy, write over data */
	mem_move(copy, data, size);
	if (parse_file(&f, copy, size) == 0 || parse_bare(&f, copy, size) == 0)
		n = mutate_file(&f, &r, data, max_size);
	file_free(&f);
	free(copy);
	return n ? n : LLVMFuzzerMutate(data, size, max_size);
}

/* Events of the second input spliced into a chunk of the first, or one of
 * its chunks put among the first's; for other inputs, the first's head and
 * the second's tail. */
size_t LLVMFuzzerCustomCrossOver(const uint8_t *data1, size_t size1,
				 const uint8_t *data2, size_t size2,
				 uint8_t *out, size_t max_out_size,
				 unsigned int seed)
{
	struct rng r = {.s = seed * 0x2545f4914f6cdd1dULL + 7};
	struct file a, b;
	size_t n = 0;
	int pa = parse_file(&a, data1, size1);
	int pb = parse_file(&b, data2, size2);

	if (pa == 0 && pb == 0) {
		size_t ca = pick_chunk(&a, &r, false);
		size_t cb = pick_chunk(&b, &r, true);

		if (ca != SIZE_MAX && cb != SIZE_MAX) {
			struct chunk *x = &a.c[ca], *y = &b.c[cb];
			size_t lo = rnd(&r, y->nev), len = 1 + rnd(&r,
						     y->nev - lo);

			if (x->form == CH_EVENTS && one_in(&r, 2)) {
				insert_evs(x, rnd(&r, x->nev + 1), y->ev + lo,
					   len);
			} else {
				struct chunk *d;

				a.c = grow(a.c, &a.ccap, a.nc + 1,
					   sizeof(*a.c));
				d = &a.c[a.nc++];
				*d = *y;
				d->raw = NULL;
				d->ev = malloc(y->nev * sizeof(*d->ev));
				if (!d->ev)
					abort();
				mem_move(d->ev, y->ev, y->nev * sizeof(*d->ev));
				d->evcap = y->nev;
				if (one_in(&r, 2)) { /* not at the end */
					struct chunk t = *d;
					size_t at = rnd(&r, a.nc);

					mem_move(a.c + at + 1, a.c + at,
						(a.nc - 1 - at) * sizeof(*a.c));
					a.c[at] = t;
				}
			}
			n = serialize(&a, &r, out, max_out_size);
		}
	}
	file_free(&a);
	file_free(&b);
	if (n)
		return n;
	{
		size_t h = size1 ? rnd(&r, size1 + 1) : 0;
		size_t t = size2 ? rnd(&r, size2 + 1) : 0;

		if (h > max_out_size)
			h = max_out_size;
		if (size2 - t > max_out_size - h)
			t = size2 - (max_out_size - h);
		mem_move(out, data1, h);
		mem_move(out + h, data2 + t, size2 - t);
		return h + size2 - t;
	}
}
