/* test_damage.c - placeholder, being written. */
#include <criterion/criterion.h>
