/*
 * record-attach-clr.c - `heaptrace record --pid PID` for a .NET (CoreCLR)
 * process: the CoreCLR profiler loaded into it through the runtime's
 * diagnostics IPC, which heaptrace speaks itself (no dotnet tool needed).
 *
 * Every CoreCLR process listens, unless its diagnostics are turned off
 * (DOTNET_EnableDiagnostics=0, or DOTNET_EnableDiagnostics_IPC=0), on the
 * Unix socket dotnet-diagnostic-PID-KEY-socket in its temporary directory
 * (its TMPDIR, else /tmp; KEY is the process's start time, which tells a
 * socket of this process from one a dead process of the same pid left).
 * A message is a header, the 14 bytes "DOTNET_IPC_V1\0", its whole size
 * (uint16), a command set and a command id (uint8 each) and two reserved
 * bytes, then its payload; integers little-endian. AttachProfiler
 * (command set 0x03, id 0x01) carries a timeout in milliseconds (uint32),
 * the profiler's CLSID (16 bytes), its path (a uint32 count of UTF-16
 * units, its NUL included, then the units) and client data (a uint32
 * length, then the bytes), which the runtime hands to the profiler's
 * InitializeForAttach. The runtime answers once the profiler's
 * InitializeForAttach has returned: command set 0xFF, id 0x00 (OK) or
 * 0xFF (error), and an HRESULT (uint32).
 *
 * The client data is the option string the profiler reads from
 * HEAPTRACE_CLR_OPTIONS at a start (rec_options_format), with
 * control=SOCKET: the profiler connects to heaptrace from
 * InitializeForAttach, before the runtime answers, and then everything
 * goes as for a JVM (record-attach.c).
 */
#include "cli/cli.h"
#include "cli/escape.h"
#include "cli/record.h"
#include "cli/record-attach.h"
#include "util/alloc.h"
#include "util/procfile.h"

#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define CLR_RECORDER "libheaptrace-clr.so"

/* ipc-protocol.md: the header, the profiler command set and its command,
 * the server's answers */
#define IPC_MAGIC "DOTNET_IPC_V1"  /* 14 bytes with its NUL */
#define IPC_HEADER 20
#define IPC_PROFILER 0x03
#define IPC_ATTACH_PROFILER 0x01
#define IPC_SERVER 0xFF
#define IPC_OK 0x00
#define IPC_ERROR 0xFF

/* How long the runtime gives the profiler's InitializeForAttach, and how
 * long heaptrace waits for the answer beyond it. */
#define ATTACH_TIMEOUT_MS 10000
#define ANSWER_MARGIN_MS 5000
/* how long the profiler has to connect once the runtime says it loaded */
#define CONNECT_TIMEOUT_MS 5000

/* The profiler's CLSID, any: the library answers to every one. */
static const uint8_t profiler_clsid[16] = {
	0x7e, 0x4b, 0x3f, 0x9d, 0x61, 0x2c, 0x8e, 0x4a,
	0xb5, 0xd0, 0x7e, 0x1a, 0x6c, 0x2f, 0x8b, 0x43,
};

/* ---- the process ------------------------------------------------------------ */

/* The value of the variable name in the process's environment, into
 * out[len]; false when it has none. */
static bool env_of(pid_t pid, const char *name, char *out, size_t len)
{
	char path[64], *buf;
	size_t n, k = strlen(name);
	bool found = false;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	buf = proc_file_read(path, &n);
	if (!buf)
		return false;
	for (char *p = buf; p < buf + n && !found; p += strlen(p) + 1)
		if (strncmp(p, name, k) == 0 && p[k] == '=') {
			snprintf(out, len, "%s", p + k + 1);
			found = true;
		}
	free(buf);
	return found;
}

/* The variable (of either prefix the runtime reads) that turns the
 * process's diagnostics IPC off, NULL when none does. */
static const char *diagnostics_off_by(pid_t pid)
{
	static const char *const vars[] = {
		"DOTNET_EnableDiagnostics", "COMPlus_EnableDiagnostics",
		"DOTNET_EnableDiagnostics_IPC", "COMPlus_EnableDiagnostics_IPC",
	};
	char value[64];

	for (size_t i = 0; i < ARRAY_SIZE(vars); i++)
		if (env_of(pid, vars[i], value, sizeof(value)) &&
		    strcmp(value, "0") == 0)
			return vars[i];
	return NULL;
}

/* The process's start time, field 22 of /proc/PID/stat (after the
 * command's name, which may hold spaces and parentheses); 0 when it
 * cannot be read. */
static unsigned long long start_time_of(pid_t pid)
{
	char path[64], *buf, *p;
	unsigned long long t = 0;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	buf = proc_file_read(path, &n);
	if (!buf)
		return 0;
	p = strrchr(buf, ')');
	/* ") S ppid ...": field 3 is the state; 22 is 19 fields on */
	for (int field = 2; p && field < 22; field++)
		p = strchr(p + 1, ' ');
	if (p)
		t = strtoull(p + 1, NULL, 10);
	free(buf);
	return t;
}

/* The process's diagnostics socket into out[len]: the one of its start
 * time, else the newest-looking of its pid. dir gets the folder looked
 * in. false when there is none. */
static bool find_socket(pid_t pid, char *out, size_t len, char *dir,
			size_t dir_len)
{
	char prefix[48], exact[96], best[256] = "";
	unsigned long long start = start_time_of(pid);
	struct dirent *e;
	DIR *d;

	if (!env_of(pid, "TMPDIR", dir, dir_len) || !*dir)
		snprintf(dir, dir_len, "/tmp");
	snprintf(prefix, sizeof(prefix), "dotnet-diagnostic-%d-", (int)pid);
	snprintf(exact, sizeof(exact), "%s%llu-socket", prefix, start);
	d = opendir(dir);
	if (!d)
		return false;
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, prefix, strlen(prefix)) != 0 ||
		    !has_suffix(e->d_name, "-socket"))
			continue;
		if (strcmp(e->d_name, exact) == 0 || !best[0] ||
		    strcmp(e->d_name, best) > 0)
			snprintf(best, sizeof(best), "%s", e->d_name);
		if (strcmp(e->d_name, exact) == 0)
			break;
	}
	closedir(d);
	if (!best[0])
		return false;
	return (size_t)snprintf(out, len, "%s%s%s", dir,
				has_suffix(dir, "/") ? "" : "/", best) < len;
}

int clr_check_target(pid_t pid, const char *name)
{
	const char *off = diagnostics_off_by(pid);
	char path[PATH_MAX], dir[PATH_MAX];

	if (off) {
		error_msg("cannot attach to process %d (%s): it runs with %s=0 "
			  "in its environment, which turns off the runtime's "
			  "diagnostics, through which the profiler is loaded; "
			  "start it without to record it with --pid, or record "
			  "it from its start (heaptrace record -- CMD)",
			  (int)pid, esc_text(name), off);
		return -1;
	}
	if (!find_socket(pid, path, sizeof(path), dir, sizeof(dir))) {
		error_msg("cannot attach to process %d (%s): it has no "
			  "diagnostics socket dotnet-diagnostic-%d-*-socket in "
			  "%s (its runtime's diagnostics are off, or it has not "
			  "started them yet)", (int)pid, esc_text(name),
			  (int)pid, esc_text(dir));
		return -1;
	}
	return 0;
}

/* ---- the AttachProfiler command -------------------------------------------- */

struct message {
	uint8_t *b;
	size_t len, cap;
};

static bool put(struct message *m, const void *p, size_t n)
{
	if (m->len + n > m->cap)
		return false;
	memcpy(m->b + m->len, p, n);
	m->len += n;
	return true;
}

static bool put_u32(struct message *m, uint32_t v)
{
	uint8_t le[4] = {(uint8_t)v, (uint8_t)(v >> 8), (uint8_t)(v >> 16),
			 (uint8_t)(v >> 24)};

	return put(m, le, 4);
}

static bool put_u16(struct message *m, uint16_t v)
{
	uint8_t le[2] = {(uint8_t)v, (uint8_t)(v >> 8)};

	return put(m, le, 2);
}

/* s (UTF-8) as UTF-16 units into out[max]: their count, or -1 when s is
 * not UTF-8 or does not fit. */
static long utf16_of(const char *s, uint16_t *out, size_t max)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t n = 0;

	while (*p) {
		uint32_t c;
		int more;

		if (*p < 0x80)
			c = *p, more = 0;
		else if ((*p & 0xE0) == 0xC0)
			c = *p & 0x1F, more = 1;
		else if ((*p & 0xF0) == 0xE0)
			c = *p & 0x0F, more = 2;
		else if ((*p & 0xF8) == 0xF0)
			c = *p & 0x07, more = 3;
		else
			return -1;
		p++;
		for (; more; more--, p++) {
			if ((*p & 0xC0) != 0x80)
				return -1;
			c = c << 6 | (*p & 0x3F);
		}
		if (c >= 0x10000) {
			if (n + 2 > max)
				return -1;
			c -= 0x10000;
			out[n++] = (uint16_t)(0xD800 | c >> 10);
			out[n++] = (uint16_t)(0xDC00 | (c & 0x3FF));
		} else {
			if (n + 1 > max)
				return -1;
			out[n++] = (uint16_t)c;
		}
	}
	return (long)n;
}

/* The whole AttachProfiler message into m; false when it does not fit a
 * message (64 KiB). */
static bool attach_message(struct message *m, const char *profiler,
			   const char *options)
{
	uint16_t units[PATH_MAX];
	long n = utf16_of(profiler, units, ARRAY_SIZE(units) - 1);
	size_t data = strlen(options);
	bool fits;

	if (n < 0)
		return false;
	units[n++] = 0;
	fits = put(m, IPC_MAGIC, sizeof(IPC_MAGIC)) &&
	       put_u16(m, 0) /* the size, below */ &&
	       put(m, (uint8_t[]){IPC_PROFILER, IPC_ATTACH_PROFILER}, 2) &&
	       put_u16(m, 0) && put_u32(m, ATTACH_TIMEOUT_MS) &&
	       put(m, profiler_clsid, sizeof(profiler_clsid)) &&
	       put_u32(m, (uint32_t)n);
	for (long i = 0; fits && i < n; i++)
		fits = put_u16(m, units[i]);
	fits = fits && put_u32(m, (uint32_t)data) && put(m, options, data) &&
	       m->len <= UINT16_MAX;
	if (fits) {
		m->b[14] = (uint8_t)m->len;
		m->b[15] = (uint8_t)(m->len >> 8);
	}
	return fits;
}

/* Reads n bytes within the deadline (ms_left shrinks); false at the end
 * of the stream or the deadline. */
static bool read_exactly(int fd, uint8_t *buf, size_t n, int *ms_left)
{
	size_t got = 0;

	while (got < n) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		struct timespec t0, t1;
		ssize_t r;
		int rc;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		rc = poll(&p, 1, *ms_left);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		*ms_left -= (int)((t1.tv_sec - t0.tv_sec) * 1000 +
				  (t1.tv_nsec - t0.tv_nsec) / 1000000);
		if (*ms_left < 0)
			*ms_left = 0;
		if (rc < 0 && errno == EINTR)
			continue;
		if (rc <= 0)
			return false;
		r = recv(fd, buf + got, n - got, 0);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return false;
		got += (size_t)r;
	}
	return true;
}

/* What an HRESULT of the answer means, for the message. */
static const char *hresult_meaning(uint32_t hr)
{
	switch (hr) {
	case 0x8013136Au: /* CORPROF_E_PROFILER_ALREADY_ACTIVE */
		return "a profiler is loaded in it already (heaptrace's or "
		       "another tool's): the runtime takes one at a time";
	case 0x80131385u: /* DS_IPC_E_UNKNOWN_COMMAND */
	case 0x80131515u: /* DS_IPC_E_NOTSUPPORTED */
		return "its runtime does not attach profilers";
	case 0x80131371u: /* DS_IPC_E_RUNTIME_UNINITIALIZED */
		return "its runtime has not finished starting";
	case 0x80131384u: /* DS_IPC_E_BAD_ENCODING */
		return "its runtime did not understand heaptrace's request";
	case 0x80004005u: /* E_FAIL: InitializeForAttach failed */
		return "the profiler did not start (its message, if any, is "
		       "above)";
	default:
		return "the runtime refused";
	}
}

/* Sends the command on the process's socket and reads the answer: 0 with
 * *hr set, or -1 after saying why there is none. */
static int send_attach(pid_t pid, const char *socket_path,
		       const struct message *m, uint32_t *hr)
{
	struct sockaddr_un addr;
	uint8_t head[IPC_HEADER], payload[4];
	int fd, ms_left = ATTACH_TIMEOUT_MS + ANSWER_MARGIN_MS;
	size_t size;

	memset(&addr, 0, sizeof(addr));
	addr.sun_family = AF_UNIX;
	if (strlen(socket_path) >= sizeof(addr.sun_path)) {
		error_msg("cannot attach to process %d: its socket's path %s "
			  "is too long", (int)pid, esc_text(socket_path));
		return -1;
	}
	memcpy(addr.sun_path, socket_path, strlen(socket_path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		error_msg("cannot attach to process %d: cannot connect to its "
			  "diagnostics socket %s: %s", (int)pid,
			  esc_text(socket_path), strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (send(fd, m->b, m->len, MSG_NOSIGNAL) != (ssize_t)m->len) {
		error_msg("cannot attach to process %d: cannot send to its "
			  "diagnostics socket: %s", (int)pid, strerror(errno));
		close(fd);
		return -1;
	}
	if (!read_exactly(fd, head, sizeof(head), &ms_left)) {
		error_msg("cannot attach to process %d: its runtime did not "
			  "answer within %d seconds", (int)pid,
			  (ATTACH_TIMEOUT_MS + ANSWER_MARGIN_MS) / 1000);
		close(fd);
		return -1;
	}
	size = (size_t)head[14] | (size_t)head[15] << 8;
	if (memcmp(head, IPC_MAGIC, sizeof(IPC_MAGIC)) != 0 ||
	    head[16] != IPC_SERVER || size < IPC_HEADER + 4 ||
	    !read_exactly(fd, payload, sizeof(payload), &ms_left)) {
		error_msg("cannot attach to process %d: its runtime's answer "
			  "is not one of the diagnostics IPC", (int)pid);
		close(fd);
		return -1;
	}
	close(fd);
	*hr = (uint32_t)payload[0] | (uint32_t)payload[1] << 8 |
	      (uint32_t)payload[2] << 16 | (uint32_t)payload[3] << 24;
	/* an OK answer carries the profiler's HRESULT, an error one the
	 * server's */
	if (head[17] != IPC_OK && *hr == 0)
		*hr = 0x80004005u;
	return 0;
}

int clr_load_profiler(pid_t pid, const struct record_options *o,
		      struct control *ctl)
{
	char profiler[PATH_MAX], socket_path[PATH_MAX], dir[PATH_MAX];
	struct rec_request r = {
		.dump_on = o->dump_on, .every = o->every, .values = o->values,
		.control = ctl->path, .report_fd = -1, .output = o->output,
	};
	struct message m = {.cap = UINT16_MAX};
	struct ht_error err;
	char *options;
	uint32_t hr = 0;
	bool fits;

	if (find_recorder("clr", CLR_RECORDER, profiler, sizeof(profiler),
			  &err) < 0) {
		error_msg("cannot record .NET: %s", err.message);
		return -1;
	}
	if (!find_socket(pid, socket_path, sizeof(socket_path), dir,
			 sizeof(dir))) {
		error_msg("cannot attach to process %d: its diagnostics "
			  "socket is gone", (int)pid);
		return -1;
	}
	options = rec_options_format(&r);
	m.b = malloc(m.cap);
	if (!options || !m.b) {
		free(options);
		free(m.b);
		error_msg("out of memory");
		return -1;
	}
	fits = attach_message(&m, profiler, options);
	free(options);
	if (!fits) {
		free(m.b);
		error_msg("cannot attach: the profiler's and the trace's paths "
			  "do not fit a diagnostics message");
		return -1;
	}
	if (send_attach(pid, socket_path, &m, &hr) < 0) {
		free(m.b);
		return -1;
	}
	free(m.b);
	/* what the profiler said, if it got as far as connecting */
	if (control_accept(ctl, hr == 0 ? CONNECT_TIMEOUT_MS : 0) == 0) {
		control_unlink(ctl);
		if (hr == 0)
			return 0;
		while (control_read(ctl))
			;
	}
	if (hr == 0)
		error_msg("the profiler loaded into process %d but did not "
			  "connect", (int)pid);
	else
		error_msg("cannot attach to process %d: %s (HRESULT 0x%08x)",
			  (int)pid, hresult_meaning(hr), (unsigned)hr);
	return -1;
}
