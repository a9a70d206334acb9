/*
 * gc_events.c - the moves and survivors of every GC from the runtime's own
 * movement events, so that a GC the recorder does not dump costs what
 * those events cost, not what COR_PRF_MONITOR_GC costs.
 *
 * COR_PRF_MONITOR_GC makes the runtime scan every root and start a heap
 * walk after every GC, and count the allocations by class before it
 * (mask.c). The GC's survivor walk feeds both the profiler's
 * MovedReferences2 and the runtime's GCBulkMovedObjectRanges and
 * GCBulkSurvivingObjectRanges events (keyword GCHeapSurvivalAndMovement),
 * block for block. So the recorder asks for COR_PRF_HIGH_BASIC_GC
 * (GarbageCollectionStarted and Finished, the generation bounds, no walk)
 * and takes the blocks from an EventPipe session of its own, whose events
 * the runtime hands to EventPipeEventDelivered synchronously, on the GC
 * thread that walks, while the GC is in progress. COR_PRF_MONITOR_GC is
 * turned on only for the GC of a dump, whose heap walk needs it.
 *
 * A background GC runs beside the program, and its survivors are walked
 * at its end while the program allocates: no proof holds across it. So
 * background GC must be off (record sets DOTNET_gcConcurrent=0), and a
 * background GC that comes anyway is counted and said.
 */
#include "recorders/clr/clr.h"
#include "recorders/core/say.h"
#include "util/le.h"

#include <stdlib.h>
#include <string.h>

#define EV_GC_START 1        /* GCStart: Count, Depth, Reason, Type */
#define GC_TYPE_BACKGROUND 1
#define EV_BULK_SURVIVING 21 /* GCBulkSurvivingObjectRanges */
#define EV_BULK_MOVED 22     /* GCBulkMovedObjectRanges */
#define EV_ALLOCATION_SAMPLED 303 /* sites.c */

/* GC (the GCs' types), GCHeapSurvivalAndMovement; level verbose */
#define KEYWORD_GC 0x1ull
#define KEYWORD_MOVEMENT 0x400000ull
#define LEVEL_VERBOSE 5

/* Every bulk event: Index (u32), Count (u32), ClrInstanceID (u16), then
 * Count values, packed. */
#define BULK_HEADER 10
#define SURVIVING_VALUE 16 /* RangeBase, RangeLength */
#define MOVED_VALUE 24     /* OldRangeBase, NewRangeBase, RangeLength */

/* HEAPTRACE_CLR_MOVES=callbacks takes them from MovedReferences2, as
 * recorders before this one did: for benchmarks, and for a runtime whose
 * events would not do. */
bool moves_by_events_wanted(void)
{
	const char *v = getenv("HEAPTRACE_CLR_MOVES");

	return !v || strcmp(v, "callbacks") != 0;
}

bool gc_events_start(void)
{
	static const char name[] = "Microsoft-Windows-DotNETRuntime";
	static clr_wchar wname[sizeof(name)];
	struct clr_eventpipe_provider provider;
	uint64_t session = 0;

	if (state.info_level < 12)
		return false;
	for (size_t i = 0; i < sizeof(name); i++)
		wname[i] = (clr_wchar)name[i];
	/* and allocation sites' samples (sites.c) */
	provider = (struct clr_eventpipe_provider){
		.name = wname,
		.keywords = (state.moves_by_events ? KEYWORD_GC | KEYWORD_MOVEMENT
						   : 0) | sites_keywords(),
		.level = LEVEL_VERBOSE, .filter = NULL,
	};
	return state.info->vtbl->EventPipeStartSession(state.info, 1, &provider,
						       0, &session) == CLR_S_OK;
}

/* The values of one bulk event, in batches of the shim's arrays. */
static void record_blocks(bool moved, uint32_t count, const uint8_t *v)
{
	ht_id old[BATCH], now[BATCH];
	uint64_t len[BATCH];
	size_t stride = moved ? MOVED_VALUE : SURVIVING_VALUE;

	for (uint32_t done = 0; done < count;) {
		uint32_t m = count - done < BATCH ? count - done : BATCH;

		for (uint32_t i = 0; i < m; i++, v += stride) {
			old[i] = get_le64(v);
			now[i] = moved ? get_le64(v + 8) : old[i];
			len[i] = get_le64(v + stride - 8);
		}
		if (moved)
			ht_moved_references(state.trace.rec, m, old, now, len);
		else
			ht_surviving_references(state.trace.rec, m, old, len);
		done += m;
	}
}

clr_hresult on_event_pipe_event(CLR_THIS, clr_uptr provider, clr_ulong id,
				clr_ulong version, clr_ulong metadata_size,
				const uint8_t *metadata, clr_ulong size,
				const uint8_t *data,
				const struct clr_guid *activity,
				const struct clr_guid *related,
				clr_uptr thread, clr_ulong n_frames,
				clr_uptr frames[])
{
	uint32_t count;
	size_t value;

	(void)self, (void)provider, (void)version, (void)metadata_size;
	(void)metadata, (void)activity, (void)related, (void)thread;
	if (id == EV_ALLOCATION_SAMPLED) {
		if (enter()) {
			sites_sampled(data, size, n_frames, frames);
			leave();
		}
		return CLR_S_OK;
	}
	if (id == EV_GC_START && size >= 16 &&
	    get_le32(data + 12) == GC_TYPE_BACKGROUND)
		atomic_fetch_add(&state.background_gcs, 1);
	if ((id != EV_BULK_MOVED && id != EV_BULK_SURVIVING) ||
	    size < BULK_HEADER || flag(&state.gc_by_callbacks) || !enter())
		return CLR_S_OK;
	count = get_le32(data + 4);
	value = id == EV_BULK_MOVED ? MOVED_VALUE : SURVIVING_VALUE;
	if (count <= (size - BULK_HEADER) / value)
		record_blocks(id == EV_BULK_MOVED, count, data + BULK_HEADER);
	else
		atomic_fetch_add(&state.events_malformed, 1);
	leave();
	return CLR_S_OK;
}

/* What breaks the proof is said always; the rest when verbose. */
void gc_events_report(bool verbose)
{
	uint64_t background = atomic_load(&state.background_gcs);
	uint64_t malformed = atomic_load(&state.events_malformed);

	if (!state.moves_by_events)
		return;
	if (background)
		say("%llu background GC%s ran beside the program: the moves "
		    "of the GCs around %s are not proved",
		    (unsigned long long)background, background == 1 ? "" : "s",
		    background == 1 ? "it" : "them");
	if (malformed)
		say("%llu movement event%s cut short: their blocks are "
		    "missing", (unsigned long long)malformed,
		    malformed == 1 ? "" : "s");
	if (verbose)
		say("moves and survivors from the runtime's movement events");
}
