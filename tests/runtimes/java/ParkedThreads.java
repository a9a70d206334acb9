/*
 * ParkedThreads - threads parked at known methods, at known lines, with
 * known locals, for `heaptrace threads` (threads-test.sh).
 *
 * usage: java ParkedThreads BIG SMALL CHUNKS
 *
 * Starts "parked-1" and "parked-2", each of which calls outer -> middle
 * -> hold and parks in hold: outer's local `parts` holds an Object[CHUNKS]
 * of byte[1000] arrays, middle holds no object, hold's local `data` holds
 * a byte[BIG] (parked-1) or byte[SMALL] (parked-2). Once both are parked
 * it prints "ready" and waits for a line on standard input (the test
 * dumps the heap then), unparks them and prints "done". The lines the
 * frames stand at are marked "@outer", "@middle" and "@hold" below, where
 * check-threads.py finds them.
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.util.concurrent.locks.LockSupport;

public class ParkedThreads {
	static volatile boolean stop;
	static volatile long sink;

	public static void main(String[] args) throws Exception {
		int big = Integer.parseInt(args[0]);
		int small = Integer.parseInt(args[1]);
		int chunks = Integer.parseInt(args[2]);
		Thread a = start("parked-1", big, chunks);
		Thread b = start("parked-2", small, chunks);

		waitParked(a);
		waitParked(b);
		System.out.println("ready");
		System.out.flush();
		new BufferedReader(new InputStreamReader(System.in)).readLine();
		stop = true;
		LockSupport.unpark(a);
		LockSupport.unpark(b);
		a.join();
		b.join();
		System.out.println("done");
	}

	static Thread start(String name, int bytes, int chunks) {
		Thread t = new Thread(() -> outer(bytes, chunks), name);

		t.start();
		return t;
	}

	/* WAITING is LockSupport.park's state: the thread is in hold's loop */
	static void waitParked(Thread t) throws InterruptedException {
		while (t.getState() != Thread.State.WAITING)
			Thread.sleep(10);
	}

	static void outer(int bytes, int chunks) {
		Object[] parts = new Object[chunks];

		for (int i = 0; i < chunks; i++)
			parts[i] = new byte[1000];
		middle(bytes); // @outer
		sink += parts.length;
	}

	static void middle(int bytes) {
		hold(bytes); // @middle
	}

	static void hold(int bytes) {
		byte[] data = new byte[bytes];

		while (!stop)
			LockSupport.park(); // @hold
		sink += data.length;
	}
}
