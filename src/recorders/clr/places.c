/*
 * places.c - where a managed frame of a stack snapshot (stacks.c) or of
 * an allocation's stack (sites.c) is: its method, and the file and line
 * .NET's own stack traces give it, "Holder.Park(Parked.cs:24)", where the
 * assembly's portable PDB gives the line; its method alone otherwise (no
 * PDB beside the assembly, or not the one it was built with; a Windows or
 * embedded PDB; a method of no sequence points; code the runtime maps to
 * no IL).
 *
 * A frame's method id in the trace is then its place, method and line,
 * not its FunctionID, as the JVM recorder does (frames.c there): two
 * frames of one method at two lines read differently. Places are
 * numbered per trace in the order first met, with the top bit set (no
 * FunctionID, a user-space address, has it, so the two kinds of method
 * id never meet), and each is named once by a method event that gives
 * the method's name, the file and the line apart (`Holder.Park`,
 * `Parked.cs`, 24). A frame with no line keeps its FunctionID, which the
 * recorder thread names.
 *
 * The line of a frame: DoStackSnapshot gives its instruction pointer.
 * The method's native code that holds it (one of several under tiered
 * compilation: GetNativeCodeStartAddresses, GetCodeInfo4) maps native
 * offsets to IL offsets (GetILToNativeMapping3, whose entries may instead
 * say no mapping, prolog or epilog); the PDB maps IL offsets to lines
 * (pdb.c). The byte before the IP is looked up, as debuggers do for a
 * frame that returns there: every frame of a stopped thread waits for a
 * call to return, its top managed frame too (the thread is in the
 * runtime or in native code, or stopped at a hijacked return), whose IP
 * taken as it is would name the statement after the call. A thread
 * stopped inside a loop of fully interruptible code is the exception:
 * the byte before its IP is of the same statement but at the statement's
 * first instruction (and the IP itself is looked up when that byte is no
 * code of the method).
 *
 * These calls take the runtime's locks, and the PDB is a file to read:
 * they run on the forcing thread once the snapshot has resumed the
 * runtime and before it forces the GC, and on the recorder thread for the
 * allocations' stacks (sites.c), never with the runtime suspended (a
 * suspended thread may hold those locks) nor inside a GC. The two take
 * turns on places_lock; an allocating thread only looks up what is
 * already placed (frame_place_known), and never waits for the lock. Each
 * module's PDB is read once, the first time one of its frames is placed,
 * and kept until the trace closes.
 */
#include "recorders/clr/clr.h"
#include "recorders/clr/pdb.h"
#include "recorders/core/say.h"
#include "util/alloc.h"
#include "util/idmap.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#define PLACE_ID_BIT (1ULL << 63)
/* Native code versions of one method, and ranges of one version, that
 * are searched for an IP. */
#define CODE_VERSIONS_MAX 16
#define CODE_RANGES_MAX 8
#define PATH_MAX_UNITS 4096
#define MAP_FIRST 256
#define MAP_MAX (1u << 20)
#define METHOD_DEF 0x06

/* Each module's PDB, NULL when it has none. */
struct module_pdb {
	uint64_t module;
	struct pdb *pdb;
};
static struct {
	struct module_pdb *v;
	size_t n, cap;
	struct idmap by_module;
} modules;

struct place {
	uint64_t fid;
	uint32_t document, line;
};
static struct {
	struct place *v;
	size_t n, cap;
	struct idmap by_key; /* a hash of the place -> index in v */
} places;

/* What each (method, IP) already gave: idle threads of a pool stop at the
 * same few spots, asked once. */
struct spot {
	uint64_t fid, ip;
	ht_id id;
};
static struct {
	struct spot *v;
	size_t n, cap;
	struct idmap by_key;
} spots;

static struct clr_il_map *map;
static size_t map_cap;

/* Held while a thread places frames or looks them up. */
static pthread_mutex_t places_lock = PTHREAD_MUTEX_INITIALIZER;
/* Set while a thread places frames: the tables are not freed under it. */
static _Atomic bool placing;

/* For HEAPTRACE_VERBOSE: frames placed at a line, and not. */
static _Atomic uint64_t frames_at_line, frames_no_line;

/* The IL offset that the native code at offset holds, from the map of the
 * code that starts at start; -1 when the map gives none. */
static int64_t il_at(clr_uptr start, uint64_t offset)
{
	uint32_t n = 0;
	int64_t il = -1;
	uint32_t best_start = 0;

	if (!map) {
		map = malloc(MAP_FIRST * sizeof(*map));
		map_cap = map ? MAP_FIRST : 0;
	}
	if (!map || CLR_FAILED(state.info->vtbl->GetILToNativeMapping3(
			    state.info, start, (uint32_t)map_cap, &n, map)))
		return -1;
	if (n > map_cap && n <= MAP_MAX) {
		struct clr_il_map *bigger = realloc(map, n * sizeof(*map));

		if (!bigger)
			return -1;
		map = bigger;
		map_cap = n;
		if (CLR_FAILED(state.info->vtbl->GetILToNativeMapping3(
			    state.info, start, (uint32_t)map_cap, &n, map)))
			return -1;
	}
	if (n > map_cap)
		n = (uint32_t)map_cap;
	/* the entry whose native range holds the offset; of several, the
	 * one that starts last */
	for (uint32_t i = 0; i < n; i++) {
		const struct clr_il_map *m = &map[i];

		if (offset < m->native_start || offset >= m->native_end ||
		    (il >= 0 && m->native_start < best_start))
			continue;
		if (m->il == CLR_IL_PROLOG)
			il = 0; /* the method's opening line */
		else if (m->il == CLR_IL_EPILOG || m->il == CLR_IL_NO_MAPPING)
			continue;
		else
			il = m->il;
		best_start = m->native_start;
	}
	return il;
}

/* The IL offset of the instruction at ip in function fid's native code;
 * -1 when the runtime cannot say. */
static int64_t il_offset_of(clr_uptr fid, clr_uptr ip)
{
	clr_uptr starts[CODE_VERSIONS_MAX];
	uint32_t n = 0;

	if (state.info_level < 9 ||
	    CLR_FAILED(state.info->vtbl->GetNativeCodeStartAddresses(
		    state.info, fid, 0, CODE_VERSIONS_MAX, &n, starts)))
		return -1;
	if (n > CODE_VERSIONS_MAX)
		n = CODE_VERSIONS_MAX;
	for (uint32_t v = 0; v < n; v++) {
		struct clr_code_range r[CODE_RANGES_MAX];
		uint32_t n_ranges = 0;
		uint64_t before = 0;

		if (CLR_FAILED(state.info->vtbl->GetCodeInfo4(
			    state.info, starts[v], CODE_RANGES_MAX, &n_ranges,
			    r)))
			continue;
		if (n_ranges > CODE_RANGES_MAX)
			n_ranges = CODE_RANGES_MAX;
		/* native offsets run on from one range to the next */
		for (uint32_t k = 0; k < n_ranges; k++) {
			if (ip >= r[k].start && ip - r[k].start < r[k].size)
				return il_at(starts[v], before + (ip - r[k].start));
			before += r[k].size;
		}
	}
	return -1;
}

/* The PDB of a module, read the first time it is asked for; NULL when it
 * has none. */
static const struct pdb *pdb_of(clr_uptr module)
{
	clr_wchar wname[PATH_MAX_UNITS];
	char path[PATH_MAX_UNITS * 3], pdb_path[PATH_MAX_UNITS * 3];
	const uint8_t *base = NULL;
	clr_ulong n = 0, flags = 0;
	clr_uptr assembly = 0;
	struct pdb *pdb = NULL;
	uint32_t at;

	if (idmap_get(&modules.by_module, module, &at))
		return modules.v[at].pdb;
	if (ALLOC_GROW(modules.v, modules.n + 1, modules.cap) < 0)
		return NULL;
	if (!CLR_FAILED(state.info->vtbl->GetModuleInfo2(
		    state.info, module, &base, PATH_MAX_UNITS, &n, wname,
		    &assembly, &flags)) &&
	    n > 0) {
		clrn_from_utf16(path, sizeof(path), wname,
				n < PATH_MAX_UNITS ? n : PATH_MAX_UNITS);
		if (pdb_path_for(path, pdb_path, sizeof(pdb_path)))
			pdb = pdb_open(pdb_path);
		if (pdb && !pdb_matches(pdb, path)) {
			say("%s is not the PDB %s was built with: its frames "
			    "are named by method alone", pdb_path, path);
			pdb_free(pdb);
			pdb = NULL;
		}
	}
	if (idmap_add(&modules.by_module, module, (uint32_t)modules.n) < 0) {
		pdb_free(pdb);
		return NULL;
	}
	modules.v[modules.n++] = (struct module_pdb){module, pdb};
	return pdb;
}

static uint64_t place_key(const struct place *p)
{
	uint64_t key = p->fid * 0x9e3779b97f4a7c15ULL ^
		       (uint64_t)p->line * 0xc2b2ae3d27d4eb4fULL ^
		       (uint64_t)p->document * 0x165667b19e3779f9ULL;

	return key | 1;
}

/* The id of place p, named the first time in the trace; 0 when memory
 * is short. */
static ht_id place_id(const struct place *p, const char *file)
{
	char text[4096];
	struct clrn_buf b;
	uint64_t key;
	uint32_t at;

	/* a key another place holds moves on to the next */
	for (key = place_key(p); idmap_get(&places.by_key, key, &at); key += 2) {
		const struct place *q = &places.v[at];

		if (q->fid == p->fid && q->line == p->line &&
		    q->document == p->document)
			return PLACE_ID_BIT | ((ht_id)at + 1);
	}
	if (ALLOC_GROW(places.v, places.n + 1, places.cap) < 0 ||
	    idmap_add(&places.by_key, key, (uint32_t)places.n) < 0)
		return 0;
	places.v[places.n++] = *p;
	clrn_init(&b, text, sizeof(text));
	method_name(p->fid, &b);
	ht_method_at(state.trace.rec, PLACE_ID_BIT | places.n, text, file,
		     p->line);
	return PLACE_ID_BIT | places.n;
}

static uint64_t spot_key(uint64_t fid, uint64_t ip)
{
	return (fid * 0x9e3779b97f4a7c15ULL ^ ip * 0xc2b2ae3d27d4eb4fULL) | 1;
}

/* The index of spot (fid, ip) in spots, added if new (id 0: not yet
 * placed); -1 when memory is short. */
static int64_t spot_of(uint64_t fid, uint64_t ip)
{
	uint64_t key = spot_key(fid, ip);
	uint32_t at;

	for (; idmap_get(&spots.by_key, key, &at); key += 2)
		if (spots.v[at].fid == fid && spots.v[at].ip == ip)
			return at;
	if (ALLOC_GROW(spots.v, spots.n + 1, spots.cap) < 0 ||
	    idmap_add(&spots.by_key, key, (uint32_t)spots.n) < 0)
		return -1;
	spots.v[spots.n] = (struct spot){fid, ip, 0};
	return (int64_t)spots.n++;
}

ht_id frame_place(clr_uptr fid, clr_uptr ip)
{
	char file[PDB_NAME_MAX];
	clr_uptr cls = 0, module = 0;
	clr_token token = 0;
	struct place p = {.fid = fid};
	const struct pdb *pdb;
	int64_t il, spot;
	ht_id id = 0;

	if (!fid || !ip)
		return fid;
	pthread_mutex_lock(&places_lock);
	atomic_store(&placing, true);
	spot = spot_of(fid, ip);
	if (spot >= 0 && spots.v[spot].id) {
		id = spots.v[spot].id;
		atomic_store(&placing, false);
		pthread_mutex_unlock(&places_lock);
		atomic_fetch_add(id == fid ? &frames_no_line : &frames_at_line, 1);
		return id;
	}
	il = il_offset_of(fid, ip - 1);
	if (il < 0)
		il = il_offset_of(fid, ip);
	if (il >= 0 && il <= UINT32_MAX &&
	    !CLR_FAILED(state.info->vtbl->GetFunctionInfo(state.info, fid,
							  &cls, &module,
							  &token)) &&
	    token >> 24 == METHOD_DEF && (pdb = pdb_of(module)) &&
	    pdb_line(pdb, token & 0xffffff, (uint32_t)il, &p.line,
		     &p.document, file, sizeof(file)))
		id = place_id(&p, file);
	atomic_fetch_add(id ? &frames_at_line : &frames_no_line, 1);
	if (!id)
		id = fid;
	if (spot >= 0)
		spots.v[spot].id = id;
	atomic_store(&placing, false);
	pthread_mutex_unlock(&places_lock);
	return id;
}

bool frame_place_known(clr_uptr fid, clr_uptr ip, ht_id *id)
{
	uint64_t key = spot_key(fid, ip);
	uint32_t at;
	bool known = false;

	if (!fid || !ip) {
		*id = fid;
		return true;
	}
	if (pthread_mutex_trylock(&places_lock) != 0)
		return false;
	for (; idmap_get(&spots.by_key, key, &at); key += 2) {
		if (spots.v[at].fid == fid && spots.v[at].ip == ip) {
			*id = spots.v[at].id;
			known = *id != 0;
			break;
		}
	}
	pthread_mutex_unlock(&places_lock);
	return known;
}

void places_forget(void)
{
	/* a forcing thread left placing at the close: leave it the tables */
	if (atomic_load(&placing) || pthread_mutex_trylock(&places_lock) != 0)
		return;
	for (size_t i = 0; i < modules.n; i++)
		pdb_free(modules.v[i].pdb);
	free(modules.v);
	idmap_free(&modules.by_module);
	free(places.v);
	idmap_free(&places.by_key);
	free(spots.v);
	idmap_free(&spots.by_key);
	free(map);
	memset(&modules, 0, sizeof(modules));
	memset(&places, 0, sizeof(places));
	memset(&spots, 0, sizeof(spots));
	map = NULL;
	map_cap = 0;
	pthread_mutex_unlock(&places_lock);
}

void places_report(uint64_t longest_us)
{
	say("places: %llu frame%s at a line of a PDB, %llu by method alone "
	    "(at most %llu us a snapshot, the runtime running)",
	    (unsigned long long)atomic_load(&frames_at_line),
	    atomic_load(&frames_at_line) == 1 ? "" : "s",
	    (unsigned long long)atomic_load(&frames_no_line),
	    (unsigned long long)longest_us);
}
