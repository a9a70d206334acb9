/* test_protocol.c - placeholder, being written. */
#include <criterion/criterion.h>
