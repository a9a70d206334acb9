/*
 * DumpPoints - a Java program with points where a benchmark takes heap
 * dumps, so that two dumpers can be compared at the same moments
 * (bench-java-dumps.sh).
 *
 *   java -cp DIR DumpPoints POINTS NODES GARBAGE
 *
 * POINTS times: adds NODES DumpPoints$Node objects to a list it keeps
 * (each with a 16-byte payload array of its own: two objects per node),
 * allocates and drops GARBAGE DumpPoints$Scrap objects, prints "point I"
 * and waits for a line on standard input, while the benchmark dumps the
 * heap. So the heap grows by the same amount from dump to dump, and the
 * collections in between have garbage to collect. Prints "done" last.
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;

public class DumpPoints {
	static final class Node {
		Node next;
		long value;
		byte[] payload = new byte[16];
	}

	static final class Scrap {
		long a;
		Object b;
	}

	static Node head;
	static long sink;

	public static void main(String[] args) throws Exception {
		int points = Integer.parseInt(args[0]);
		int nodes = Integer.parseInt(args[1]);
		int garbage = Integer.parseInt(args[2]);
		BufferedReader in =
			new BufferedReader(new InputStreamReader(System.in));

		for (int p = 0; p < points; p++) {
			for (int i = 0; i < nodes; i++) {
				Node x = new Node();
				x.value = i;
				x.next = head;
				head = x;
			}
			for (int i = 0; i < garbage; i++) {
				Scrap s = new Scrap();
				s.a = i;
				sink += s.a;
			}
			System.out.println("point " + p);
			System.out.flush();
			if (in.readLine() == null)
				break;
		}
		System.out.println("done " + (sink > 0 ? "" : "-"));
	}
}
