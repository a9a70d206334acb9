/*
 * RefLevels - a heap whose big parts are held less than strongly, for
 * heaptrace's reachability levels (levels-test.sh): a cache of
 * SoftReferences, a WeakHashMap whose keys nothing else holds, an object
 * only a PhantomReference reaches and one only its finalizer keeps, next
 * to a strongly held block. Each part's payload has a size of its own, so
 * the test can tell them apart by class and bytes.
 *
 *   java RefLevels
 *
 * Prints "ready" once built and waits for a line on standard input (the
 * test dumps the heap then; no GC must run before, or the JVM clears the
 * weak referents: the test runs it with a young generation big enough).
 */
import java.lang.ref.PhantomReference;
import java.lang.ref.ReferenceQueue;
import java.lang.ref.SoftReference;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.WeakHashMap;

public class RefLevels {
	static final int SOFT = 40, WEAK = 30;

	/* what a SoftReference holds: 40 of them, 100 000 bytes each */
	static final class Cached {
		final byte[] data = new byte[100_000];
	}

	/* a WeakHashMap key: 30 of them, 50 000 bytes each */
	static final class Key {
		final byte[] data = new byte[50_000];
	}

	/* only a PhantomReference reaches it */
	static final class Haunt {
		final byte[] data = new byte[30_000];
	}

	/* only the finalizer's queue keeps it (HotSpot registers only the
	 * objects whose finalize() does something) */
	static final class Doomed {
		static int finalized;
		final byte[] data = new byte[20_000];

		@SuppressWarnings("removal")
		@Override
		protected void finalize() {
			finalized++;
		}
	}

	/* held strongly from a static field */
	static final class Kept {
		final byte[] data = new byte[200_000];
	}

	static List<SoftReference<Cached>> cache = new ArrayList<>();
	static Map<Key, byte[]> weakMap = new WeakHashMap<>();
	static ReferenceQueue<Haunt> queue = new ReferenceQueue<>();
	static PhantomReference<Haunt> phantom;
	static WeakReference<Kept> weakToKept;
	static Kept kept = new Kept();

	public static void main(String[] args) throws Exception {
		for (int i = 0; i < SOFT; i++)
			cache.add(new SoftReference<>(new Cached()));
		for (int i = 0; i < WEAK; i++)
			weakMap.put(new Key(), new byte[1_000]);
		phantom = new PhantomReference<>(new Haunt(), queue);
		new Doomed();
		/* a weak reference to what is strongly held changes nothing */
		weakToKept = new WeakReference<>(kept);
		System.out.println("ready");
		System.out.flush();
		System.in.read();
		System.out.println(cache.size() + weakMap.size());
	}
}
