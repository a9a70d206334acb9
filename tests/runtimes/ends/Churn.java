// Churn.java - a GC-heavy program that ends in each of the ways
// `heaptrace record` must cope with (ends-test.sh); Churn.cs for Java.
//
// usage: java Churn MODE SECONDS [VARIABLE|-Dproperty...]
//   churn  allocates for SECONDS, then exits 0
//   throw  allocates for SECONDS, then throws an exception nothing catches
//   wait   allocates for SECONDS, prints "ready", then sleeps until a
//          signal ends it
// Each VARIABLE is printed first, as "NAME=value" ("NAME unset"), and each
// -Dproperty as "-Dproperty=value": what the program was given.
public class Churn {
	static final class Node {
		Node next;
		byte[] payload;
	}

	static final int RING = 20000;
	static final Node[] kept = new Node[RING];

	static void allocate(double seconds) {
		long end = System.nanoTime() + (long) (seconds * 1e9);
		long i = 0;
		while (System.nanoTime() < end) {
			Node n = new Node();
			n.payload = new byte[32 + (int) (i % 200)];
			n.next = new Node();
			if (i % 7 == 0)
				kept[(int) (i % RING)] = n;
			i++;
		}
	}

	public static void main(String[] args) throws Exception {
		String mode = args[0];
		for (int k = 2; k < args.length; k++) {
			String v = args[k].startsWith("-D")
				? System.getProperty(args[k].substring(2))
				: System.getenv(args[k]);
			System.out.println(v == null ? args[k] + " unset" : args[k] + "=" + v);
		}
		allocate(Double.parseDouble(args[1]));
		switch (mode) {
		case "churn":
			return;
		case "throw":
			throw new IllegalStateException("Churn: unhandled on purpose");
		case "wait":
			System.out.println("ready");
			System.out.flush();
			Thread.sleep(Long.MAX_VALUE);
			return;
		default:
			System.err.println("Churn: unknown mode " + mode);
			System.exit(2);
		}
	}
}
