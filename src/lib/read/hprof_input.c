/*
 * hprof_input.c - where the HPROF reader's bytes come from, and how its
 * records are framed (hprof_internal.h): the file as handed over, a
 * pipe's copy, a gzipped dump's inflated copy; the read buffer the passes
 * read through by offset; the file header; the names and fixed lengths
 * of records and sub-records.
 *
 * Both passes jump back, so every input is a file that pread can reach:
 * a pipe is first copied to a temporary file, a gzip inflated into one.
 */
#include "lib/read/hprof_internal.h"

#include "lib/read/forms.h"
#include "util/alloc.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

/* ---- Record framing ---------------------------------------------------- */

const char *hprof_record_name(unsigned tag)
{
	switch (tag) {
	case R_UTF8: return "UTF8";
	case R_LOAD_CLASS: return "LOAD_CLASS";
	case R_UNLOAD_CLASS: return "UNLOAD_CLASS";
	case R_FRAME: return "FRAME";
	case R_TRACE: return "TRACE";
	case R_ALLOC_SITES: return "ALLOC_SITES";
	case R_HEAP_SUMMARY: return "HEAP_SUMMARY";
	case R_START_THREAD: return "START_THREAD";
	case R_END_THREAD: return "END_THREAD";
	case R_HEAP_DUMP: return "HEAP_DUMP";
	case R_CPU_SAMPLES: return "CPU_SAMPLES";
	case R_CONTROL_SETTINGS: return "CONTROL_SETTINGS";
	case R_HEAP_DUMP_SEGMENT: return "HEAP_DUMP_SEGMENT";
	case R_HEAP_DUMP_END: return "HEAP_DUMP_END";
	default: return NULL;
	}
}

const char *hprof_sub_name(unsigned tag)
{
	switch (tag) {
	case S_ROOT_UNKNOWN: return "ROOT_UNKNOWN";
	case S_ROOT_JNI_GLOBAL: return "ROOT_JNI_GLOBAL";
	case S_ROOT_JNI_LOCAL: return "ROOT_JNI_LOCAL";
	case S_ROOT_JAVA_FRAME: return "ROOT_JAVA_FRAME";
	case S_ROOT_NATIVE_STACK: return "ROOT_NATIVE_STACK";
	case S_ROOT_STICKY_CLASS: return "ROOT_STICKY_CLASS";
	case S_ROOT_THREAD_BLOCK: return "ROOT_THREAD_BLOCK";
	case S_ROOT_MONITOR_USED: return "ROOT_MONITOR_USED";
	case S_ROOT_THREAD_OBJECT: return "ROOT_THREAD_OBJECT";
	case S_CLASS_DUMP: return "CLASS_DUMP";
	case S_INSTANCE_DUMP: return "INSTANCE_DUMP";
	case S_OBJ_ARRAY_DUMP: return "OBJ_ARRAY_DUMP";
	case S_PRIM_ARRAY_DUMP: return "PRIM_ARRAY_DUMP";
	default: return NULL;
	}
}

/* "a" or "an" before a record's name, as the name is read out: "an
 * INSTANCE_DUMP", "an UNLOAD_CLASS", but "a UTF8". */
const char *hprof_article(const char *name)
{
	bool vowel = name[0] && strchr("AEIO", name[0]);

	return vowel || strncmp(name, "UN", 2) == 0 ? "an" : "a";
}

/* Bytes after the tag of a root sub-record, 0 for other tags. */
unsigned hprof_root_body_size(unsigned tag, unsigned id)
{
	switch (tag) {
	case S_ROOT_UNKNOWN:
	case S_ROOT_STICKY_CLASS:
	case S_ROOT_MONITOR_USED:
		return id;
	case S_ROOT_JNI_GLOBAL:
		return 2 * id;
	case S_ROOT_JNI_LOCAL:
	case S_ROOT_JAVA_FRAME:
	case S_ROOT_THREAD_OBJECT:
		return id + 8;
	case S_ROOT_NATIVE_STACK:
	case S_ROOT_THREAD_BLOCK:
		return id + 4;
	default:
		return 0;
	}
}

/* The exact length of a fixed-size record, 0 for one of any length, or -1
 * for a tag HPROF does not define. */
int64_t hprof_fixed_length(unsigned tag, unsigned id)
{
	switch (tag) {
	case R_LOAD_CLASS: return 8 + 2 * id;
	case R_UNLOAD_CLASS: return 4;
	case R_FRAME: return 8 + 4 * id;
	case R_START_THREAD: return 8 + 4 * id;
	case R_END_THREAD: return 4;
	case R_HEAP_DUMP_END: return 0;
	case R_UTF8:
	case R_TRACE:
	case R_ALLOC_SITES:
	case R_HEAP_SUMMARY:
	case R_CPU_SAMPLES:
	case R_CONTROL_SETTINGS:
	case R_HEAP_DUMP:
	case R_HEAP_DUMP_SEGMENT:
		return 0;
	default:
		return -1;
	}
}

/* ---- Reading ----------------------------------------------------------- */

/* Reads into the buffer from off: at least n bytes unless the file ends
 * or reading fails. */
const uint8_t *hprof_in_fill(struct input *in, uint64_t off, size_t n)
{
	size_t want = n > READ_SIZE ? n : READ_SIZE;
	size_t got = 0;

	in->io_errno = 0;
	in->shrank = false;
	if (off > in->size || n > in->size - off)
		return NULL;
	if (want > in->size - off)
		want = (size_t)(in->size - off);
	if (want > in->cap) {
		if (mem_budget_charge(want - in->cap) < 0) {
			in->io_errno = ENOMEM;
			return NULL;
		}
		if (RESIZE_ARRAY(in->buf, want) < 0) {
			mem_budget_release(want - in->cap);
			in->io_errno = ENOMEM;
			return NULL;
		}
		in->cap = want;
	}
	while (got < want) {
		ssize_t r = pread(in->fd, in->buf + got, want - got,
				  in->base + (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			in->io_errno = errno;
			break;
		}
		if (r == 0)
			break;
		got += (size_t)r;
	}
	in->buf_at = off;
	in->buf_len = got;
	if (got < n) {
		if (!in->io_errno) {
			in->io_errno = EIO;
			in->shrank = true;
		}
		return NULL;
	}
	return in->buf;
}

/* The cause to give when the input did not give what was asked of it:
 * memory ran out, a read failed, or the file is no longer what the first
 * pass saw: it shrank, or (no read having failed) its bytes no longer add
 * up. A disk's EIO is a failed read, not a change. */
enum ht_error_code hprof_read_failure(const struct input *in, char *cause,
				       size_t size)
{
	if (in->io_errno == ENOMEM) {
		snprintf(cause, size, "%s", hprof_nomem_cause());
		return HT_E_NOMEM;
	}
	if (in->io_errno && !in->shrank)
		snprintf(cause, size, "cannot read: %s", strerror(in->io_errno));
	else
		snprintf(cause, size, "the file changed while it was read");
	return HT_E_IO;
}

/* ---- Opening ----------------------------------------------------------- */

/* A pipe is copied to a temporary file: the dump is read twice. */
static int spool(struct hprof_source *s, struct ht_error *err)
{
	char buf[1 << 16];
	size_t n;
	uint64_t total = 0;

	s->spool = tmpfile();
	if (!s->spool) {
		err_sys(err, errno, s->path, "cannot make a temporary copy");
		return -1;
	}
	while ((n = fread(buf, 1, sizeof(buf), s->f)) > 0) {
		if (fwrite(buf, 1, n, s->spool) != n) {
			err_sys(err, errno, s->path,
				"cannot make a temporary copy");
			return -1;
		}
		total += n;
	}
	if (ferror(s->f)) {
		err_sys(err, errno ? errno : EIO, s->path, "cannot read");
		return -1;
	}
	if (fflush(s->spool) != 0) {
		err_sys(err, errno, s->path, "cannot make a temporary copy");
		return -1;
	}
	s->in.fd = fileno(s->spool);
	s->in.base = 0;
	s->in.size = total;
	return 0;
}

int hprof_attach_input(struct hprof_source *s, struct ht_error *err)
{
	struct stat st;
	off_t at = ftello(s->f);

	if (fstat(fileno(s->f), &st) != 0 || !S_ISREG(st.st_mode) || at < 0)
		return spool(s, err);
	s->in.fd = fileno(s->f);
	s->in.base = at;
	s->in.size = st.st_size > at ? (uint64_t)(st.st_size - at) : 0;
	return 0;
}

int hprof_read_file_header(struct hprof_source *s, struct ht_error *err)
{
	size_t have = s->in.size < FILE_HEADER_LEN ? (size_t)s->in.size
						   : FILE_HEADER_LEN;
	size_t prefix = strlen(MAGIC_PREFIX);
	const uint8_t *p = in_at(&s->in, 0, have);

	if (!p && s->in.io_errno == ENOMEM) {
		err_plain(err, HT_E_NOMEM, s->path, "%s", hprof_nomem_cause());
		return -1;
	}
	if (!p) {
		err_sys(err, s->in.io_errno ? s->in.io_errno : EIO, s->path,
			"cannot read");
		return -1;
	}
	if (memcmp(p, MAGIC_PREFIX, have < prefix ? have : prefix) != 0) {
		err_plain(err, HT_E_FORMAT, s->path, HT_NOT_A_TRACE);
		return -1;
	}
	if (have < FILE_HEADER_LEN) {
		err_at_offset(err, HT_E_TRUNCATED, s->path, 0,
			      "file ends inside the HPROF header (%zu of %d "
			      "bytes)", have, FILE_HEADER_LEN);
		return -1;
	}
	if ((memcmp(p + prefix, "1.0.1", 6) != 0 &&
	     memcmp(p + prefix, "1.0.2", 6) != 0)) {
		err_at_offset(err, HT_E_FORMAT, s->path, prefix,
			      "HPROF version \"%.5s\" is not supported (1.0.1 "
			      "and 1.0.2 are)", (const char *)p + prefix);
		return -1;
	}
	memcpy(s->version, p + prefix, 6);
	s->id_size = be32(p + MAGIC_LEN);
	if (s->id_size != 4 && s->id_size != 8) {
		err_at_offset(err, HT_E_FORMAT, s->path, MAGIC_LEN,
			      "identifier size %u (HPROF ids of 4 or 8 bytes "
			      "are supported)", s->id_size);
		return -1;
	}
	s->timestamp_ms = be64(p + MAGIC_LEN + 4);
	return 0;
}

/*
 * Inflates a gzipped dump once, into a temporary file that every pass then
 * reads as a plain dump. The passes jump back (the event pass reads the
 * records a dump's objects refer to), and a backward seek in a gzip stream
 * inflates again from its start: read through zlib, a 12 MB gzip of a
 * 44 MB dump took minutes where the plain dump takes a second. A gzip cut
 * short ends the HPROF there, and the index pass says where that falls;
 * damaged compressed data is refused at open, as nothing past it can be
 * read. The copy costs the dump's size on the temporary directory's disk.
 */
static int inflate_gzip(struct hprof_source *s, gzFile gz,
			struct ht_error *err)
{
	unsigned char buf[1 << 16];
	uint64_t total = 0;
	const char *msg, *colon;
	int r, zerr;

	s->inflated = tmpfile();
	if (!s->inflated) {
		err_sys(err, errno, s->path, "cannot make a temporary copy");
		return -1;
	}
	while ((r = gzread(gz, buf, sizeof(buf))) > 0) {
		if (fwrite(buf, 1, (size_t)r, s->inflated) != (size_t)r) {
			err_sys(err, errno, s->path,
				"cannot make a temporary copy");
			return -1;
		}
		total += (uint64_t)r;
	}
	msg = gzerror(gz, &zerr);
	if (gzdirect(gz)) {
		err_plain(err, HT_E_FORMAT, s->path, HT_NOT_A_TRACE);
		return -1;
	}
	if (zerr == Z_MEM_ERROR) {
		err_plain(err, HT_E_NOMEM, s->path, "%s", hprof_nomem_cause());
		return -1;
	}
	if (zerr == Z_ERRNO) {
		err_sys(err, errno ? errno : EIO, s->path, "cannot read");
		return -1;
	}
	if (zerr != Z_OK && zerr != Z_BUF_ERROR) {
		/* zlib's message starts with the name it knows, "<fd:N>: " */
		colon = strstr(msg, ": ");
		err_at_offset(err, HT_E_CORRUPT, s->path, total,
			      "damaged gzip data (%s)", colon ? colon + 2 : msg);
		return -1;
	}
	if (fflush(s->inflated) != 0) {
		err_sys(err, errno, s->path, "cannot make a temporary copy");
		return -1;
	}
	s->in.fd = fileno(s->inflated);
	s->in.base = 0;
	s->in.size = total;
	s->in.gz_cut = zerr == Z_BUF_ERROR;
	return 0;
}

/* Puts zlib between the file and the copy, on a descriptor of its own
 * that starts where the gzip does. */
int hprof_attach_gzip(struct hprof_source *s, struct ht_error *err)
{
	int fd = dup(s->in.fd), rc;
	gzFile gz;

	if (fd < 0 || lseek(fd, s->in.base, SEEK_SET) < 0) {
		err_sys(err, errno, s->path, "cannot read");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	gz = gzdopen(fd, "rb");
	if (!gz) {
		close(fd);
		err_plain(err, HT_E_NOMEM, s->path, "%s", hprof_nomem_cause());
		return -1;
	}
	rc = inflate_gzip(s, gz, err);
	gzclose_r(gz);
	return rc;
}

/* A gzipped file that is not an HPROF dump is refused in words of its
 * own: "not a trace" would send the user looking at the wrong bytes. One
 * that starts as a dump goes on to read_file_header, which says where a
 * cut one ends. */
int hprof_check_gzipped(struct hprof_source *s, struct ht_error *err)
{
	size_t prefix = strlen(MAGIC_PREFIX);
	size_t have = s->in.size < prefix ? (size_t)s->in.size : prefix;
	const uint8_t *p = have ? in_at(&s->in, 0, have) : NULL;

	if (have && (!p || memcmp(p, MAGIC_PREFIX, have) == 0))
		return 0;
	if (!have && s->in.gz_cut)
		err_at_offset(err, HT_E_TRUNCATED, s->path, 0,
			      "the gzip data ends before the first byte of "
			      "what it holds");
	else if (!have)
		err_plain(err, HT_E_FORMAT, s->path,
			  "a gzipped empty file: not a trace");
	else
		err_plain(err, HT_E_FORMAT, s->path,
			  "gzipped, but not an HPROF heap dump: only a Java "
			  "heap dump is read gzipped");
	return -1;
}
