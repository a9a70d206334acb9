/*
 * attach.c - the agent attached to a running JVM (heaptrace record --pid):
 * its end of the control socket to heaptrace, whose protocol and the
 * code both recorders share are in recorders/core/control.h. The agent
 * connects while it is being loaded (Agent_OnAttach); its thread, a JVMTI
 * agent thread so that it can take dumps, serves heaptrace's requests and
 * ends the recording ("at detach") when heaptrace's side closes.
 *
 * The socket is shut down, not closed, so that no other thread can find
 * its descriptor reused: it is closed when the agent is attached again
 * (its reader gone by then), or when the JVM exits.
 */
#include "recorders/jvm/agent.h"
#include "recorders/core/control.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

int control_connect(struct agent *ag)
{
	int fd = control_channel_connect(ag->opt.control);

	if (fd < 0) {
		say("cannot reach heaptrace at %s: %s", ag->opt.control,
			   strerror(errno));
		return -1;
	}
	atomic_store(&ag->control, fd);
	return 0;
}

void control_report(struct agent *ag, const char *message)
{
	int fd = atomic_load(&ag->control);

	if (ag->attached && fd >= 0)
		control_channel_say(fd, message);
}

void control_refuse(const char *path, const char *message)
{
	control_channel_refuse(path, message);
}

void control_close(struct agent *ag)
{
	int fd = atomic_load(&ag->control);

	if (fd >= 0)
		shutdown(fd, SHUT_RDWR);
}

struct dump_request {
	struct agent *ag;
	JNIEnv *jni;
};

static void dump_requested(void *arg)
{
	struct dump_request *r = arg;

	agent_take_dump(r->ag, r->jni, "requested");
}

/* What heaptrace asks, until the end of the stream. */
static void JNICALL control_main(jvmtiEnv *jv, JNIEnv *jni, void *arg)
{
	struct dump_request r = {.ag = arg, .jni = jni};

	(void)jv;
	control_channel_serve(atomic_load(&r.ag->control), dump_requested, &r);
	agent_finish(r.ag, jni, "at detach");
	atomic_store(&r.ag->control_running, false);
}

int control_start(struct agent *ag, JNIEnv *jni)
{
	if (atomic_load(&ag->control) < 0)
		return 0;
	atomic_store(&ag->control_running, true);
	if (agent_thread(ag, jni, "heaptrace control", control_main, ag) < 0) {
		atomic_store(&ag->control_running, false);
		say("cannot start the agent's control thread");
		return -1;
	}
	return 0;
}
