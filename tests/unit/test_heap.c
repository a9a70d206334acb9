/* test_heap.c - placeholder, being written. */
#include <criterion/criterion.h>
