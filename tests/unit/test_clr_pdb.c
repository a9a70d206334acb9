/*
 * test_clr_pdb.c - the portable PDB reader of the CLR recorder (pdb.c)
 * over a real PDB, testdata/clr/Lines.pdb, which the .NET SDK built from
 * testdata/clr/Lines.cs (with Lines.dll, the assembly it belongs to):
 * the line of every IL offset of its methods against the sequence points
 * .NET's own reader (System.Reflection.Metadata) lists for it, the match
 * of the PDB to its assembly, and the same PDB cut short
 * and with each byte changed, which must give no crash and no line out
 * of the file's.
 */
#include "recorders/clr/pdb.h"

#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Lines.pdb's sequence points as System.Reflection.Metadata lists them:
 * MethodDebugInformation row, IL offset, start line (0: hidden), the
 * document's file name. */
static const struct point {
	uint32_t row, il, line;
	const char *file;
} points[] = {
	{1, 0, 12, "Lines.cs"}, {1, 3, 13, "Lines.cs"}, {1, 5, 14, "Lines.cs"},
	{2, 0, 21, "Lines.cs"}, {2, 2, 22, "Lines.cs"}, {2, 4, 0, "Lines.cs"},
	{2, 6, 23, "Lines.cs"}, {2, 12, 22, "Lines.cs"},
	{2, 16, 22, "Lines.cs"}, {2, 20, 24, "Lines.cs"},
	{3, 0, 30, "Lines.cs"}, {3, 3, 500, "Generated.cs"},
	{3, 5, 34, "Lines.cs"},
	{4, 0, 40, "Lines.cs"}, {4, 25, 41, "Lines.cs"},
};
#define ROWS 4
#define IL_MAX 64

static uint8_t *read_lines_pdb(size_t *len)
{
	char path[4096];
	const char *dir = getenv("HT_TESTDATA");
	FILE *f;
	uint8_t *b;
	long n = 0;

	cr_assert(dir, "HT_TESTDATA is not set");
	snprintf(path, sizeof(path), "%s/clr/Lines.pdb", dir);
	f = fopen(path, "rb");
	cr_assert(f, "cannot open %s", path);
	cr_assert(fseek(f, 0, SEEK_END) == 0);
	n = ftell(f);
	cr_assert(n > 0);
	rewind(f);
	b = malloc((size_t)n);
	cr_assert(b);
	cr_assert(fread(b, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	*len = (size_t)n;
	return b;
}

/* What a debugger shows at il: the last point at or before it that is
 * not hidden; NULL when there is none. */
static const struct point *expected(uint32_t row, uint32_t il)
{
	const struct point *best = NULL;

	for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++)
		if (points[i].row == row && points[i].il <= il && points[i].line)
			best = &points[i];
	return best;
}

Test(clr_pdb, every_il_offset_has_the_line_of_its_sequence_point)
{
	size_t len;
	uint8_t *b = read_lines_pdb(&len);
	struct pdb *p = pdb_from_bytes(b, len);

	cr_assert(p, "Lines.pdb was not read");
	for (uint32_t row = 1; row <= ROWS; row++) {
		for (uint32_t il = 0; il < IL_MAX; il++) {
			const struct point *want = expected(row, il);
			char file[256];
			uint32_t line = 0, doc = 0;

			cr_assert(pdb_line(p, row, il, &line, &doc, file,
					   sizeof(file)),
				  "row %u il %u: no line", row, il);
			cr_assert_eq(line, want->line, "row %u il %u: line %u, not %u",
				     row, il, line, want->line);
			cr_assert_str_eq(file, want->file, "row %u il %u", row, il);
			cr_assert(doc >= 1);
		}
	}
	pdb_free(p);
}

Test(clr_pdb, rows_out_of_the_table_and_small_rooms_give_no_line)
{
	size_t len;
	uint8_t *b = read_lines_pdb(&len);
	struct pdb *p = pdb_from_bytes(b, len);
	char file[256], tiny[4];
	uint32_t line, doc;

	cr_assert(p);
	cr_assert_not(pdb_line(p, 0, 0, &line, &doc, file, sizeof(file)));
	cr_assert_not(pdb_line(p, ROWS + 1, 0, &line, &doc, file, sizeof(file)));
	cr_assert_not(pdb_line(p, 0xffffff, 0, &line, &doc, file, sizeof(file)));
	/* "Lines.cs" does not fit in 4 bytes: no name cut short */
	cr_assert_not(pdb_line(p, 1, 0, &line, &doc, tiny, sizeof(tiny)));
	cr_assert_not(pdb_line(NULL, 1, 0, &line, &doc, file, sizeof(file)));
	pdb_free(p);
}

Test(clr_pdb, what_is_no_portable_pdb_is_refused)
{
	static const char windows[] = "Microsoft C/C++ MSF 7.00\r\n\x1a" "DS";
	uint8_t *b = malloc(sizeof(windows));
	char path[64];

	cr_assert(b);
	memcpy(b, windows, sizeof(windows));
	cr_assert_null(pdb_from_bytes(b, sizeof(windows)));
	cr_assert_null(pdb_from_bytes(NULL, 0));
	cr_assert_null(pdb_open("/nonexistent/Lines.pdb"));
	cr_assert_null(pdb_open("/dev/null"));
	cr_assert(pdb_path_for("/app/Demo.dll", path, sizeof(path)));
	cr_assert_str_eq(path, "/app/Demo.pdb");
	cr_assert(pdb_path_for("Demo.exe", path, sizeof(path)));
	cr_assert_str_eq(path, "Demo.pdb");
	cr_assert_not(pdb_path_for("/app/Demo", path, sizeof(path)));
	cr_assert_not(pdb_path_for("/app/Demo.dll", path, 8));
}

Test(clr_pdb, the_pdb_matches_its_assembly_and_no_other)
{
	char pdb_path[4096], dll[4096], other[4096];
	const char *dir = getenv("HT_TESTDATA");
	struct pdb *p;
	size_t len;
	uint8_t *b;

	snprintf(pdb_path, sizeof(pdb_path), "%s/clr/Lines.pdb", dir);
	snprintf(dll, sizeof(dll), "%s/clr/Lines.dll", dir);
	snprintf(other, sizeof(other), "%s/hprof/knownheap.hprof", dir);
	p = pdb_open(pdb_path);
	cr_assert(p);
	cr_assert(pdb_matches(p, dll), "Lines.pdb is not Lines.dll's");
	cr_assert_not(pdb_matches(p, other));
	cr_assert_not(pdb_matches(p, "/nonexistent/Lines.dll"));
	pdb_free(p);
	/* the same PDB with another id (the first byte of its GUID: the
	 * #Pdb stream begins with it) is a stale one */
	b = read_lines_pdb(&len);
	for (size_t i = 0; i + 4 <= len; i++) {
		if (memcmp(b + i, "#Pdb", 4) == 0 && i >= 8) {
			uint32_t at = (uint32_t)b[i - 8] | (uint32_t)b[i - 7] << 8 |
				      (uint32_t)b[i - 6] << 16 |
				      (uint32_t)b[i - 5] << 24;

			cr_assert(at < len);
			b[at] ^= 0xff;
			break;
		}
	}
	p = pdb_from_bytes(b, len);
	cr_assert(p);
	cr_assert_not(pdb_matches(p, dll), "a PDB of another id matches");
	pdb_free(p);
}

Test(clr_pdb, the_file_itself_is_read)
{
	char path[4096];
	struct pdb *p;
	char file[256];
	uint32_t line = 0, doc = 0;

	snprintf(path, sizeof(path), "%s/clr/Lines.pdb", getenv("HT_TESTDATA"));
	p = pdb_open(path);
	cr_assert(p);
	cr_assert(pdb_line(p, 3, 3, &line, &doc, file, sizeof(file)));
	cr_assert_eq(line, 500);
	cr_assert_str_eq(file, "Generated.cs");
	pdb_free(p);
}

/* Every line a damaged PDB gives, if any, is a line, and its file name a
 * string of the room given. */
static void read_all(const uint8_t *bytes, size_t len)
{
	uint8_t *copy = malloc(len ? len : 1);
	struct pdb *p;

	cr_assert(copy);
	memcpy(copy, bytes, len);
	p = pdb_from_bytes(copy, len);
	for (uint32_t row = 0; p && row <= ROWS + 1; row++) {
		for (uint32_t il = 0; il < 32; il += 3) {
			char file[64];
			uint32_t line = 0, doc = 0;

			if (pdb_line(p, row, il, &line, &doc, file, sizeof(file))) {
				cr_assert(line > 0 && line < 0x20000000);
				cr_assert(strlen(file) > 0 && strlen(file) < sizeof(file));
			}
		}
	}
	pdb_free(p);
}

Test(clr_pdb, a_pdb_cut_short_never_crashes, .timeout = 120)
{
	size_t len;
	uint8_t *b = read_lines_pdb(&len);

	for (size_t cut = 0; cut < len; cut++)
		read_all(b, cut);
	free(b);
}

Test(clr_pdb, a_pdb_with_any_byte_changed_never_crashes, .timeout = 300)
{
	static const uint8_t changes[] = {0x01, 0x80, 0xff};
	size_t len;
	uint8_t *b = read_lines_pdb(&len);

	for (size_t at = 0; at < len; at++) {
		for (size_t c = 0; c < sizeof(changes); c++) {
			b[at] ^= changes[c];
			read_all(b, len);
			b[at] ^= changes[c];
		}
	}
	free(b);
}
