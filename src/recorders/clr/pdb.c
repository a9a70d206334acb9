/*
 * pdb.c - a reader of the portable PDB (pdb.h), as much of it as a
 * frame's line needs: the Document and MethodDebugInformation tables and
 * the sequence points of one method at a time.
 *
 * A portable PDB is ECMA-335 metadata of its own (the Portable PDB v1.0
 * specification): the "BSJB" root, streams #Pdb, #~ (the tables), #Blob,
 * #GUID, #Strings. The debugging tables are numbered from 0x30, so the
 * two read here come first in #~: Document (0x30) and
 * MethodDebugInformation (0x31), whose row n is MethodDef row n of the
 * assembly, with the method's document and its sequence points' blob.
 *
 * The file is the program's, not ours, and the reader runs in the
 * service being recorded: every offset and length is checked against
 * the bytes before it is followed, every loop is bounded by the bytes it
 * consumes, and what does not add up gives no line rather than a wrong
 * one or a crash.
 */
#include "recorders/clr/pdb.h"
#include "recorders/clr/names.h"
#include "util/le.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TABLE_DOCUMENT 0x30
#define TABLE_METHOD_DEBUG 0x31
#define TABLES 64
/* A hidden sequence point's line: code of no line of the source. */
#define HIDDEN_LINE 0xfeefee
/* Limits of the specification: lines and IL offsets below 2^29. */
#define VALUE_LIMIT 0x20000000
/* The PDB id: the GUID and the stamp the assembly's debug directory
 * names its PDB by. */
#define PDB_ID_LEN 20
/* The parts of a PE file (an assembly) read to find the id of its PDB:
 * the COFF header after the signature, a section header, the debug
 * directory (data directory 6) and its entries, of which the CodeView
 * one names the PDB. */
#define PE_COFF_LEN 24
#define PE_SECTION_LEN 40
#define PE_SECTIONS_MAX 96
#define PE_DEBUG_DIR 6
#define PE_DEBUG_ENTRY_LEN 28
#define PE_DEBUG_ENTRIES_MAX 16
#define PE_DEBUG_CODEVIEW 2

/* This struct is not an API; it may change from one release to the next. */
struct pdb {
	uint8_t *bytes;
	size_t len;
	const uint8_t *id;         /* the PDB id, PDB_ID_LEN bytes */
	const uint8_t *blob;       /* the #Blob heap */
	size_t blob_len;
	const uint8_t *documents;  /* Document rows */
	const uint8_t *methods;    /* MethodDebugInformation rows */
	uint32_t n_documents, n_methods;
	size_t document_row, method_row; /* bytes a row takes */
	unsigned blob_index, document_index; /* bytes an index takes */
};


static uint32_t index_at(const uint8_t *p, unsigned size)
{
	return size == 2 ? get_le16(p) : get_le32(p);
}

/* at + n within len, without overflow. */
static bool fits(size_t at, size_t n, size_t len)
{
	return at <= len && n <= len - at;
}

/* The streams the reader needs, from the metadata root. */
struct streams {
	const uint8_t *tables, *blob, *pdb;
	size_t tables_len, blob_len;
};

static bool read_root(const uint8_t *b, size_t len, struct streams *s)
{
	size_t at, version_len, n_streams;

	memset(s, 0, sizeof(*s));
	/* signature, versions, reserved, the version string's length */
	if (len < 16 || memcmp(b, "BSJB", 4) != 0)
		return false;
	version_len = get_le32(b + 12);
	if (version_len > 255 || !fits(16, version_len + 4, len))
		return false;
	at = 16 + version_len;
	n_streams = get_le16(b + at + 2); /* past the flags */
	at += 4;
	for (size_t i = 0; i < n_streams; i++) {
		size_t offset, size, name_len;
		const char *name;

		if (!fits(at, 8, len))
			return false;
		offset = get_le32(b + at);
		size = get_le32(b + at + 4);
		at += 8;
		name = (const char *)b + at;
		/* a name of at most 32 bytes, its NUL included, padded to 4 */
		name_len = strnlen(name, len - at < 32 ? len - at : 32);
		if (name_len == len - at || name_len == 32)
			return false;
		at += (name_len + 4) & ~(size_t)3;
		if (!fits(offset, size, len))
			return false;
		if (strcmp(name, "#~") == 0) {
			s->tables = b + offset;
			s->tables_len = size;
		} else if (strcmp(name, "#Blob") == 0) {
			s->blob = b + offset;
			s->blob_len = size;
		} else if (strcmp(name, "#Pdb") == 0 && size >= PDB_ID_LEN) {
			s->pdb = b + offset;
		}
	}
	/* a PDB's #Pdb stream tells it from an assembly's metadata */
	return s->tables && s->pdb;
}

/* The #~ stream's header and its first two tables. */
static bool read_tables(struct pdb *p, const uint8_t *t, size_t len)
{
	uint32_t rows[TABLES] = {0};
	uint64_t present;
	unsigned heaps, guid_index;
	size_t at = 24;

	if (len < 24)
		return false;
	heaps = t[6];
	present = (uint64_t)get_le32(t + 8) | (uint64_t)get_le32(t + 12) << 32;
	/* standalone debugging metadata holds the debugging tables alone:
	 * any table before them would need its row size to be skipped */
	if (present & ((1ULL << TABLE_DOCUMENT) - 1))
		return false;
	for (unsigned i = 0; i < TABLES; i++) {
		if (!(present & 1ULL << i))
			continue;
		if (!fits(at, 4, len))
			return false;
		rows[i] = get_le32(t + at);
		at += 4;
	}
	if (heaps & 0x40) /* extra data after the row counts */
		at += 4;
	p->blob_index = heaps & 0x04 ? 4 : 2;
	guid_index = heaps & 0x02 ? 4 : 2;
	p->n_documents = rows[TABLE_DOCUMENT];
	p->n_methods = rows[TABLE_METHOD_DEBUG];
	p->document_index = p->n_documents > 0xffff ? 4 : 2;
	/* Document: Name (blob), HashAlgorithm (guid), Hash (blob),
	 * Language (guid); MethodDebugInformation: Document, SequencePoints
	 * (blob) */
	p->document_row = 2 * (size_t)p->blob_index + 2 * (size_t)guid_index;
	p->method_row = (size_t)p->document_index + p->blob_index;
	if (!fits(at, (size_t)p->n_documents * p->document_row, len))
		return false;
	p->documents = t + at;
	at += (size_t)p->n_documents * p->document_row;
	if (!fits(at, (size_t)p->n_methods * p->method_row, len))
		return false;
	p->methods = t + at;
	return true;
}

struct pdb *pdb_from_bytes(uint8_t *bytes, size_t len)
{
	struct streams s;
	struct pdb *p;

	if (!bytes || !read_root(bytes, len, &s) || !(p = calloc(1, sizeof(*p)))) {
		free(bytes);
		return NULL;
	}
	p->bytes = bytes;
	p->len = len;
	p->id = s.pdb;
	p->blob = s.blob;
	p->blob_len = s.blob ? s.blob_len : 0;
	if (!read_tables(p, s.tables, s.tables_len)) {
		pdb_free(p);
		return NULL;
	}
	return p;
}

struct pdb *pdb_open(const char *path)
{
	struct stat st;
	uint8_t *bytes;
	size_t got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 ||
	    (uint64_t)st.st_size > PDB_FILE_MAX ||
	    !(bytes = malloc((size_t)st.st_size))) {
		close(fd);
		return NULL;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, bytes + got, (size_t)st.st_size - got);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	close(fd);
	return pdb_from_bytes(bytes, got);
}

void pdb_free(struct pdb *p)
{
	if (!p)
		return;
	free(p->bytes);
	free(p);
}

bool pdb_path_for(const char *assembly, char *out, size_t len)
{
	size_t n = strlen(assembly);

	if (n < 4 || (strcmp(assembly + n - 4, ".dll") != 0 &&
		      strcmp(assembly + n - 4, ".exe") != 0) ||
	    n + 1 > len)
		return false;
	memcpy(out, assembly, n - 4);
	memcpy(out + n - 4, ".pdb", 5);
	return true;
}

/* n bytes at off of fd; false when the file is shorter. */
static bool read_at(int fd, uint64_t off, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t k = pread(fd, (char *)buf + got, n - got,
				  (off_t)(off + got));

		if (k <= 0)
			return false;
		got += (size_t)k;
	}
	return true;
}

/* The file offset of an RVA of a PE file, from the section that holds
 * it in the file. */
static bool rva_offset(int fd, uint64_t sections, unsigned n_sections,
		       uint32_t rva, uint64_t *off)
{
	for (unsigned i = 0; i < n_sections; i++) {
		uint8_t h[PE_SECTION_LEN];
		uint32_t va, raw_size;

		if (!read_at(fd, sections + (uint64_t)PE_SECTION_LEN * i, h,
			     sizeof(h)))
			return false;
		va = get_le32(h + 12);
		raw_size = get_le32(h + 16);
		if (rva >= va && rva - va < raw_size) {
			*off = (uint64_t)get_le32(h + 20) + (rva - va);
			return true;
		}
	}
	return false;
}

/* The PE file's debug directory: its file offset and entries. */
static bool debug_directory(int fd, uint64_t *off, uint32_t *n)
{
	uint8_t h[64]; /* the DOS header, then the COFF header */
	uint64_t optional, sections, dirs;
	uint32_t pe, n_sections, optional_len, magic;

	if (!read_at(fd, 0, h, 64) || h[0] != 'M' || h[1] != 'Z')
		return false;
	pe = get_le32(h + 0x3c);
	if (!read_at(fd, pe, h, PE_COFF_LEN) || memcmp(h, "PE\0\0", 4) != 0)
		return false;
	n_sections = get_le16(h + 6);
	optional_len = get_le16(h + 20);
	optional = (uint64_t)pe + PE_COFF_LEN;
	sections = optional + optional_len;
	if (n_sections > PE_SECTIONS_MAX || !read_at(fd, optional, h, 2))
		return false;
	/* the data directories of PE32 and PE32+ */
	magic = get_le16(h);
	dirs = magic == 0x10b ? 96 : magic == 0x20b ? 112 : 0;
	if (!dirs || dirs + (PE_DEBUG_DIR + 1) * 8 > optional_len ||
	    !read_at(fd, optional + dirs - 4, h, 4) ||
	    get_le32(h) <= PE_DEBUG_DIR ||
	    !read_at(fd, optional + dirs + PE_DEBUG_DIR * 8, h, 8))
		return false;
	*n = get_le32(h + 4) / PE_DEBUG_ENTRY_LEN;
	return rva_offset(fd, sections, n_sections, get_le32(h), off);
}

bool pdb_matches(const struct pdb *p, const char *assembly)
{
	uint8_t entry[PE_DEBUG_ENTRY_LEN], codeview[20];
	uint64_t at;
	uint32_t n;
	bool match = false;
	int fd;

	if (!p || !p->id || (fd = open(assembly, O_RDONLY | O_CLOEXEC)) < 0)
		return false;
	if (debug_directory(fd, &at, &n)) {
		for (uint32_t i = 0; i < n && i < PE_DEBUG_ENTRIES_MAX; i++) {
			if (!read_at(fd, at + (uint64_t)PE_DEBUG_ENTRY_LEN * i,
				     entry, sizeof(entry)))
				break;
			/* a CodeView entry: "RSDS", the GUID, the age, the
			 * PDB's path; the entry's stamp is the id's rest */
			if (get_le32(entry + 12) != PE_DEBUG_CODEVIEW ||
			    !read_at(fd, get_le32(entry + 24), codeview,
				     sizeof(codeview)) ||
			    memcmp(codeview, "RSDS", 4) != 0)
				continue;
			if (memcmp(codeview + 4, p->id, 16) == 0 &&
			    memcmp(entry + 4, p->id + 16, 4) == 0) {
				match = true;
				break;
			}
		}
	}
	close(fd);
	return match;
}

/* The blob at index in the #Blob heap: its bytes and length; false when
 * it runs out of the heap. Index 0 is the empty blob. */
static bool blob_at(const struct pdb *p, uint32_t index, const uint8_t **at,
		    size_t *n)
{
	const uint8_t *s;
	int64_t len;

	if (index >= p->blob_len)
		return false;
	s = p->blob + index;
	len = clrn_compressed(&s, p->blob + p->blob_len);
	if (len < 0 || (size_t)len > (size_t)(p->blob + p->blob_len - s))
		return false;
	*at = s;
	*n = (size_t)len;
	return true;
}

/* The file name of document row doc: the last part of its name, a path
 * stored as parts joined by a separator (the specification's document
 * name blob). Control characters become '?'. */
static bool document_file(const struct pdb *p, uint32_t doc, char *file,
			  size_t len)
{
	char name[PDB_NAME_MAX];
	const uint8_t *b, *end, *part;
	size_t n, at = 0, base = 0, part_len;
	uint8_t separator;

	if (doc == 0 || doc > p->n_documents || len == 0)
		return false;
	if (!blob_at(p, index_at(p->documents + (size_t)(doc - 1) *
						    p->document_row,
				 p->blob_index),
		     &b, &n) || n == 0)
		return false;
	end = b + n;
	separator = *b++;
	for (bool first = true; b < end; first = false) {
		int64_t index = clrn_compressed(&b, end);

		if (index < 0 || index > UINT32_MAX ||
		    !blob_at(p, (uint32_t)index, &part, &part_len))
			return false;
		if (!first && separator) {
			if (at + 1 >= sizeof(name))
				return false;
			name[at++] = (char)separator;
		}
		if (part_len >= sizeof(name) - at)
			return false;
		memcpy(name + at, part, part_len);
		at += part_len;
	}
	for (size_t i = 0; i < at; i++)
		if (name[i] == '/' || name[i] == '\\')
			base = i + 1;
	if (base == at || at - base >= len)
		return false;
	for (size_t i = base; i < at; i++) {
		unsigned char c = (unsigned char)name[i];

		file[i - base] = c < 0x20 || c == 0x7f ? '?' : (char)c;
	}
	file[at - base] = '\0';
	return true;
}

/* Walks the sequence points of one method up to il: the last one at or
 * before it that is not hidden. */
static bool line_in_blob(const uint8_t *b, const uint8_t *end, uint32_t doc,
			 uint32_t il, uint32_t *line, uint32_t *document)
{
	int64_t v, start_line = 0, start_column = 0;
	uint64_t offset = 0;
	bool first = true, first_shown = true, found = false, ok;

	/* the header: the local signature, then the first document when
	 * the method spans several */
	if (clrn_compressed(&b, end) < 0)
		return false;
	if (doc == 0) {
		if ((v = clrn_compressed(&b, end)) < 0 || v > UINT32_MAX)
			return false;
		doc = (uint32_t)v;
	}
	while (b < end) {
		int64_t delta_il = clrn_compressed(&b, end), delta_lines;
		int64_t delta_columns;

		if (delta_il < 0)
			return false;
		if (delta_il == 0 && !first) {
			/* a document record: the points after it are there */
			if ((v = clrn_compressed(&b, end)) < 0 || v > UINT32_MAX)
				return false;
			doc = (uint32_t)v;
			continue;
		}
		offset += (uint64_t)delta_il;
		if (offset >= VALUE_LIMIT)
			return false;
		if (offset > il)
			break;
		first = false;
		if ((delta_lines = clrn_compressed(&b, end)) < 0)
			return false;
		if (delta_lines == 0) {
			delta_columns = clrn_compressed(&b, end);
			if (delta_columns < 0)
				return false;
		} else {
			clrn_compressed_signed(&b, end, &ok);
			if (!ok)
				return false;
			delta_columns = 1;
		}
		if (delta_lines == 0 && delta_columns == 0)
			continue; /* hidden: no line */
		if (first_shown) {
			start_line = clrn_compressed(&b, end);
			start_column = clrn_compressed(&b, end);
			if (start_line < 0 || start_column < 0)
				return false;
		} else {
			start_line += clrn_compressed_signed(&b, end, &ok);
			if (!ok)
				return false;
			start_column += clrn_compressed_signed(&b, end, &ok);
			if (!ok)
				return false;
		}
		first_shown = false;
		if (start_line < 0 || start_line >= VALUE_LIMIT ||
		    start_line == HIDDEN_LINE)
			return false;
		if (start_line == 0) {
			found = false; /* a point with no line to show */
			continue;
		}
		*line = (uint32_t)start_line;
		*document = doc;
		found = true;
	}
	return found;
}

bool pdb_line(const struct pdb *p, uint32_t row, uint32_t il,
	      uint32_t *line, uint32_t *document, char *file, size_t len)
{
	const uint8_t *r, *b;
	uint32_t doc;
	size_t n;

	if (!p || row == 0 || row > p->n_methods)
		return false;
	r = p->methods + (size_t)(row - 1) * p->method_row;
	doc = index_at(r, p->document_index);
	if (!blob_at(p, index_at(r + p->document_index, p->blob_index), &b,
		     &n) || n == 0)
		return false; /* no sequence points */
	if (!line_in_blob(b, b + n, doc, il, line, document))
		return false;
	return document_file(p, *document, file, len);
}
