/*
 * mask.c - the event mask the profiler asks for, and what it makes every
 * GC cost, dumped or not.
 *
 * COR_PRF_MONITOR_GC, which a dump's heap walk needs, makes the runtime do
 * at every GC, before and after our callbacks: count the objects
 * allocated since the last GC by class (a walk of generation 0, for
 * ObjectsAllocatedByClass, which we do not use), scan every root for
 * RootReferences2 and start the heap walk (which our first
 * ObjectReferences stops when the GC is not dumped), and walk the
 * survivors for MovedReferences2 and SurvivingReferences2. So it is on
 * only for a dump's GC (gc_monitoring), and the moves of the others come
 * from the runtime's movement events (gc_events.c), with
 * COR_PRF_HIGH_BASIC_GC for their start, finish and bounds. Asked for at
 * the start, it also turns concurrent (background) GC off for the run.
 * Runtimes from .NET 11 skip the first walk when asked with a high flag
 * (dotnet/runtime pull request 123177); older ones know no such flag, so
 * it is not asked of them.
 *
 * HEAPTRACE_CLR_FLOOR=1, for benchmarks only (tests/bench/
 * bench-clr-pauses.sh): the profiler asks for the same mask and the same
 * events and records nothing, no trace, no thread of its own: what the
 * runtime imposes, the floor the recorder is measured against.
 */
#include "recorders/clr/clr.h"

#include <stdlib.h>

/* COR_PRF_HIGH_MONITOR_GC_SKIP_ALLOCATED_BY_CLASS_STATISTIC, the first
 * high flag after COR_PRF_HIGH_MONITOR_PINNEDOBJECT_ALLOCATED (0x100). */
#define CLR_HIGH_SKIP_ALLOCATED_BY_CLASS 0x200u
#define SKIP_ALLOCATED_BY_CLASS_SINCE 11

/* Asked once, at the first mask (in Initialize): the mask changes again
 * inside the GCs that walk the heap, which need not ask the runtime. */
unsigned runtime_major(void)
{
	static int known; /* 0 not asked yet, 1 asked */
	static uint16_t major;
	uint16_t minor = 0, build = 0, qfe = 0, instance = 0;
	int32_t type = 0;
	clr_ulong n = 0;
	clr_wchar version[64];

	if (!known &&
	    CLR_FAILED(state.info->vtbl->GetRuntimeInformation(
		    state.info, &instance, &type, &major, &minor, &build, &qfe,
		    64, &n, version)))
		major = 0;
	known = 1;
	return major;
}

clr_hresult set_event_mask(clr_ulong mask)
{
	clr_ulong high = 0;

	if (state.moves_by_events)
		high |= CLR_HIGH_BASIC_GC | CLR_HIGH_MONITOR_EVENT_PIPE;
	if (sites_keywords()) /* the runtime's allocation samples */
		high |= CLR_HIGH_MONITOR_EVENT_PIPE;
	if (state.info_level >= 5 &&
	    runtime_major() >= SKIP_ALLOCATED_BY_CLASS_SINCE &&
	    state.info->vtbl->SetEventMask2(state.info, mask,
			high | CLR_HIGH_SKIP_ALLOCATED_BY_CLASS) == CLR_S_OK)
		return CLR_S_OK;
	if (high)
		return state.info_level >= 5
			? state.info->vtbl->SetEventMask2(state.info, mask, high)
			: CLR_E_FAIL;
	return state.info->vtbl->SetEventMask(state.info, mask);
}

/* COR_PRF_MONITOR_GC on for a dump's GC, off after it, when the moves
 * come from the movement events (gc_events.c). Called only from the GC's
 * own callbacks, with the program stopped: no GC begins or ends while
 * the mask changes. */
void gc_monitoring(bool on)
{
	if (!state.moves_by_events)
		return;
	if (!CLR_FAILED(set_event_mask(on ? state.mask | CLR_MONITOR_GC
					    : state.mask)))
		set_flag(&state.monitoring_gc, on);
}

bool recording_floor(void)
{
	const char *v = getenv("HEAPTRACE_CLR_FLOOR");

	return v && *v && *v != '0';
}
