/* test_dominators.c - placeholder, being written. */
#include <criterion/criterion.h>
