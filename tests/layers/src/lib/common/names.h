/* names.h - a header of lib/common (check-layers.py's fixture). */
#include "util/alloc.h"
