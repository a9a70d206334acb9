/* test_replay.c - placeholder, being written. */
#include <criterion/criterion.h>
