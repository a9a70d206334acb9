/*
 * com.c - the COM glue of the CoreCLR profiler: the callback object the
 * runtime calls (every slot of its vtable a stub but those callbacks.c
 * and clr-profiler.c answer), the class factory that hands it out, and
 * DllGetClassObject, the library's one export. The objects are static,
 * for the process's life: reference counts do not matter.
 */
#include "recorders/clr/clr.h"
#include "util/alloc.h"

#include <pthread.h>
#include <string.h>

/* ---- COM: the callback object and its factory ------------------------------ */

static clr_hresult callback_query(CLR_THIS, const struct clr_guid *iid,
				  void **out)
{
	static const struct clr_guid ours[] = {
		CLR_IID_IUNKNOWN,   CLR_IID_CALLBACK,   CLR_IID_CALLBACK2,
		CLR_IID_CALLBACK3,  CLR_IID_CALLBACK4,  CLR_IID_CALLBACK5,
		CLR_IID_CALLBACK6,  CLR_IID_CALLBACK7,  CLR_IID_CALLBACK8,
		CLR_IID_CALLBACK9,  CLR_IID_CALLBACK10, CLR_IID_CALLBACK11,
	};

	for (size_t i = 0; i < ARRAY_SIZE(ours); i++) {
		if (same_guid(iid, &ours[i])) {
			*out = self;
			return CLR_S_OK;
		}
	}
	*out = NULL;
	return CLR_E_NOINTERFACE;
}

/* One static object for the process's life: counting does not matter. */
static clr_ulong callback_addref(CLR_THIS)
{
	(void)self;
	return 1;
}

static clr_ulong callback_release(CLR_THIS)
{
	(void)self;
	return 1;
}

static clr_hresult on_notification_only(CLR_THIS, clr_bool *only)
{
	(void)self;
	*only = 0;
	return CLR_S_OK;
}

/* Every other slot: a stub of its exact type, doing nothing. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define CLR_STUB(ret, name, params) \
	static ret stub_##name params { return 0; }
CLR_CALLBACK_METHODS(CLR_STUB)
#undef CLR_STUB
#pragma GCC diagnostic pop

static struct clr_callback_vtbl callback_vtbl;

static void build_callback_vtbl(void)
{
	struct clr_callback_vtbl *v = &callback_vtbl;

#define CLR_STUB_SLOT(ret, name, params) v->name = stub_##name;
	CLR_CALLBACK_METHODS(CLR_STUB_SLOT)
#undef CLR_STUB_SLOT
	v->QueryInterface = callback_query;
	v->AddRef = callback_addref;
	v->Release = callback_release;
	v->Initialize = on_initialize;
	v->InitializeForAttach = on_initialize_for_attach;
	v->ProfilerDetachSucceeded = on_detached;
	v->ProfilerAttachComplete = on_attach_complete;
	v->Shutdown = on_shutdown;
	v->ThreadCreated = on_thread_created;
	v->ThreadNameChanged = on_thread_name;
	v->ObjectAllocated = on_allocated;
	v->ClassLoadFinished = on_class_loaded;
	v->GarbageCollectionStarted = on_collection_started;
	v->GarbageCollectionFinished = on_collection_finished;
	v->MovedReferences2 = on_moved;
	v->SurvivingReferences2 = on_surviving;
	v->RootReferences2 = on_root_references;
	v->ObjectReferences = on_object_references;
	v->ConditionalWeakTableElementReferences = on_dependents;
	v->LoadAsNotificationOnly = on_notification_only;
	v->EventPipeEventDelivered = on_event_pipe_event;
}

static clr_hresult factory_query(struct clr_factory *self,
				 const struct clr_guid *iid, void **out)
{
	static const struct clr_guid unknown = CLR_IID_IUNKNOWN;
	static const struct clr_guid factory = CLR_IID_ICLASSFACTORY;

	if (same_guid(iid, &unknown) || same_guid(iid, &factory)) {
		*out = self;
		return CLR_S_OK;
	}
	*out = NULL;
	return CLR_E_NOINTERFACE;
}

static clr_ulong factory_addref(struct clr_factory *self)
{
	(void)self;
	return 1;
}

static clr_ulong factory_release(struct clr_factory *self)
{
	(void)self;
	return 1;
}

static clr_hresult factory_create(struct clr_factory *self, void *outer,
				  const struct clr_guid *iid, void **out)
{
	(void)self;
	*out = NULL;
	if (outer)
		return CLR_CLASS_E_NOAGGREGATION;
	return callback_query(&state.callback, iid, out);
}

static clr_hresult factory_lock(struct clr_factory *self, clr_bool lock)
{
	(void)self;
	(void)lock;
	return CLR_S_OK;
}

static const struct clr_factory_vtbl factory_vtbl = {
	.QueryInterface = factory_query,
	.AddRef = factory_addref,
	.Release = factory_release,
	.CreateInstance = factory_create,
	.LockServer = factory_lock,
};

static pthread_once_t built = PTHREAD_ONCE_INIT;

static void build_objects(void)
{
	build_callback_vtbl();
	state.callback.vtbl = &callback_vtbl;
	state.factory.vtbl = &factory_vtbl;
}

/* The one export. The runtime loads the library named by
 * CORECLR_PROFILER_PATH for the CLSID in CORECLR_PROFILER, or by an
 * AttachProfiler command (attach.c) for the CLSID it gives: this library
 * is only loaded those ways, so it answers to any CLSID. */
clr_hresult DllGetClassObject(const struct clr_guid *clsid,
			      const struct clr_guid *iid, void **out)
{
	(void)clsid;
	if (!out)
		return CLR_E_FAIL;
	pthread_once(&built, build_objects);
	return factory_query(&state.factory, iid, out);
}
