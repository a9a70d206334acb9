/*
 * corprof.h - the parts of CoreCLR's profiling interfaces that the CLR
 * recorder implements or calls, written for C: the types as the runtime
 * lays them out on Linux (64-bit), the vtables as structs of function
 * pointers, and the interface ids. Our own definitions, checked slot by
 * slot against the runtime's interface description (corprof.idl, cor.h);
 * the recorder needs no .NET headers to build.
 *
 * An interface pointer points to an object whose first member is its
 * vtable; every method takes that pointer first. On x86_64 and aarch64
 * Linux the methods use the platform's C calling convention.
 */
#ifndef CLR_CORPROF_H
#define CLR_CORPROF_H

#include <stddef.h>
#include <stdint.h>

typedef int32_t clr_hresult;    /* HRESULT */
typedef uint32_t clr_ulong;     /* ULONG, DWORD, ULONG32 */
typedef int32_t clr_bool;       /* BOOL */
typedef uint16_t clr_wchar;     /* WCHAR: one UTF-16 code unit */
typedef uintptr_t clr_uptr;     /* UINT_PTR, SIZE_T, and every *ID below */
typedef uint32_t clr_token;     /* mdToken, mdTypeDef, mdMethodDef */

_Static_assert(sizeof(clr_uptr) == 8, "the CLR recorder is for 64-bit");

#define CLR_S_OK 0
#define CLR_S_FALSE 1
#define CLR_E_FAIL ((clr_hresult)0x80004005u)
#define CLR_E_NOINTERFACE ((clr_hresult)0x80004002u)
#define CLR_E_NOTIMPL ((clr_hresult)0x80004001u)
#define CLR_CLASS_E_NOAGGREGATION ((clr_hresult)0x80040110u)
#define CLR_FAILED(hr) ((hr) < 0)

struct clr_guid {
	uint32_t d1;
	uint16_t d2, d3;
	uint8_t d4[8];
};

/* COR_PRF_MONITOR bits the recorder uses. */
#define CLR_MONITOR_CLASS_LOADS 0x2u
#define CLR_MONITOR_GC 0x80u
/* high flags (SetEventMask2) */
#define CLR_HIGH_BASIC_GC 0x10u
#define CLR_HIGH_MONITOR_EVENT_PIPE 0x80u
#define CLR_MONITOR_OBJECT_ALLOCATED 0x100u
#define CLR_MONITOR_THREADS 0x200u
#define CLR_ENABLE_OBJECT_ALLOCATED 0x800000u
/* COR_PRF_ALLOWABLE_AFTER_ATTACH: the bits a profiler attached to a
 * running process may set (threads, module, assembly and app domain
 * loads, stack snapshots, GC, suspends, class loads, JIT compilation) */
#define CLR_ALLOWABLE_AFTER_ATTACH 0x100102beu
#define CLR_ENABLE_STACK_SNAPSHOT 0x10000000u

/* COR_PRF_GC_GENERATION_RANGE */
struct clr_generation_range {
	uint32_t generation;   /* COR_PRF_GC_GENERATION, an enum */
	clr_uptr start;
	clr_uptr length;
	clr_uptr reserved;
};

/* COR_FIELD_OFFSET: an instance field of a class and its offset, from
 * the object's start (its MethodTable pointer) for a reference type, from
 * the start of the fields for a value type. */
struct clr_field_offset {
	clr_token field;
	clr_ulong offset;
};

/* The profiler's own object, handed to the runtime. */
struct clr_callback;
#define CLR_THIS struct clr_callback *self

/*
 * ICorProfilerCallback up to ICorProfilerCallback11, in slot order: X is
 * applied to (return type, name, parameter list). 98 slots; the slot of
 * each is its place here, counted from 0 (QueryInterface).
 */
#define CLR_CALLBACK_METHODS(X) \
	/* IUnknown */ \
	X(clr_hresult, QueryInterface, (CLR_THIS, const struct clr_guid *iid, void **out)) \
	X(clr_ulong, AddRef, (CLR_THIS)) \
	X(clr_ulong, Release, (CLR_THIS)) \
	/* ICorProfilerCallback: 3 */ \
	X(clr_hresult, Initialize, (CLR_THIS, void *info_unknown)) \
	X(clr_hresult, Shutdown, (CLR_THIS)) \
	X(clr_hresult, AppDomainCreationStarted, (CLR_THIS, clr_uptr appdomain)) \
	X(clr_hresult, AppDomainCreationFinished, (CLR_THIS, clr_uptr appdomain, clr_hresult status)) \
	X(clr_hresult, AppDomainShutdownStarted, (CLR_THIS, clr_uptr appdomain)) \
	X(clr_hresult, AppDomainShutdownFinished, (CLR_THIS, clr_uptr appdomain, clr_hresult status)) \
	X(clr_hresult, AssemblyLoadStarted, (CLR_THIS, clr_uptr assembly)) \
	X(clr_hresult, AssemblyLoadFinished, (CLR_THIS, clr_uptr assembly, clr_hresult status)) \
	X(clr_hresult, AssemblyUnloadStarted, (CLR_THIS, clr_uptr assembly)) \
	X(clr_hresult, AssemblyUnloadFinished, (CLR_THIS, clr_uptr assembly, clr_hresult status)) \
	X(clr_hresult, ModuleLoadStarted, (CLR_THIS, clr_uptr module)) \
	X(clr_hresult, ModuleLoadFinished, (CLR_THIS, clr_uptr module, clr_hresult status)) \
	X(clr_hresult, ModuleUnloadStarted, (CLR_THIS, clr_uptr module)) \
	X(clr_hresult, ModuleUnloadFinished, (CLR_THIS, clr_uptr module, clr_hresult status)) \
	X(clr_hresult, ModuleAttachedToAssembly, (CLR_THIS, clr_uptr module, clr_uptr assembly)) \
	X(clr_hresult, ClassLoadStarted, (CLR_THIS, clr_uptr class_id)) \
	X(clr_hresult, ClassLoadFinished, (CLR_THIS, clr_uptr class_id, clr_hresult status)) \
	X(clr_hresult, ClassUnloadStarted, (CLR_THIS, clr_uptr class_id)) \
	X(clr_hresult, ClassUnloadFinished, (CLR_THIS, clr_uptr class_id, clr_hresult status)) \
	X(clr_hresult, FunctionUnloadStarted, (CLR_THIS, clr_uptr function)) \
	X(clr_hresult, JITCompilationStarted, (CLR_THIS, clr_uptr function, clr_bool safe_to_block)) \
	X(clr_hresult, JITCompilationFinished, (CLR_THIS, clr_uptr function, clr_hresult status, clr_bool safe_to_block)) \
	X(clr_hresult, JITCachedFunctionSearchStarted, (CLR_THIS, clr_uptr function, clr_bool *use_cached)) \
	X(clr_hresult, JITCachedFunctionSearchFinished, (CLR_THIS, clr_uptr function, int32_t result)) \
	X(clr_hresult, JITFunctionPitched, (CLR_THIS, clr_uptr function)) \
	X(clr_hresult, JITInlining, (CLR_THIS, clr_uptr caller, clr_uptr callee, clr_bool *should_inline)) \
	X(clr_hresult, ThreadCreated, (CLR_THIS, clr_uptr thread)) \
	X(clr_hresult, ThreadDestroyed, (CLR_THIS, clr_uptr thread)) \
	X(clr_hresult, ThreadAssignedToOSThread, (CLR_THIS, clr_uptr thread, clr_ulong os_thread)) \
	X(clr_hresult, RemotingClientInvocationStarted, (CLR_THIS)) \
	X(clr_hresult, RemotingClientSendingMessage, (CLR_THIS, struct clr_guid *cookie, clr_bool is_async)) \
	X(clr_hresult, RemotingClientReceivingReply, (CLR_THIS, struct clr_guid *cookie, clr_bool is_async)) \
	X(clr_hresult, RemotingClientInvocationFinished, (CLR_THIS)) \
	X(clr_hresult, RemotingServerReceivingMessage, (CLR_THIS, struct clr_guid *cookie, clr_bool is_async)) \
	X(clr_hresult, RemotingServerInvocationStarted, (CLR_THIS)) \
	X(clr_hresult, RemotingServerInvocationReturned, (CLR_THIS)) \
	X(clr_hresult, RemotingServerSendingReply, (CLR_THIS, struct clr_guid *cookie, clr_bool is_async)) \
	X(clr_hresult, UnmanagedToManagedTransition, (CLR_THIS, clr_uptr function, int32_t reason)) \
	X(clr_hresult, ManagedToUnmanagedTransition, (CLR_THIS, clr_uptr function, int32_t reason)) \
	X(clr_hresult, RuntimeSuspendStarted, (CLR_THIS, int32_t reason)) \
	X(clr_hresult, RuntimeSuspendFinished, (CLR_THIS)) \
	X(clr_hresult, RuntimeSuspendAborted, (CLR_THIS)) \
	X(clr_hresult, RuntimeResumeStarted, (CLR_THIS)) \
	X(clr_hresult, RuntimeResumeFinished, (CLR_THIS)) \
	X(clr_hresult, RuntimeThreadSuspended, (CLR_THIS, clr_uptr thread)) \
	X(clr_hresult, RuntimeThreadResumed, (CLR_THIS, clr_uptr thread)) \
	X(clr_hresult, MovedReferences, (CLR_THIS, clr_ulong n, clr_uptr old_starts[], clr_uptr new_starts[], clr_ulong lengths[])) \
	X(clr_hresult, ObjectAllocated, (CLR_THIS, clr_uptr object, clr_uptr class_id)) \
	X(clr_hresult, ObjectsAllocatedByClass, (CLR_THIS, clr_ulong n, clr_uptr class_ids[], clr_ulong counts[])) \
	X(clr_hresult, ObjectReferences, (CLR_THIS, clr_uptr object, clr_uptr class_id, clr_ulong n, clr_uptr refs[])) \
	X(clr_hresult, RootReferences, (CLR_THIS, clr_ulong n, clr_uptr refs[])) \
	X(clr_hresult, ExceptionThrown, (CLR_THIS, clr_uptr object)) \
	X(clr_hresult, ExceptionSearchFunctionEnter, (CLR_THIS, clr_uptr function)) \
	X(clr_hresult, ExceptionSearchFunctionLeave, (CLR_THIS)) \
	X(clr_hresult, ExceptionSearchFilterEnter, (CLR_THIS, clr_uptr function)) \
	X(clr_hresult, ExceptionSearchFilterLeave, (CLR_THIS)) \
	X(clr_hresult, ExceptionSearchCatcherFound, (CLR_THIS, clr_uptr function)) \
	X(clr_hresult, ExceptionOSHandlerEnter, (CLR_THIS, clr_uptr unused)) \
	X(clr_hresult, ExceptionOSHandlerLeave, (CLR_THIS, clr_uptr unused)) \
	X(clr_hresult, ExceptionUnwindFunctionEnter, (CLR_THIS, clr_uptr function)) \
	X(clr_hresult, ExceptionUnwindFunctionLeave, (CLR_THIS)) \
	X(clr_hresult, ExceptionUnwindFinallyEnter, (CLR_THIS, clr_uptr function)) \
	X(clr_hresult, ExceptionUnwindFinallyLeave, (CLR_THIS)) \
	X(clr_hresult, ExceptionCatcherEnter, (CLR_THIS, clr_uptr function, clr_uptr object)) \
	X(clr_hresult, ExceptionCatcherLeave, (CLR_THIS)) \
	X(clr_hresult, COMClassicVTableCreated, (CLR_THIS, clr_uptr class_id, const struct clr_guid *iid, void *vtable, clr_ulong slots)) \
	X(clr_hresult, COMClassicVTableDestroyed, (CLR_THIS, clr_uptr class_id, const struct clr_guid *iid, void *vtable)) \
	X(clr_hresult, ExceptionCLRCatcherFound, (CLR_THIS)) \
	X(clr_hresult, ExceptionCLRCatcherExecute, (CLR_THIS)) \
	/* ICorProfilerCallback2: 72 */ \
	X(clr_hresult, ThreadNameChanged, (CLR_THIS, clr_uptr thread, clr_ulong n, clr_wchar name[])) \
	X(clr_hresult, GarbageCollectionStarted, (CLR_THIS, int n, clr_bool collected[], int32_t reason)) \
	X(clr_hresult, SurvivingReferences, (CLR_THIS, clr_ulong n, clr_uptr starts[], clr_ulong lengths[])) \
	X(clr_hresult, GarbageCollectionFinished, (CLR_THIS)) \
	X(clr_hresult, FinalizeableObjectQueued, (CLR_THIS, clr_ulong flags, clr_uptr object)) \
	X(clr_hresult, RootReferences2, (CLR_THIS, clr_ulong n, clr_uptr refs[], int32_t kinds[], int32_t flags[], clr_uptr ids[])) \
	X(clr_hresult, HandleCreated, (CLR_THIS, clr_uptr handle, clr_uptr object)) \
	X(clr_hresult, HandleDestroyed, (CLR_THIS, clr_uptr handle)) \
	/* ICorProfilerCallback3: 80 */ \
	X(clr_hresult, InitializeForAttach, (CLR_THIS, void *info_unknown, void *data, unsigned size)) \
	X(clr_hresult, ProfilerAttachComplete, (CLR_THIS)) \
	X(clr_hresult, ProfilerDetachSucceeded, (CLR_THIS)) \
	/* ICorProfilerCallback4: 83 */ \
	X(clr_hresult, ReJITCompilationStarted, (CLR_THIS, clr_uptr function, clr_uptr rejit, clr_bool safe_to_block)) \
	X(clr_hresult, GetReJITParameters, (CLR_THIS, clr_uptr module, clr_token method, void *control)) \
	X(clr_hresult, ReJITCompilationFinished, (CLR_THIS, clr_uptr function, clr_uptr rejit, clr_hresult status, clr_bool safe_to_block)) \
	X(clr_hresult, ReJITError, (CLR_THIS, clr_uptr module, clr_token method, clr_uptr function, clr_hresult status)) \
	X(clr_hresult, MovedReferences2, (CLR_THIS, clr_ulong n, clr_uptr old_starts[], clr_uptr new_starts[], clr_uptr lengths[])) \
	X(clr_hresult, SurvivingReferences2, (CLR_THIS, clr_ulong n, clr_uptr starts[], clr_uptr lengths[])) \
	/* ICorProfilerCallback5: 89 */ \
	X(clr_hresult, ConditionalWeakTableElementReferences, (CLR_THIS, clr_ulong n, clr_uptr keys[], clr_uptr values[], clr_uptr handles[])) \
	/* ICorProfilerCallback6: 90 */ \
	X(clr_hresult, GetAssemblyReferences, (CLR_THIS, const clr_wchar *path, void *provider)) \
	/* ICorProfilerCallback7: 91 */ \
	X(clr_hresult, ModuleInMemorySymbolsUpdated, (CLR_THIS, clr_uptr module)) \
	/* ICorProfilerCallback8: 92 */ \
	X(clr_hresult, DynamicMethodJITCompilationStarted, (CLR_THIS, clr_uptr function, clr_bool safe_to_block, const uint8_t *il_header, clr_ulong il_size)) \
	X(clr_hresult, DynamicMethodJITCompilationFinished, (CLR_THIS, clr_uptr function, clr_hresult status, clr_bool safe_to_block)) \
	/* ICorProfilerCallback9: 94 */ \
	X(clr_hresult, DynamicMethodUnloaded, (CLR_THIS, clr_uptr function)) \
	/* ICorProfilerCallback10: 95 */ \
	X(clr_hresult, EventPipeEventDelivered, (CLR_THIS, clr_uptr provider, clr_ulong event_id, clr_ulong event_version, clr_ulong metadata_size, const uint8_t *metadata, clr_ulong data_size, const uint8_t *data, const struct clr_guid *activity, const struct clr_guid *related_activity, clr_uptr thread, clr_ulong n_frames, clr_uptr frames[])) \
	X(clr_hresult, EventPipeProviderCreated, (CLR_THIS, clr_uptr provider)) \
	/* ICorProfilerCallback11: 97 */ \
	X(clr_hresult, LoadAsNotificationOnly, (CLR_THIS, clr_bool *notification_only))

#define CLR_CALLBACK_SLOT(ret, name, params) ret (*name) params;
struct clr_callback_vtbl {
	CLR_CALLBACK_METHODS(CLR_CALLBACK_SLOT)
};
#undef CLR_CALLBACK_SLOT

struct clr_callback {
	const struct clr_callback_vtbl *vtbl;
};

#define CLR_SLOT_OF(type, member) (offsetof(type, member) / sizeof(void *))
_Static_assert(sizeof(struct clr_callback_vtbl) == 98 * sizeof(void *),
	       "ICorProfilerCallback11 has 98 slots");
_Static_assert(CLR_SLOT_OF(struct clr_callback_vtbl, ThreadNameChanged) == 72,
	       "ICorProfilerCallback2 starts at slot 72");
_Static_assert(CLR_SLOT_OF(struct clr_callback_vtbl, MovedReferences2) == 87,
	       "MovedReferences2 is slot 87");
_Static_assert(CLR_SLOT_OF(struct clr_callback_vtbl,
			   ConditionalWeakTableElementReferences) == 89,
	       "ConditionalWeakTableElementReferences is slot 89");

/* IClassFactory, which the runtime gets from DllGetClassObject. */
struct clr_factory;
struct clr_factory_vtbl {
	clr_hresult (*QueryInterface)(struct clr_factory *self,
				      const struct clr_guid *iid, void **out);
	clr_ulong (*AddRef)(struct clr_factory *self);
	clr_ulong (*Release)(struct clr_factory *self);
	clr_hresult (*CreateInstance)(struct clr_factory *self, void *outer,
				      const struct clr_guid *iid, void **out);
	clr_hresult (*LockServer)(struct clr_factory *self, clr_bool lock);
};
struct clr_factory {
	const struct clr_factory_vtbl *vtbl;
};

/* The runtime's objects: only the slots the recorder calls are typed,
 * the others are placeholders (never called). */
typedef void (*clr_unused_slot)(void);

struct clr_object_enum;
struct clr_object_enum_vtbl {
	clr_hresult (*QueryInterface)(struct clr_object_enum *self,
				      const struct clr_guid *iid, void **out);
	clr_ulong (*AddRef)(struct clr_object_enum *self);
	clr_ulong (*Release)(struct clr_object_enum *self);
	clr_unused_slot Skip, Reset, Clone;                         /* 3-5 */
	clr_hresult (*GetCount)(struct clr_object_enum *self,        /* 6 */
				clr_ulong *count);
	clr_hresult (*Next)(struct clr_object_enum *self, clr_ulong n, /* 7 */
			    clr_uptr objects[], clr_ulong *fetched);
};
struct clr_object_enum {
	const struct clr_object_enum_vtbl *vtbl;
};

/* ObjectReferenceCallback of ICorProfilerInfo10::EnumerateObjectReferences */
typedef clr_bool (*clr_object_ref_fn)(clr_uptr object, clr_uptr *ref,
				      void *data);

/* StackSnapshotCallback of ICorProfilerInfo2::DoStackSnapshot: a frame's
 * FunctionID (0 for a run of native frames), its instruction pointer. */
typedef clr_hresult (*clr_stack_frame_fn)(clr_uptr function, clr_uptr ip,
					  clr_uptr frame_info,
					  uint32_t context_size,
					  uint8_t context[], void *data);

/* COR_PRF_EVENTPIPE_PROVIDER_CONFIG: a provider a profiler's own
 * EventPipe session listens to. */
struct clr_eventpipe_provider {
	const clr_wchar *name;
	uint64_t keywords;
	uint32_t level;
	const clr_wchar *filter;
};

/* COR_DEBUG_IL_TO_NATIVE_MAP: native code [start, end) of a method's
 * code, as offsets from its start, compiled from IL at il (or one of
 * CLR_IL_NO_MAPPING, CLR_IL_PROLOG, CLR_IL_EPILOG). */
struct clr_il_map {
	uint32_t il;
	uint32_t native_start, native_end;
};
enum {
	CLR_IL_NO_MAPPING = 0xffffffffu,
	CLR_IL_PROLOG = 0xfffffffeu,
	CLR_IL_EPILOG = 0xfffffffdu,
};
/* COR_PRF_CODE_INFO: one range of a method's native code. */
struct clr_code_range {
	clr_uptr start;
	clr_uptr size;
};

struct clr_info;
#define CLR_INFO struct clr_info *self
struct clr_info_vtbl {
	clr_hresult (*QueryInterface)(CLR_INFO, const struct clr_guid *iid,
				      void **out);
	clr_ulong (*AddRef)(CLR_INFO);
	clr_ulong (*Release)(CLR_INFO);
	/* ICorProfilerInfo: 3 */
	clr_hresult (*GetClassFromObject)(CLR_INFO, clr_uptr object,
					  clr_uptr *class_id);
	clr_hresult (*GetClassFromToken)(CLR_INFO, clr_uptr module,      /* 4 */
					 clr_token type_def,
					 clr_uptr *class_id);
	clr_unused_slot unused_5_6[2];
	clr_hresult (*GetFunctionFromIP)(CLR_INFO, clr_uptr ip,          /* 7 */
					 clr_uptr *function);
	clr_unused_slot unused_8_10[3];
	clr_hresult (*IsArrayClass)(CLR_INFO, clr_uptr class_id,        /* 11 */
				    uint32_t *elem_type, clr_uptr *elem_class,
				    clr_ulong *rank);
	clr_hresult (*GetThreadInfo)(CLR_INFO, clr_uptr thread,          /* 12 */
				     clr_ulong *os_thread);
	clr_hresult (*GetCurrentThreadID)(CLR_INFO, clr_uptr *thread); /* 13 */
	clr_unused_slot unused_14;
	clr_hresult (*GetFunctionInfo)(CLR_INFO, clr_uptr function,     /* 15 */
				       clr_uptr *class_id, clr_uptr *module,
				       clr_token *token);
	clr_hresult (*SetEventMask)(CLR_INFO, clr_ulong events);       /* 16 */
	clr_unused_slot unused_17_20[4];
	clr_hresult (*GetModuleMetaData)(CLR_INFO, clr_uptr module,     /* 21 */
					 clr_ulong open_flags,
					 const struct clr_guid *iid,
					 void **out);
	clr_unused_slot unused_22_27[6];
	clr_hresult (*ForceGC)(CLR_INFO);                              /* 28 */
	clr_unused_slot unused_29_35[7];
	/* ICorProfilerInfo2: 36 */
	clr_hresult (*DoStackSnapshot)(CLR_INFO, clr_uptr thread,       /* 36 */
				       clr_stack_frame_fn fn,
				       uint32_t info_flags, void *data,
				       uint8_t context[],
				       uint32_t context_size);
	clr_unused_slot unused_37_39[3];
	clr_hresult (*GetClassLayout)(CLR_INFO, clr_uptr class_id,      /* 40 */
				      struct clr_field_offset fields[],
				      clr_ulong n_max, clr_ulong *n,
				      clr_ulong *class_size);
	clr_hresult (*GetClassIDInfo2)(CLR_INFO, clr_uptr class_id,     /* 41 */
				       clr_uptr *module, clr_token *type_def,
				       clr_uptr *parent, clr_ulong n_max,
				       clr_ulong *n_args, clr_uptr args[]);
	clr_unused_slot unused_42_47[6];
	clr_hresult (*GetThreadAppDomain)(CLR_INFO, clr_uptr thread,    /* 48 */
					  clr_uptr *app_domain);
	clr_unused_slot unused_49;
	clr_hresult (*GetAppDomainStaticAddress)(CLR_INFO,              /* 50 */
						 clr_uptr class_id,
						 clr_token field,
						 clr_uptr app_domain,
						 void **address);
	clr_unused_slot unused_51_53[3];
	clr_hresult (*GetGenerationBounds)(CLR_INFO, clr_ulong n_max,   /* 54 */
					   clr_ulong *n,
					   struct clr_generation_range r[]);
	clr_unused_slot unused_55_57[3];
	/* ICorProfilerInfo3: 57 */
	clr_hresult (*RequestProfilerDetach)(CLR_INFO,                 /* 58 */
					     clr_ulong expected_ms);
	clr_unused_slot unused_59;
	clr_hresult (*GetStringLayout2)(CLR_INFO,                       /* 60 */
					clr_ulong *length_offset,
					clr_ulong *buffer_offset);
	clr_unused_slot unused_61_65[5];
	clr_hresult (*EnumModules)(CLR_INFO,                            /* 66 */
				   struct clr_object_enum **out);
	clr_hresult (*GetRuntimeInformation)(CLR_INFO,                  /* 67 */
					     uint16_t *instance,
					     int32_t *runtime_type,
					     uint16_t *major, uint16_t *minor,
					     uint16_t *build, uint16_t *qfe,
					     clr_ulong n_max, clr_ulong *n,
					     clr_wchar version[]);
	clr_unused_slot unused_68_69[2];
	clr_hresult (*GetModuleInfo2)(CLR_INFO, clr_uptr module,        /* 70 */
				      const uint8_t **base, clr_ulong n_max,
				      clr_ulong *n, clr_wchar name[],
				      clr_uptr *assembly, clr_ulong *flags);
	/* ICorProfilerInfo4: 71 */
	clr_hresult (*EnumThreads)(CLR_INFO,                            /* 71 */
				   struct clr_object_enum **out);
	clr_unused_slot unused_72_79[8];
	clr_hresult (*GetObjectSize2)(CLR_INFO, clr_uptr object,        /* 80 */
				      clr_uptr *size);
	/* ICorProfilerInfo5: 81 */
	clr_unused_slot GetEventMask2;                                 /* 81 */
	clr_hresult (*SetEventMask2)(CLR_INFO, clr_ulong low,           /* 82 */
				     clr_ulong high);
	clr_unused_slot unused_83_89[7];
	/* ICorProfilerInfo9: 90 */
	clr_hresult (*GetNativeCodeStartAddresses)(CLR_INFO,            /* 90 */
						   clr_uptr function,
						   clr_uptr rejit,
						   uint32_t n_max, uint32_t *n,
						   clr_uptr starts[]);
	clr_hresult (*GetILToNativeMapping3)(CLR_INFO, clr_uptr start,  /* 91 */
					     uint32_t n_max, uint32_t *n,
					     struct clr_il_map map[]);
	clr_hresult (*GetCodeInfo4)(CLR_INFO, clr_uptr start,           /* 92 */
				    uint32_t n_max, uint32_t *n,
				    struct clr_code_range ranges[]);
	/* ICorProfilerInfo10: 93 */
	clr_hresult (*EnumerateObjectReferences)(CLR_INFO, clr_uptr object,
						 clr_object_ref_fn fn,
						 void *data);
	clr_unused_slot unused_94_96[3];
	clr_hresult (*SuspendRuntime)(CLR_INFO);                        /* 97 */
	clr_hresult (*ResumeRuntime)(CLR_INFO);                         /* 98 */
	/* ICorProfilerInfo11: 99 */
	clr_unused_slot GetEnvironmentVariable;                        /* 99 */
	clr_hresult (*SetEnvironmentVariable)(CLR_INFO,                 /* 100 */
					      const clr_wchar *name,
					      const clr_wchar *value);
	/* ICorProfilerInfo12: 101 */
	clr_hresult (*EventPipeStartSession)(CLR_INFO,                  /* 101 */
			uint32_t n, const struct clr_eventpipe_provider *providers,
			clr_bool rundown, uint64_t *session);
	clr_unused_slot unused_102_110[9];
	/* ICorProfilerInfo14: 111 */
	clr_hresult (*EnumerateNonGCObjects)(CLR_INFO,                  /* 111 */
					     struct clr_object_enum **out);
};
#undef CLR_INFO
struct clr_info {
	const struct clr_info_vtbl *vtbl;
};

_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, GetClassFromToken) == 4,
	       "GetClassFromToken");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, EnumModules) == 66,
	       "EnumModules");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, RequestProfilerDetach) == 58,
	       "RequestProfilerDetach");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, GetStringLayout2) == 60,
	       "GetStringLayout2");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, GetThreadInfo) == 12,
	       "GetThreadInfo");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, GetCurrentThreadID) == 13,
	       "GetCurrentThreadID");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, ForceGC) == 28, "ForceGC");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, GetThreadAppDomain) == 48,
	       "GetThreadAppDomain");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl,
			   GetAppDomainStaticAddress) == 50,
	       "GetAppDomainStaticAddress");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, GetModuleInfo2) == 70,
	       "GetModuleInfo2");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, GetFunctionFromIP) == 7,
	       "GetFunctionFromIP");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, DoStackSnapshot) == 36,
	       "DoStackSnapshot");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, EnumThreads) == 71,
	       "EnumThreads");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, SuspendRuntime) == 97,
	       "SuspendRuntime");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, ResumeRuntime) == 98,
	       "ResumeRuntime");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, GetClassLayout) == 40,
	       "GetClassLayout");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, GetClassIDInfo2) == 41,
	       "GetClassIDInfo2");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, GetGenerationBounds) == 54,
	       "GetGenerationBounds");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, GetRuntimeInformation) == 67,
	       "GetRuntimeInformation");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, GetObjectSize2) == 80,
	       "GetObjectSize2");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, SetEventMask2) == 82,
	       "SetEventMask2");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl,
			   GetNativeCodeStartAddresses) == 90,
	       "GetNativeCodeStartAddresses");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, GetCodeInfo4) == 92,
	       "GetCodeInfo4");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl,
			   EnumerateObjectReferences) == 93,
	       "EnumerateObjectReferences");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, SetEnvironmentVariable) == 100,
	       "SetEnvironmentVariable");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, EventPipeStartSession) == 101,
	       "EventPipeStartSession");
_Static_assert(CLR_SLOT_OF(struct clr_info_vtbl, EnumerateNonGCObjects) == 111,
	       "EnumerateNonGCObjects");

/* IMetaDataImport (cor.h), from ICorProfilerInfo::GetModuleMetaData. */
struct clr_metadata;
#define CLR_MD struct clr_metadata *self
struct clr_metadata_vtbl {
	clr_hresult (*QueryInterface)(CLR_MD, const struct clr_guid *iid,
				      void **out);
	clr_ulong (*AddRef)(CLR_MD);
	clr_ulong (*Release)(CLR_MD);
	void (*CloseEnum)(CLR_MD, void *e);                            /* 3 */
	clr_unused_slot unused_4_8[5];
	clr_hresult (*FindTypeDefByName)(CLR_MD, const clr_wchar *name, /* 9 */
					 clr_token enclosing,
					 clr_token *type_def);
	clr_unused_slot unused_10_11[2];
	clr_hresult (*GetTypeDefProps)(CLR_MD, clr_token type_def,      /* 12 */
				       clr_wchar name[], clr_ulong n_max,
				       clr_ulong *n, clr_ulong *flags,
				       clr_token *extends);
	clr_unused_slot unused_13;
	clr_hresult (*GetTypeRefProps)(CLR_MD, clr_token type_ref,      /* 14 */
				       clr_token *scope, clr_wchar name[],
				       clr_ulong n_max, clr_ulong *n);
	clr_unused_slot unused_15_19[5];
	clr_hresult (*EnumFields)(CLR_MD, void **e, clr_token type_def, /* 20 */
				  clr_token fields[], clr_ulong n_max,
				  clr_ulong *n);
	clr_unused_slot unused_21_29[9];
	clr_hresult (*GetMethodProps)(CLR_MD, clr_token method,         /* 30 */
				      clr_token *type_def, clr_wchar name[],
				      clr_ulong n_max, clr_ulong *n,
				      clr_ulong *attributes,
				      const uint8_t **signature,
				      clr_ulong *signature_size,
				      clr_ulong *code_rva,
				      clr_ulong *impl_flags);
	clr_unused_slot unused_31_56[26];
	clr_hresult (*GetFieldProps)(CLR_MD, clr_token field,           /* 57 */
				     clr_token *type_def, clr_wchar name[],
				     clr_ulong n_max, clr_ulong *n,
				     clr_ulong *attributes,
				     const uint8_t **signature,
				     clr_ulong *signature_size,
				     clr_ulong *constant_type,
				     const void **constant,
				     clr_ulong *constant_size);
	clr_unused_slot unused_58_61[4];
	clr_hresult (*GetNestedClassProps)(CLR_MD, clr_token nested,    /* 62 */
					   clr_token *enclosing);
};
#undef CLR_MD
struct clr_metadata {
	const struct clr_metadata_vtbl *vtbl;
};

_Static_assert(CLR_SLOT_OF(struct clr_metadata_vtbl, FindTypeDefByName) == 9,
	       "FindTypeDefByName");
_Static_assert(CLR_SLOT_OF(struct clr_metadata_vtbl, GetTypeDefProps) == 12,
	       "GetTypeDefProps");
_Static_assert(CLR_SLOT_OF(struct clr_metadata_vtbl, CloseEnum) == 3,
	       "CloseEnum");
_Static_assert(CLR_SLOT_OF(struct clr_metadata_vtbl, GetTypeRefProps) == 14,
	       "GetTypeRefProps");
_Static_assert(CLR_SLOT_OF(struct clr_metadata_vtbl, EnumFields) == 20,
	       "EnumFields");
_Static_assert(CLR_SLOT_OF(struct clr_metadata_vtbl, GetMethodProps) == 30,
	       "GetMethodProps");
_Static_assert(CLR_SLOT_OF(struct clr_metadata_vtbl, GetFieldProps) == 57,
	       "GetFieldProps");
_Static_assert(CLR_SLOT_OF(struct clr_metadata_vtbl, GetNestedClassProps) == 62,
	       "GetNestedClassProps");

/* Interface ids. */
#define CLR_IID_IUNKNOWN \
	{0x00000000, 0x0000, 0x0000, {0xC0, 0, 0, 0, 0, 0, 0, 0x46}}
#define CLR_IID_ICLASSFACTORY \
	{0x00000001, 0x0000, 0x0000, {0xC0, 0, 0, 0, 0, 0, 0, 0x46}}
#define CLR_IID_CALLBACK \
	{0x176FBED1, 0xA55C, 0x4796, {0x98, 0xCA, 0xA9, 0xDA, 0x0E, 0xF8, 0x83, 0xE7}}
#define CLR_IID_CALLBACK2 \
	{0x8A8CC829, 0xCCF2, 0x49FE, {0xBB, 0xAE, 0x0F, 0x02, 0x22, 0x28, 0x07, 0x1A}}
#define CLR_IID_CALLBACK3 \
	{0x4FD2ED52, 0x7731, 0x4B8D, {0x94, 0x69, 0x03, 0xD2, 0xCC, 0x30, 0x86, 0xC5}}
#define CLR_IID_CALLBACK4 \
	{0x7B63B2E3, 0x107D, 0x4D48, {0xB2, 0xF6, 0xF6, 0x1E, 0x22, 0x94, 0x70, 0xD2}}
#define CLR_IID_CALLBACK5 \
	{0x8DFBA405, 0x8C9F, 0x45F8, {0xBF, 0xFA, 0x83, 0xB1, 0x4C, 0xEF, 0x78, 0xB5}}
#define CLR_IID_CALLBACK6 \
	{0xFC13DF4B, 0x4448, 0x4F4F, {0x95, 0x0C, 0xBA, 0x8D, 0x19, 0xD0, 0x0C, 0x36}}
#define CLR_IID_CALLBACK7 \
	{0xF76A2DBA, 0x1D52, 0x4539, {0x86, 0x6C, 0x2A, 0xA5, 0x18, 0xF9, 0xEF, 0xC3}}
#define CLR_IID_CALLBACK8 \
	{0x5BED9B15, 0xC079, 0x4D47, {0xBF, 0xE2, 0x21, 0x5A, 0x14, 0x0C, 0x07, 0xE0}}
#define CLR_IID_CALLBACK9 \
	{0x27583EC3, 0xC8F5, 0x482F, {0x80, 0x52, 0x19, 0x4B, 0x8C, 0xE4, 0x70, 0x5A}}
#define CLR_IID_CALLBACK10 \
	{0xCEC5B60E, 0xC69C, 0x495F, {0x87, 0xF6, 0x84, 0xD2, 0x8E, 0xE1, 0x6F, 0xFB}}
#define CLR_IID_CALLBACK11 \
	{0x42350846, 0xAAED, 0x47F7, {0xB1, 0x28, 0xFD, 0x0C, 0x98, 0x88, 0x1C, 0xDE}}
#define CLR_IID_INFO4 \
	{0x0D8FDCAA, 0x6257, 0x47BF, {0xB1, 0xBF, 0x94, 0xDA, 0xC8, 0x84, 0x66, 0xEE}}
#define CLR_IID_INFO5 \
	{0x07602928, 0xCE38, 0x4B83, {0x81, 0xE7, 0x74, 0xAD, 0xAF, 0x78, 0x12, 0x14}}
#define CLR_IID_INFO10 \
	{0x2F1B5152, 0xC869, 0x40C9, {0xAA, 0x5F, 0x3A, 0xBE, 0x02, 0x6B, 0xD7, 0x20}}
#define CLR_IID_INFO11 \
	{0x06398876, 0x8987, 0x4154, {0xB6, 0x21, 0x40, 0xA0, 0x0D, 0x6E, 0x4D, 0x04}}
#define CLR_IID_INFO14 \
	{0xF460E352, 0xD76D, 0x4FE9, {0x83, 0x5F, 0xF6, 0xAF, 0x9D, 0x6E, 0x86, 0x2D}}
#define CLR_IID_METADATA_IMPORT \
	{0x7DAC8207, 0xD3AE, 0x4C75, {0x9B, 0x67, 0x92, 0x80, 0x1A, 0x49, 0x7D, 0x44}}

/* COR_PRF_GC_ROOT_KIND of a stack root; CorElementType values. */
#define CLR_ROOT_STACK 1
#define CLR_OPEN_READ 0 /* ofRead */

#endif
