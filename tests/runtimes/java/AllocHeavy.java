// AllocHeavy.java - an allocation-heavy program for sites-bench.sh: it
// makes small objects of a few sizes and classes at several sites, keeps
// the last KEEP of them in a ring (so that some survive young GCs), and
// prints a checksum so that the JIT cannot leave the work out.
//
// usage: java AllocHeavy ROUNDS KEEP
// Five objects a round (a byte array, a Node, a String and its array, an
// int array), some 230 bytes in all.
public class AllocHeavy {
	static final class Node {
		final long value;
		final Node next;

		Node(long value, Node next) {
			this.value = value;
			this.next = next;
		}
	}

	public static void main(String[] args) {
		long rounds = Long.parseLong(args[0]);
		int keep = Integer.parseInt(args[1]);
		Object[] ring = new Object[keep];
		long sum = 0;
		Node last = null;

		for (long i = 0; i < rounds; i++) {
			int slot = (int) (i % keep);
			byte[] b = new byte[16 + (int) (i & 127)];
			b[0] = (byte) i;
			last = new Node(i, (i & 7) == 0 ? null : last);
			String s = Long.toString(i);
			int[] a = new int[4 + (int) (i & 15)];
			a[0] = s.length();
			ring[slot] = (i & 1) == 0 ? b : a;
			sum += b[0] + a[0] + last.value;
		}
		System.out.println("sum " + sum + " " + (ring[0] != null));
	}
}
