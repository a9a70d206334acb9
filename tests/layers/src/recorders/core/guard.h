/* guard.h - what the recorders share (check-layers.py's fixture). */
#include <heaptrace/record.h>
#include "util/alloc.h"
