/*
 * writer.c - the recording shim of record.h: ht_<event> encodes each event
 * into a buffer owned by the calling thread; full buffers go to a writer
 * thread that compresses each into one chunk (format.h) and writes it.
 *
 * The callback path may run inside a stop-the-world pause where suspended
 * threads hold the C library's locks (malloc's, stdio's). So it calls no
 * malloc and no stdio and takes no lock: it uses atomics, its own buffer,
 * and POSIX semaphores (futex based, no libc lock) to wait for a free
 * buffer. The writer thread allocates nothing in steady state either: a
 * producer may be waiting on it for a buffer while a suspended thread
 * holds malloc's lock. Everything is allocated at open; the index of dumps
 * and GCs grows with mremap.
 *
 * The order of the trace is the order in which buffers are pushed on the
 * full stack. Within a thread, events keep their order. Across threads,
 * the group events are barriers: gc_started and C_BEGIN first hand every
 * other thread's buffer to the writer, then go out in a buffer of their
 * own, so that what any thread records later lands after them; gc_finished
 * and C_END hand every thread's buffer off before themselves, which also
 * flushes each dump and GC to the file as it ends.
 *
 * This file is the callback path; the writer thread is writer_thread.c,
 * opening and closing writer_open.c, and what they share
 * writer_internal.h.
 */
#include "lib/record/writer_internal.h"

/*
 * The calling thread's slot in the recorder it used last. Initial-exec:
 * global-dynamic TLS in a dlopen'ed library may malloc on first access,
 * which the callback path must not do.
 */
struct thread_slot {
	uint64_t serial;
	struct slot *slot;
};
static __thread struct thread_slot this_thread
	__attribute__((tls_model("initial-exec")));

/* ---- small helpers ------------------------------------------------------- */

/* Spins politely; after a while gives the CPU to whoever we wait for. */
static void cpu_relax(unsigned round)
{
	if (round >= 64) {
		sched_yield();
		return;
	}
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#else
	atomic_signal_fence(memory_order_seq_cst);
#endif
}

/* ---- the buffer pool ----------------------------------------------------- */

/* Only after a successful wait on free_sem, so the stack holds one for us. */
static struct wbuf *pool_pop(struct ht_recorder *rec)
{
	uint64_t head = atomic_load_explicit(&rec->free_head,
					     memory_order_acquire);

	for (unsigned round = 0;; round++) {
		uint32_t top = FREE_TOP(head);
		uint32_t next;

		if (top == 0) {
			/* Cannot be: every post of free_sem follows its push.
			 * Waiting beats returning NULL to the callback path. */
			cpu_relax(round);
			head = atomic_load_explicit(&rec->free_head,
						    memory_order_acquire);
			continue;
		}
		next = atomic_load_explicit(&rec->bufs[top - 1].next_free,
					    memory_order_relaxed);
		if (atomic_compare_exchange_weak_explicit(
			    &rec->free_head, &head,
			    FREE_HEAD(FREE_TAG(head) + 1, next),
			    memory_order_acquire, memory_order_acquire))
			return &rec->bufs[top - 1];
	}
}


static void full_push(struct ht_recorder *rec, struct wbuf *b)
{
	struct wbuf *head = atomic_load_explicit(&rec->full_head,
						 memory_order_relaxed);

	atomic_fetch_add_explicit(&rec->bytes_uncompressed, b->used,
				  memory_order_relaxed);
	/* seq_cst, for ht_recorder_sync's reasoning */
	do {
		b->next_full = head;
	} while (!atomic_compare_exchange_weak_explicit(
		&rec->full_head, &head, b, memory_order_seq_cst,
		memory_order_relaxed));
	sem_post(&rec->work_sem);
}

/* ---- thread slots -------------------------------------------------------- */

static void slot_enter(struct slot *s)
{
	for (unsigned round = 0;; round++) {
		uint32_t idle = SLOT_IDLE;

		if (atomic_compare_exchange_weak_explicit(
			    &s->state, &idle, SLOT_BUSY, memory_order_acquire,
			    memory_order_relaxed))
			return;
		cpu_relax(round); /* a thief is handing our buffer off */
	}
}

static void slot_leave(struct slot *s)
{
	atomic_store_explicit(&s->state, SLOT_IDLE, memory_order_release);
}

/* Gives the slot's buffer to the writer (or back to the pool if empty).
 * The caller holds the slot (BUSY or STOLEN). */
static void slot_handoff(struct ht_recorder *rec, struct slot *s)
{
	struct wbuf *b = atomic_load_explicit(&s->buf, memory_order_relaxed);

	if (!b)
		return;
	atomic_store_explicit(&s->buf, NULL, memory_order_relaxed);
	if (b->events == 0) {
		pool_put(rec, b);
		return;
	}
	b->used = codec_enc_used(&s->enc);
	full_push(rec, b);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	/* a vDSO call: no lock, no system call */
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Hands off another thread's buffer if that thread is not in the middle of
 * an event, waiting for it to finish one until *deadline (set on the first
 * wait of a steal pass, so that the whole pass waits patience_ns at most).
 */
static void slot_steal(struct ht_recorder *rec, struct slot *s,
		       uint64_t patience_ns, uint64_t *deadline)
{
	if (!atomic_load_explicit(&s->buf, memory_order_relaxed))
		return;
	for (unsigned round = 0;; round++) {
		uint32_t idle = SLOT_IDLE;

		if (atomic_compare_exchange_strong_explicit(
			    &s->state, &idle, SLOT_STOLEN, memory_order_acquire,
			    memory_order_relaxed))
			break;
		if (patience_ns == 0)
			return;
		if (*deadline == 0)
			*deadline = now_ns() + patience_ns;
		else if (round % 16 == 0 && now_ns() > *deadline)
			return;
		cpu_relax(round);
	}
	slot_handoff(rec, s);
	atomic_store_explicit(&s->state, SLOT_IDLE, memory_order_release);
}

/* self is the caller's slot, never taken; NULL for close. */
void writer_steal_others(struct ht_recorder *rec, struct slot *self,
		  uint64_t patience_ns)
{
	uint64_t deadline = 0;

	for (unsigned i = 0; i < rec->n_slots; i++)
		if (&rec->slots[i] != self)
			slot_steal(rec, &rec->slots[i], patience_ns, &deadline);
}

/* How often a thread waiting for a buffer looks again for buffers idling
 * in other threads' slots. */
#define STARVING_POLL_NS (1000 * 1000)

/* Waits on free_sem for at most STARVING_POLL_NS; true if it got one.
 * sem_timedwait is futex based like sem_wait, and clock_gettime is a
 * vDSO call: neither takes a lock. */
static bool sem_wait_a_while(sem_t *s)
{
	struct timespec until;

	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_nsec += STARVING_POLL_NS;
	if (until.tv_nsec >= 1000000000) {
		until.tv_sec++;
		until.tv_nsec -= 1000000000;
	}
	return sem_timedwait(s, &until) == 0;
}

/*
 * A free buffer, waiting for the writer if there is none. With more
 * threads than buffers, every buffer may sit half full in the slot of a
 * thread that records nothing more for a while (it waits for this one,
 * say): nothing would ever come back. So the waiter hands such buffers to
 * the writer, and does it again as long as it waits, since a thread that
 * was in the middle of an event at the first look may since have gone
 * idle with its buffer.
 */
static struct wbuf *buffer_get(struct ht_recorder *rec, struct slot *self)
{
	if (sem_trywait(&rec->free_sem) != 0) {
		atomic_fetch_add_explicit(&rec->waits, 1, memory_order_relaxed);
		do
			writer_steal_others(rec, self, 0);
		while (!sem_wait_a_while(&rec->free_sem));
	}
	return pool_pop(rec);
}

static void slot_fresh_buffer(struct ht_recorder *rec, struct slot *s)
{
	struct wbuf *b = buffer_get(rec, s);

	codec_enc_init(&s->enc, b->data, rec->buffer_size);
	s->enc.class_refs = rec->version >= 3;
	atomic_store_explicit(&s->buf, b, memory_order_relaxed);
}

/* Runs at the exit of a thread that recorded: its events go to the writer
 * and its slot to the next thread. */
void writer_slot_release_at_exit(void *arg)
{
	struct slot *s = arg;

	slot_enter(s);
	slot_handoff(s->rec, s);
	slot_leave(s);
	if (this_thread.slot == s)
		this_thread.serial = 0;
	atomic_store_explicit(&s->owned, 0, memory_order_release);
}

static struct slot *slot_acquire(struct ht_recorder *rec)
{
	for (unsigned i = 0; i < rec->n_slots; i++) {
		struct slot *s = &rec->slots[i];
		uint32_t zero = 0;

		if (atomic_load_explicit(&s->owned, memory_order_relaxed) == 0 &&
		    atomic_compare_exchange_strong_explicit(
			    &s->owned, &zero, 1, memory_order_acquire,
			    memory_order_relaxed))
			return s;
	}
	return NULL;
}

static struct slot *thread_slot_slow(struct ht_recorder *rec)
{
	struct slot *s = NULL;

	/* Back to a recorder this thread used before another one. */
	if (rec->use_key)
		s = pthread_getspecific(rec->key);
	if (!s) {
		s = slot_acquire(rec);
		if (!s)
			return NULL;
		if (rec->use_key)
			pthread_setspecific(rec->key, s);
	}
	this_thread.serial = rec->serial;
	this_thread.slot = s;
	return s;
}

static inline struct slot *thread_slot(struct ht_recorder *rec)
{
	if (this_thread.serial == rec->serial)
		return this_thread.slot;
	return thread_slot_slow(rec);
}

/* ---- what a call records ------------------------------------------------- */

/*
 * One call's event. MovedReferences and SurvivingReferences come as
 * parallel arrays: then `parallel` is set, the arrays below stand for the
 * event's blocks, and ev carries the type and count only.
 */
struct request {
	struct ht_event ev;
	bool parallel;
	const ht_id *starts;     /* old starts, or surviving starts */
	const ht_id *new_starts;
	const uint64_t *lengths;
};

static size_t request_count(const struct request *rq)
{
	return codec_event_count(&rq->ev);
}

#define SLICE(p, from) ((p) ? (p) + (from) : NULL)

/* Elements [from, from + n) of rq as an event of their own. Pieces of an
 * object but the last announce more references to come: the protocol's
 * own continuation rule, so a reader rejoins them as any split object. */
static void request_slice(const struct request *rq, size_t from, size_t n,
			  bool last, struct request *out)
{
	*out = *rq;
	switch (rq->ev.type) {
	case HT_EV_GENERATION_BOUNDS: {
		struct ht_ev_generation_bounds *g = &out->ev.u.generation_bounds;

		g->ranges = SLICE(g->ranges, from);
		g->count = n;
		break;
	}
	case HT_EV_MOVED_REFERENCES: {
		struct ht_ev_moved_references *m = &out->ev.u.moved_references;

		m->blocks = SLICE(m->blocks, from);
		m->count = n;
		out->starts = SLICE(rq->starts, from);
		out->new_starts = SLICE(rq->new_starts, from);
		out->lengths = SLICE(rq->lengths, from);
		break;
	}
	case HT_EV_SURVIVING_REFERENCES: {
		struct ht_ev_surviving_references *v =
			&out->ev.u.surviving_references;

		v->blocks = SLICE(v->blocks, from);
		v->count = n;
		out->starts = SLICE(rq->starts, from);
		out->lengths = SLICE(rq->lengths, from);
		break;
	}
	case HT_EV_ROOT_REFERENCES: {
		struct ht_ev_root_references *r = &out->ev.u.root_references;

		r->refs = SLICE(r->refs, from);
		r->flags = SLICE(r->flags, from);
		r->kinds = SLICE(r->kinds, from);
		r->root_flags = SLICE(r->root_flags, from);
		r->root_ids = SLICE(r->root_ids, from);
		r->root_fields = SLICE(r->root_fields, from);
		r->count = n;
		break;
	}
	case HT_EV_OBJECT_REFERENCES: {
		struct ht_ev_object_references *o = &out->ev.u.object_references;

		o->refs = SLICE(o->refs, from);
		o->ref_flags = SLICE(o->ref_flags, from);
		o->ref_fields = SLICE(o->ref_fields, from);
		o->count = n;
		if (!last) {
			o->flags |= HT_OBJ_MORE_REFERENCES;
			o->n_values = 0;
			o->value_fields = NULL;
			o->values = NULL;
			o->array = NULL;
		}
		break;
	}
	case HT_EV_FIELDS:
		out->ev.u.fields.fields = SLICE(rq->ev.u.fields.fields, from);
		out->ev.u.fields.count = n;
		break;
	default:
		break;
	}
}

/* Encodes rq into the slot's buffer, which has codec_event_bound room. */
static void put_request(struct slot *s, const struct request *rq)
{
	struct wbuf *b = atomic_load_explicit(&s->buf, memory_order_relaxed);

	if (rq->parallel && rq->ev.type == HT_EV_MOVED_REFERENCES)
		codec_put_moved(&s->enc, rq->ev.u.moved_references.count,
				rq->starts, rq->new_starts, rq->lengths);
	else if (rq->parallel)
		codec_put_surviving(&s->enc, rq->ev.u.surviving_references.count,
				    rq->starts, rq->lengths);
	else
		codec_put_event(&s->enc, &rq->ev);
	b->events++;
	atomic_store_explicit(&s->events,
			      atomic_load_explicit(&s->events,
						   memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

static size_t slot_room(const struct slot *s)
{
	if (!atomic_load_explicit(&s->buf, memory_order_relaxed))
		return 0;
	return codec_enc_room(&s->enc);
}

/* An event larger than a whole buffer goes out as consecutive events of
 * the same type, each filling what is left of a buffer. */
static void encode_split(struct ht_recorder *rec, struct slot *s,
			 const struct request *rq)
{
	size_t elem = codec_element_bound(&rq->ev);
	size_t count = request_count(rq);
	/* every part keeps room for the values, which go in the last */
	size_t fixed = CODEC_EVENT_OVERHEAD + codec_values_bound(&rq->ev);
	size_t done = 0;

	while (done < count) {
		size_t room = slot_room(s);
		size_t n = room > fixed ? (room - fixed) / elem : 0;
		struct request piece;

		if (n == 0) {
			slot_handoff(rec, s);
			slot_fresh_buffer(rec, s);
			continue;
		}
		if (n > count - done)
			n = count - done;
		request_slice(rq, done, n, done + n == count, &piece);
		put_request(s, &piece);
		done += n;
	}
}

static void encode(struct ht_recorder *rec, struct slot *s,
		   const struct request *rq)
{
	size_t bound = codec_event_bound(&rq->ev);

	if (bound <= slot_room(s)) {
		put_request(s, rq);
		return;
	}
	if (bound > rec->buffer_size) {
		encode_split(rec, s, rq);
		return;
	}
	slot_handoff(rec, s);
	slot_fresh_buffer(rec, s);
	put_request(s, rq);
}

/* Steps the shared protocol state; a violation is counted, the event is
 * recorded all the same. No CAS when the state does not change, which is
 * the case for nearly every event of a dump. */
static void check_protocol(struct ht_recorder *rec, const struct request *rq)
{
	struct ht_event moved_view;
	const struct ht_event *ev = &rq->ev;
	uint64_t old = atomic_load_explicit(&rec->proto, memory_order_relaxed);
	uint64_t next;
	enum ht_violation_code code;

	if (rq->parallel) {
		/* The blocks are not in ev: show the protocol none. */
		moved_view = rq->ev;
		moved_view.u.moved_references.count = 0;
		moved_view.u.surviving_references.count = 0;
		ev = &moved_view;
	}
	do {
		struct proto_state st;
		unsigned effects;

		memcpy(&st, &old, sizeof(st));
		code = proto_step(&st, ev, &effects);
		memcpy(&next, &st, sizeof(next));
		if (next == old)
			break;
	} while (!atomic_compare_exchange_weak_explicit(
		&rec->proto, &old, next, memory_order_relaxed,
		memory_order_relaxed));
	if (code != HT_V_NONE && (unsigned)code < HT_V_COUNT_)
		atomic_fetch_add_explicit(&rec->violations[code], 1,
					  memory_order_relaxed);
}

enum barrier { NO_BARRIER, START_BARRIER, END_BARRIER };

/* *starts: the index kind when ev begins a dump or a GC. */
static enum barrier barrier_of(const struct ht_event *ev, uint8_t *starts)
{
	*starts = 0;
	switch (ev->type) {
	case HT_EV_GC_STARTED:
		*starts = HT_INDEX_GC;
		return START_BARRIER;
	case HT_EV_GC_FINISHED:
		return END_BARRIER;
	case HT_EV_BEGIN_CONTAINER:
		if (ev->u.begin_container.type == HT_C_BEGIN) {
			*starts = HT_INDEX_DUMP;
			return START_BARRIER;
		}
		if (ev->u.begin_container.type == HT_C_END)
			return END_BARRIER;
		return NO_BARRIER;
	default:
		return NO_BARRIER;
	}
}

/*
 * The callback path. A barrier first hands off every other thread's
 * buffer (those in the middle of an event keep theirs: their event is
 * concurrent with this one, and their order is kept within the thread),
 * then records its event and hands its own buffer off.
 */
static enum ht_error_code record(struct ht_recorder *rec,
				 const struct request *rq)
{
	struct slot *s;
	enum barrier barrier;
	uint8_t starts;

	if (failed(rec))
		return HT_E_STATE;
	s = thread_slot(rec);
	if (!s) {
		atomic_fetch_add_explicit(&rec->dropped, 1, memory_order_relaxed);
		return HT_E_LIMIT;
	}
	barrier = barrier_of(&rq->ev, &starts);
	slot_enter(s);
	check_protocol(rec, rq);
	if (barrier != NO_BARRIER)
		writer_steal_others(rec, s, BARRIER_PATIENCE_NS);
	encode(rec, s, rq);
	if (starts) {
		atomic_load_explicit(&s->buf, memory_order_relaxed)->starts =
			starts;
		atomic_fetch_add_explicit(starts == HT_INDEX_DUMP ?
						  &rec->dumps : &rec->gcs,
					  1, memory_order_relaxed);
	}
	if (barrier != NO_BARRIER)
		slot_handoff(rec, s);
	slot_leave(s);
	return HT_OK;
}

/* The calling thread's events so far go to the writer now, not when its
 * buffer fills or a group begins or ends: the names a thread writes beside
 * a dump reach the file with the dump's objects, before its end. */
enum ht_error_code ht_recorder_hand_off(struct ht_recorder *rec)
{
	struct slot *s;

	if (!rec)
		return HT_E_INVALID;
	if (failed(rec))
		return HT_E_STATE;
	if (this_thread.serial != rec->serial)
		return HT_OK; /* nothing recorded by this thread */
	s = this_thread.slot;
	slot_enter(s);
	slot_handoff(rec, s);
	slot_leave(s);
	return HT_OK;
}

/* ---- argument checks ----------------------------------------------------- */

static bool array_ok(size_t count, const void *array)
{
	return count == 0 || array != NULL;
}

static bool result_ok(enum ht_result r)
{
	return (unsigned)r <= HT_RESULT_ABORT;
}

/* A field needs its id (0 means "no field" in a reference) and a kind
 * that exists; a name longer than the codec keeps is cut, as a class's. */
static bool fields_ok(size_t count, const struct ht_field *fields)
{
	for (size_t i = 0; i < count; i++) {
		const struct ht_field *f = &fields[i];
		bool primitive = ht_value_type_width(f->type) > 0;

		if (f->id == 0 || f->kind > HT_FIELD_KIND_LAST)
			return false;
		/* a type that exists; a primitive holds no referent */
		if (f->type && !primitive && f->type != HT_TYPE_OBJECT)
			return false;
		if (primitive && f->kind > HT_FIELD_STATIC)
			return false;
	}
	return true;
}

/* Values name nonzero fields; an array's prefix is no longer than it,
 * and its bytes are given when it has any. */
static bool values_ok(const struct ht_ev_object_references *o)
{
	const struct ht_array_values *a = o->array;

	if (o->n_values && (!o->value_fields || !o->values))
		return false;
	for (size_t i = 0; i < o->n_values; i++)
		if (o->value_fields[i] == 0)
			return false;
	if (!a)
		return true;
	return ht_value_type_width(a->type) > 0 && a->stored <= a->length &&
	       (a->stored == 0 || a->data != NULL);
}

/* HT_OK, HT_E_INVALID or HT_E_LIMIT: refused calls record nothing. The
 * parallel arrays of a request were checked by the function that took them. */
static enum ht_error_code check_request(const struct request *rq)
{
	const struct ht_event *ev = &rq->ev;
	size_t count = 0;
	bool ok = true;

	switch (ev->type) {
	case HT_EV_CLASS:
	case HT_EV_THREAD:
	case HT_EV_METHOD:
	case HT_EV_OBJECT_ALLOCATED:
	case HT_EV_GC_FINISHED:
		break;
	case HT_EV_GC_STARTED:
		ok = (unsigned)ev->u.gc_started.reason <= HT_GC_INDUCED;
		break;
	case HT_EV_GENERATION_BOUNDS:
		count = ev->u.generation_bounds.count;
		ok = array_ok(count, ev->u.generation_bounds.ranges);
		break;
	case HT_EV_MOVED_REFERENCES:
		count = ev->u.moved_references.count;
		ok = rq->parallel ||
		     array_ok(count, ev->u.moved_references.blocks);
		break;
	case HT_EV_SURVIVING_REFERENCES:
		count = ev->u.surviving_references.count;
		ok = rq->parallel ||
		     array_ok(count, ev->u.surviving_references.blocks);
		break;
	case HT_EV_BEGIN_CONTAINER:
		ok = ev->u.begin_container.type >= HT_C_FIRST &&
		     ev->u.begin_container.type <= HT_C_LAST;
		break;
	case HT_EV_ROOT_REFERENCES: {
		const struct ht_ev_root_references *r = &ev->u.root_references;

		count = r->count;
		ok = array_ok(count, r->refs) && array_ok(count, r->flags) &&
		     result_ok(r->result);
		break;
	}
	case HT_EV_OBJECT_REFERENCES: {
		const struct ht_ev_object_references *o =
			&ev->u.object_references;

		count = o->count;
		ok = array_ok(count, o->refs) && result_ok(o->result) &&
		     values_ok(o);
		break;
	}
	case HT_EV_FIELDS:
		count = ev->u.fields.count;
		ok = array_ok(count, ev->u.fields.fields) &&
		     fields_ok(count, ev->u.fields.fields);
		break;
	case HT_EV_STACK:
		ok = ev->u.stack.id != 0 &&
		     array_ok(ev->u.stack.count, ev->u.stack.frames);
		if (ok && ev->u.stack.count > HT_STACK_MAX_FRAMES)
			return HT_E_LIMIT;
		break;
	default:
		ok = false;
		break;
	}
	if (!ok)
		return HT_E_INVALID;
	return count > MAX_ELEMENTS ? HT_E_LIMIT : HT_OK;
}

/* The events the shim stamps itself: a GC's start and finish, a dump's
 * begin and end (not every container: they are many, and their times
 * say nothing an analysis uses). */
static bool stamped_event(const struct ht_event *ev)
{
	if (ev->type == HT_EV_BEGIN_CONTAINER)
		return ev->u.begin_container.type == HT_C_BEGIN ||
		       ev->u.begin_container.type == HT_C_END;
	return ev->type == HT_EV_GC_STARTED || ev->type == HT_EV_GC_FINISHED;
}

static void stamp_time(const struct ht_recorder *rec, struct ht_event *ev)
{
	uint64_t now = monotonic_ns();

	ev->has_time = true;
	ev->time = now > rec->start_ns ? now - rec->start_ns : 0;
}

/* What a version 1 trace cannot hold. */
static bool carries_fields(const struct ht_event *ev)
{
	switch (ev->type) {
	case HT_EV_FIELDS:
		return true;
	case HT_EV_ROOT_REFERENCES:
		return ev->u.root_references.root_fields != NULL;
	case HT_EV_OBJECT_REFERENCES:
		return ev->u.object_references.ref_fields != NULL;
	default:
		return false;
	}
}

/* What a version 1 or 2 trace cannot hold either: a referent's strength
 * (the field kinds after static), values (a field's type, an object's
 * values or array contents). */
static bool carries_version3_fields(const struct ht_event *ev)
{
	if (ev->type == HT_EV_OBJECT_REFERENCES)
		return ev->u.object_references.n_values ||
		       ev->u.object_references.array;
	if (ev->type != HT_EV_FIELDS)
		return false;
	for (size_t i = 0; i < ev->u.fields.count; i++)
		if (ev->u.fields.fields[i].kind > HT_FIELD_STATIC ||
		    ev->u.fields.fields[i].type)
			return true;
	return false;
}

/* What a version 1 to 3 trace cannot hold: allocation sites. */
static bool carries_sites(const struct ht_event *ev)
{
	switch (ev->type) {
	case HT_EV_STACK:
		return true;
	case HT_EV_OBJECT_ALLOCATED:
		return ev->u.object_allocated.stack != 0;
	case HT_EV_METHOD:
		return ev->u.method.file || ev->u.method.line;
	default:
		return false;
	}
}

static enum ht_error_code record_checked(struct ht_recorder *rec,
					 struct request *rq)
{
	enum ht_error_code rc;

	if (!rec)
		return HT_E_INVALID;
	rc = check_request(rq);
	if (rc == HT_OK && rec->version < 2 && carries_fields(&rq->ev))
		rc = HT_E_INVALID;
	if (rc == HT_OK && rec->version < 3 && carries_version3_fields(&rq->ev))
		rc = HT_E_INVALID;
	if (rc == HT_OK && rec->version < 4 && carries_sites(&rq->ev))
		rc = HT_E_INVALID;
	/* values stay whole in one part of a split object: a buffer must
	 * hold them with room for references to spare */
	if (rc == HT_OK && codec_values_bound(&rq->ev) > rec->buffer_size / 2)
		rc = HT_E_LIMIT;
	/* a time only where the format has one: version 3, timed events */
	if (rc == HT_OK && rq->ev.has_time &&
	    (rec->version < 3 || !ht_event_timed_type(rq->ev.type)))
		rc = HT_E_INVALID;
	if (rc != HT_OK)
		return rc;
	if (rec->stamp_times && !rq->ev.has_time && stamped_event(&rq->ev))
		stamp_time(rec, &rq->ev);
	return record(rec, rq);
}

/* ---- one function per event ---------------------------------------------- */

enum ht_error_code ht_record_event(struct ht_recorder *rec,
				   const struct ht_event *ev)
{
	struct request rq = { 0 };

	if (!ev)
		return HT_E_INVALID;
	rq.ev = *ev;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_class(struct ht_recorder *rec, ht_id id,
			    const char *name, bool has_size, uint64_t size)
{
	struct request rq = { .ev.type = HT_EV_CLASS };

	rq.ev.u.class_.id = id;
	rq.ev.u.class_.name = name;
	rq.ev.u.class_.has_size = has_size;
	rq.ev.u.class_.size = has_size ? size : 0;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_thread(struct ht_recorder *rec, ht_id id,
			     const char *name)
{
	struct request rq = { .ev.type = HT_EV_THREAD };

	rq.ev.u.thread.id = id;
	rq.ev.u.thread.name = name;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_method(struct ht_recorder *rec, ht_id id,
			     const char *name)
{
	struct request rq = { .ev.type = HT_EV_METHOD };

	rq.ev.u.method.id = id;
	rq.ev.u.method.name = name;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_method_at(struct ht_recorder *rec, ht_id id,
				const char *name, const char *file,
				uint32_t line)
{
	struct request rq = { .ev.type = HT_EV_METHOD };

	rq.ev.u.method.id = id;
	rq.ev.u.method.name = name;
	rq.ev.u.method.file = file;
	rq.ev.u.method.line = line;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_stack(struct ht_recorder *rec, ht_id id, size_t count,
			    const ht_id *frames)
{
	struct request rq = { .ev.type = HT_EV_STACK };

	rq.ev.u.stack.id = id;
	rq.ev.u.stack.count = count;
	rq.ev.u.stack.frames = frames;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_object_allocated_by(struct ht_recorder *rec, ht_id id,
					  ht_id class_id, uint64_t size,
					  ht_id stack)
{
	struct request rq = { .ev.type = HT_EV_OBJECT_ALLOCATED };

	rq.ev.u.object_allocated.id = id;
	rq.ev.u.object_allocated.class_id = class_id;
	rq.ev.u.object_allocated.size = size;
	rq.ev.u.object_allocated.stack = stack;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_object_allocated(struct ht_recorder *rec, ht_id id,
				       ht_id class_id, uint64_t size)
{
	struct request rq = { .ev.type = HT_EV_OBJECT_ALLOCATED };

	rq.ev.u.object_allocated.id = id;
	rq.ev.u.object_allocated.class_id = class_id;
	rq.ev.u.object_allocated.size = size;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_gc_started(struct ht_recorder *rec, int64_t gc,
				 uint32_t generations,
				 enum ht_gc_reason reason)
{
	struct request rq = { .ev.type = HT_EV_GC_STARTED };

	rq.ev.u.gc_started.has_gc = gc >= 0;
	rq.ev.u.gc_started.gc = gc >= 0 ? (uint64_t)gc : 0;
	rq.ev.u.gc_started.generations = generations;
	rq.ev.u.gc_started.reason = reason;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_generation_bounds(struct ht_recorder *rec, size_t count,
					const struct ht_generation_range *ranges)
{
	struct request rq = { .ev.type = HT_EV_GENERATION_BOUNDS };

	rq.ev.u.generation_bounds.count = count;
	rq.ev.u.generation_bounds.ranges = ranges;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_moved_references(struct ht_recorder *rec, size_t count,
				       const ht_id *old_starts,
				       const ht_id *new_starts,
				       const uint64_t *lengths)
{
	struct request rq = { .ev.type = HT_EV_MOVED_REFERENCES };

	if (!array_ok(count, old_starts) || !array_ok(count, new_starts) ||
	    !array_ok(count, lengths))
		return HT_E_INVALID;
	rq.ev.u.moved_references.count = count;
	rq.parallel = true;
	rq.starts = old_starts;
	rq.new_starts = new_starts;
	rq.lengths = lengths;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_surviving_references(struct ht_recorder *rec,
					   size_t count, const ht_id *starts,
					   const uint64_t *lengths)
{
	struct request rq = { .ev.type = HT_EV_SURVIVING_REFERENCES };

	if (!array_ok(count, starts) || !array_ok(count, lengths))
		return HT_E_INVALID;
	rq.ev.u.surviving_references.count = count;
	rq.parallel = true;
	rq.starts = starts;
	rq.lengths = lengths;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_gc_finished(struct ht_recorder *rec)
{
	struct request rq = { .ev.type = HT_EV_GC_FINISHED };

	return record_checked(rec, &rq);
}

enum ht_error_code ht_begin_container(struct ht_recorder *rec,
				      enum ht_container_type type, ht_id id1,
				      ht_id id2)
{
	struct request rq = { .ev.type = HT_EV_BEGIN_CONTAINER };

	rq.ev.u.begin_container.type = type;
	rq.ev.u.begin_container.id1 = id1;
	rq.ev.u.begin_container.id2 = id2;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_fields(struct ht_recorder *rec, size_t count,
			     const struct ht_field *fields)
{
	struct request rq = { .ev.type = HT_EV_FIELDS };

	rq.ev.u.fields.count = count;
	rq.ev.u.fields.fields = fields;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_root_references(struct ht_recorder *rec, size_t count,
				      const ht_id *refs, const uint32_t *flags,
				      const uint8_t *kinds,
				      const uint8_t *root_flags,
				      const ht_id *root_ids,
				      enum ht_result result)
{
	return ht_root_references_fields(rec, count, refs, flags, kinds,
					 root_flags, root_ids, NULL, result);
}

enum ht_error_code ht_root_references_fields(struct ht_recorder *rec,
					     size_t count, const ht_id *refs,
					     const uint32_t *flags,
					     const uint8_t *kinds,
					     const uint8_t *root_flags,
					     const ht_id *root_ids,
					     const ht_id *root_fields,
					     enum ht_result result)
{
	struct request rq = { .ev.type = HT_EV_ROOT_REFERENCES };
	struct ht_ev_root_references *r = &rq.ev.u.root_references;

	r->count = count;
	r->refs = refs;
	r->flags = flags;
	r->kinds = kinds;
	r->root_flags = root_flags;
	r->root_ids = root_ids;
	r->root_fields = root_fields;
	r->result = result;
	return record_checked(rec, &rq);
}

enum ht_error_code ht_object_references(struct ht_recorder *rec, ht_id id,
					ht_id class_id, uint64_t size,
					uint32_t flags, size_t count,
					const ht_id *refs,
					const uint32_t *ref_flags,
					int generation, enum ht_result result)
{
	return ht_object_references_fields(rec, id, class_id, size, flags,
					   count, refs, ref_flags, NULL,
					   generation, result);
}

enum ht_error_code ht_object_references_fields(struct ht_recorder *rec,
					       ht_id id, ht_id class_id,
					       uint64_t size, uint32_t flags,
					       size_t count, const ht_id *refs,
					       const uint32_t *ref_flags,
					       const ht_id *ref_fields,
					       int generation,
					       enum ht_result result)
{
	struct request rq = { .ev.type = HT_EV_OBJECT_REFERENCES };
	struct ht_ev_object_references *o = &rq.ev.u.object_references;

	o->id = id;
	o->class_id = class_id;
	o->size = size;
	o->flags = flags;
	o->count = count;
	o->refs = refs;
	o->ref_flags = ref_flags;
	o->ref_fields = ref_fields;
	o->has_generation = generation >= 0;
	o->generation = generation >= 0 ? (uint32_t)generation : 0;
	o->result = result;
	return record_checked(rec, &rq);
}
