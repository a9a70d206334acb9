/*
 * KnownHeap - a Java program whose heap the tests know exactly, for the
 * recorder (JVMTI agent) and HPROF tests.
 *
 *   java -cp DIR KnownHeap N DEPTH LEAVES GARBAGE
 *
 * builds, and keeps alive until a line arrives on standard input:
 *   - a list of exactly N KnownHeap$Node objects held by the static field
 *     KnownHeap.head (node i has value i; the tail's next is null);
 *   - a complete binary tree of 2^DEPTH - 1 KnownHeap$TreeNode objects held
 *     only by a local variable of main; each of the 2^(DEPTH-1) bottom
 *     nodes points to KnownHeap$Leaf number (i % LEAVES);
 *   - exactly LEAVES KnownHeap$Leaf objects, all held by the static array
 *     KnownHeap.sharedLeaves (so the tree shares them: it does not retain
 *     them); each leaf's label (a field of its superclass
 *     KnownHeap$Labelled) is the one String "leaf", and the leaves
 *     implement the interface KnownHeap$Tagged, whose static field TAGS
 *     holds a String[] (so that the JVMTI field indexes of Leaf's fields
 *     start after an interface's and a superclass's fields);
 *   - GARBAGE KnownHeap$Garbage objects allocated and dropped (none is
 *     reachable once a GC has run).
 * Then it runs System.gc(), prints "ready" and waits: a test takes its heap
 * dump or class histogram at that paused point, then writes a line to let
 * it exit. It prints "done" last.
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.ref.Reference;

public class KnownHeap {
	static final class Node {
		Node next;
		long value;
	}

	static final class TreeNode {
		TreeNode left;
		TreeNode right;
		Leaf leaf;
	}

	interface Tagged {
		String[] TAGS = { "known" };
	}

	static class Labelled {
		String label;
	}

	static final class Leaf extends Labelled implements Tagged {
		int id;
	}

	static final class Garbage {
		long a;
		long b;
	}

	static Node head;
	static Leaf[] sharedLeaves;
	static int bottomIndex;

	static Node buildList(int n) {
		Node first = null;
		Node last = null;
		for (int i = 0; i < n; i++) {
			Node x = new Node();
			x.value = i;
			if (last == null)
				first = x;
			else
				last.next = x;
			last = x;
		}
		return first;
	}

	/* Iterative in spirit would be longer; the depth is small. */
	static TreeNode buildTree(int depth) {
		TreeNode t = new TreeNode();
		if (depth == 1) {
			t.leaf = sharedLeaves[bottomIndex++ % sharedLeaves.length];
			return t;
		}
		t.left = buildTree(depth - 1);
		t.right = buildTree(depth - 1);
		return t;
	}

	static long makeGarbage(int n) {
		long sum = 0;
		for (int i = 0; i < n; i++) {
			Garbage g = new Garbage();
			g.a = i;
			sum += g.a;
		}
		return sum;
	}

	public static void main(String[] args) throws Exception {
		int n = Integer.parseInt(args[0]);
		int depth = Integer.parseInt(args[1]);
		int leaves = Integer.parseInt(args[2]);
		int garbage = Integer.parseInt(args[3]);

		sharedLeaves = new Leaf[leaves];
		for (int i = 0; i < leaves; i++) {
			sharedLeaves[i] = new Leaf();
			sharedLeaves[i].id = i;
			sharedLeaves[i].label = "leaf";
		}
		/* initializes Tagged, which Leaf's initialization does not */
		long sum = Tagged.TAGS.length;
		head = buildList(n);
		TreeNode root = buildTree(depth);
		sum += makeGarbage(garbage);
		System.gc();
		System.out.println("ready");
		System.out.flush();
		new BufferedReader(new InputStreamReader(System.in)).readLine();
		Reference.reachabilityFence(root);
		System.out.println("done " + (sum > 0 ? "" : "-"));
	}
}
