/* record-mono.c - the command including a recorder's room, beside what it
 * may include (check-layers.py's fixture). */
#include <heaptrace/trace.h>
#include "recorders/core/options.h"
#include "recorders/mono/rootmap.h"
#include "lib/read/reader.h"
