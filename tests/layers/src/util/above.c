/* above.c - util including a layer above it (check-layers.py's fixture). */
#include "lib/common/names.h"
#include "util/alloc.h"
#include <stdio.h>
