/*
 * KnownHeap - a C# program whose heap the tests know exactly, for the
 * Mono recorder's tests (the twin of tests/runtimes/java/KnownHeap.java).
 *
 *   mono KnownHeap.exe N DEPTH LEAVES GARBAGE [EXIT [PAUSE]]
 *
 * builds, and keeps alive until the process exits:
 *   - a list of exactly N KnownHeap.Node objects held by the static field
 *     KnownHeap.head (node i has value i; the tail's next is null). The
 *     link, next, is a field Node inherits from KnownHeap.Link, which has
 *     no object of its own: a field is its declaring class's;
 *   - a complete binary tree of 2^DEPTH - 1 KnownHeap.TreeNode objects
 *     held only by a local variable of Main; each of the 2^(DEPTH-1)
 *     bottom nodes points to KnownHeap.Leaf number (i % LEAVES);
 *   - exactly LEAVES KnownHeap.Leaf objects, all held by the static array
 *     KnownHeap.sharedLeaves (so the tree shares them: it does not retain
 *     them);
 *   - one boxed KnownHeap.Pair (a struct of two leaves), one
 *     KnownHeap.Holder with a Pair embedded and a third leaf, and one
 *     KnownHeap.Box<KnownHeap.Leaf> (a field of its type parameter), each
 *     held by a static field, for the fields of references;
 *   - one KnownHeap.Texts held by the static field texts, whose fields
 *     hold strings the tests know (--values): made at run time from N,
 *     Latin-1 and not, short and longer than the 128 units a trace keeps
 *     whole, and a literal;
 *   - GARBAGE KnownHeap.Garbage objects allocated and dropped. They are
 *     made on a thread of their own that has ended before any dump: Mono
 *     scans stacks conservatively, and a stale pointer left on the main
 *     thread's stack would keep one alive. They fill the nursery, so the
 *     list and the leaves are promoted (moved) by minor collections.
 * Then it runs GC.Collect(), prints "ready", sleeps PAUSE milliseconds
 * (default 0: a test may ask for a dump meanwhile), and exits with status
 * EXIT (default 0) through Environment.Exit while the tree is still held,
 * so that a dump taken at exit sees the same heap as at GC.Collect().
 */
using System;
using System.Text;
using System.Threading;

public class KnownHeap {
	class Link {
		public Node next;
	}

	sealed class Node : Link {
		public long value;
	}

	sealed class TreeNode {
		public TreeNode left;
		public TreeNode right;
		public Leaf leaf;
	}

	sealed class Leaf {
		public int id;
	}

	sealed class Garbage {
		public long a;
		public long b;
	}

	/* shapes of reference fields: a struct of two references, boxed (held
	 * by the static boxed) and embedded in a Holder (held by holder), and
	 * a generic class whose field's type is its parameter */
	struct Pair {
		public Leaf a;
		public long n;
		public Leaf b;
	}

	sealed class Holder {
		public Pair inner;
		public Leaf tail;
	}

	sealed class Box<T> {
		public T value;
	}

	sealed class Texts {
		public string Latin, Wide, Long, WideLong;
		public string Literal = "a literal, never collected";

		public Texts(int n) {
			Latin = "caf\u00e9 au lait " + n;
			Wide = "Gr\u00fc\u00dfe aus \u6771\u4eac " + n + " \u2713";
			Long = new StringBuilder().Insert(0, "0123456789", 30)
				.ToString() + n;
			WideLong = new string('\u03bb', 200) + n;
		}
	}

	static Node head;
	static Leaf[] sharedLeaves;
	static object boxed;
	static Holder holder;
	static Box<Leaf> box;
	static Texts texts;
	static int bottomIndex;
	static long garbageSum;

	static Node BuildList(int n) {
		Node first = null, last = null;
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

	static TreeNode BuildTree(int depth) {
		TreeNode t = new TreeNode();
		if (depth == 1) {
			t.leaf = sharedLeaves[bottomIndex++ % sharedLeaves.Length];
			return t;
		}
		t.left = BuildTree(depth - 1);
		t.right = BuildTree(depth - 1);
		return t;
	}

	static void MakeGarbage(int n) {
		long sum = 0;
		for (int i = 0; i < n; i++) {
			Garbage g = new Garbage();
			g.a = i;
			g.b = sum;
			sum += g.a;
		}
		garbageSum = sum;
	}

	/* Keeps the tree on this frame while the runtime shuts down. */
	static void Finish(TreeNode root, int code, int pause) {
		if (pause > 0)
			Thread.Sleep(pause);
		Environment.Exit(code);
		GC.KeepAlive(root);
	}

	public static void Main(string[] args) {
		int n = int.Parse(args[0]);
		int depth = int.Parse(args[1]);
		int leaves = int.Parse(args[2]);
		int garbage = int.Parse(args[3]);
		int code = args.Length > 4 ? int.Parse(args[4]) : 0;
		int pause = args.Length > 5 ? int.Parse(args[5]) : 0;

		sharedLeaves = new Leaf[leaves];
		for (int i = 0; i < leaves; i++) {
			sharedLeaves[i] = new Leaf();
			sharedLeaves[i].id = i;
		}
		Pair pair = new Pair { a = sharedLeaves[0], n = leaves,
				       b = sharedLeaves[leaves - 1] };
		boxed = pair;
		holder = new Holder { inner = pair, tail = sharedLeaves[0] };
		box = new Box<Leaf> { value = sharedLeaves[0] };
		head = BuildList(n);
		texts = new Texts(n);
		TreeNode root = BuildTree(depth);
		Thread t = new Thread(() => MakeGarbage(garbage));
		t.Start();
		t.Join();
		GC.Collect();
		GC.KeepAlive(boxed);
		GC.KeepAlive(holder);
		GC.KeepAlive(box);
		GC.KeepAlive(texts);
		Console.WriteLine("ready " + head.value + " " + garbageSum);
		Console.Out.Flush();
		Finish(root, code, pause);
	}
}
