/* binary_source.c - placeholder, being written. */
#include "source.h"
#include "error.h"
int binary_source_open(struct ht_reader *r, FILE *f, const char *path,
		       struct ht_error *err)
{
	(void)r;
	fclose(f);
	err_plain(err, HT_E_FORMAT, path, ".ht reading not written yet");
	return -1;
}
