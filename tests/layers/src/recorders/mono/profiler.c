/* profiler.c - a recorder including the reading API, another recorder's
 * room and lib/common, beside what it may include (check-layers.py's
 * fixture). */
#include <heaptrace/record.h>
#include <heaptrace/trace.h>
#include <mono/metadata/profiler.h>
#include "recorders/core/guard.h"
#include "recorders/core/options.h"
#include "recorders/jvm/agent.h"
#include "lib/common/names.h"
#include "lib/record/writer.h"
#include "util/alloc.h"
