/*
 * Rehash - a Java program whose HashMap resizes between two heap dumps, for
 * the test of `heaptrace diff` across a rehash (rehash-test.sh).
 *
 *   java --add-opens java.base/java.util=ALL-UNNAMED -cp DIR Rehash N MORE
 *
 * puts N entries into the HashMap held by the static field Rehash.map
 * (keys "key-0" ... , values Long objects out of the JVM's cache of small
 * ones), runs System.gc(), prints "ready capacity C" (C: the length of the
 * map's table) and waits for a line on standard input; then puts MORE
 * entries, which for the sizes the test uses pass the map's threshold so
 * that it resizes and moves its entries to other slots, prints
 * "ready capacity C" again and waits for a second line. It prints "done"
 * last.
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.reflect.Field;
import java.util.HashMap;

public class Rehash {
	static HashMap<String, Long> map = new HashMap<>();

	/* Entries first..end - 1; each value is a new Long (none of the
	 * cached -128..127), so each put adds a node, a key, its bytes and a
	 * value. */
	static void put(int first, int end) {
		for (int i = first; i < end; i++)
			map.put("key-" + i, Long.valueOf(1000L + i));
	}

	/* The length of the map's table, read through reflection (hence
	 * --add-opens): the test checks that it doubled. */
	static int capacity() throws ReflectiveOperationException {
		Field table = HashMap.class.getDeclaredField("table");

		table.setAccessible(true);
		Object[] t = (Object[]) table.get(map);
		return t == null ? 0 : t.length;
	}

	static void pause(BufferedReader in) throws Exception {
		System.gc();
		System.out.println("ready capacity " + capacity());
		System.out.flush();
		in.readLine();
	}

	public static void main(String[] args) throws Exception {
		int n = Integer.parseInt(args[0]);
		int more = Integer.parseInt(args[1]);
		BufferedReader in = new BufferedReader(
			new InputStreamReader(System.in));

		/* the reflection's own objects before the first dump, so that
		 * the second finds them there already */
		capacity();
		put(0, n);
		pause(in);
		put(n, n + more);
		pause(in);
		System.out.println("done " + map.size());
	}
}
