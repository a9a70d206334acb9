/*
 * KnownHeap - a C# program whose heap the CoreCLR recorder's tests know
 * exactly (the twin of tests/runtimes/mono/KnownHeap.cs and
 * tests/runtimes/java/KnownHeap.java, with the CLR's own kinds of roots).
 *
 *   dotnet KnownHeap.dll N DEPTH LEAVES GARBAGE [EXIT [wait]]
 *
 * Every role has a type of its own, so that a dump's count of each type is
 * known exactly. It builds, and keeps alive until the process exits:
 *   - a list of N KnownHeap.ListNode held by the static Program.head, each
 *     node owning one KnownHeap.ListPayload (so the head retains exactly
 *     the N nodes and the N payloads); the link, next, is a field ListNode
 *     inherits from KnownHeap.ListLink, which has no object of its own;
 *   - a complete binary tree of 2^DEPTH - 1 KnownHeap.TreeNode held only by
 *     a local variable of Main; each of the 2^(DEPTH-1) bottom nodes points
 *     to KnownHeap.Leaf number (i % LEAVES);
 *   - LEAVES KnownHeap.Leaf, all held by the static array Program.leaves
 *     (a KnownHeap.Leaf[]), so that the tree shares them and does not
 *     retain them;
 *   - one KnownHeap.PinnedItem[] pinned by a GCHandle (Pinned), and one
 *     KnownHeap.PohItem[] on the pinned object heap;
 *   - one KnownHeap.WeakKept held by a static and by a WeakReference; one
 *     KnownHeap.WeakOnly held only by a WeakReference (dead after a full
 *     GC);
 *   - a ConditionalWeakTable entry KnownHeap.CwtKey -> KnownHeap.CwtValue
 *     whose key a static holds, and one KnownHeap.CwtDeadKey ->
 *     KnownHeap.CwtDeadValue whose key nothing holds (both dead after a
 *     full GC: a dependent handle keeps its value only while its key lives);
 *   - one KnownHeap.Tracked held by the static Program.tracked, allocated
 *     first, whose address and generation the program samples after every
 *     collection and prints (a test compares them with what the trace says
 *     of its moves and promotions);
 *   - GARBAGE KnownHeap.Garbage allocated and dropped; a ring of the last
 *     1024 of them stays reachable meanwhile, so that some survive gen0
 *     collections and fill gen1 until gen1 collections come too (with a
 *     small gen0 budget: DOTNET_GCgen0size). The ring is dropped before the
 *     full GC.
 * It prints first
 *
 *   runtime VERSION workstation|server
 *
 * then builds all that, runs a blocking compacting GC.Collect() and prints
 *
 *   tracked GEN0 GEN1 GEN2 ADDRESS GENERATION   (one line per sample)
 *   ready PID GEN0 GEN1 GEN2
 *
 * (the collection counts at that point), and with "wait" reads one line of
 * standard input first, a point where a test takes its heap dump (for
 * instance with dotnet-gcdump). Last it prints one more sample of Tracked
 * and
 *
 *   done GEN0 GEN1 GEN2 PAUSE_MS
 *
 * (the counts then and GC.GetTotalPauseDuration()) and exits with status
 * EXIT (default 0) through Environment.Exit while the tree is still held,
 * so that a dump taken at exit sees the same heap.
 */
using System;
using System.Collections.Generic;
using System.Runtime;
using System.Runtime.CompilerServices;
using System.Runtime.InteropServices;
using System.Threading;

namespace KnownHeap {

class ListLink {
	public ListNode next;
}

sealed class ListNode : ListLink {
	public long value;
	public ListPayload payload;
}

sealed class ListPayload {
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

sealed class Tracked {
	public long stamp;
}

struct PinnedItem {
	public long value;
}

struct PohItem {
	public long value;
}

sealed class WeakKept {
	public int id;
}

sealed class WeakOnly {
	public int id;
}

sealed class CwtKey {
	public int id;
}

sealed class CwtValue {
	public int id;
}

sealed class CwtDeadKey {
	public int id;
}

sealed class CwtDeadValue {
	public int id;
}

static class Program {
	static Tracked tracked;
	static ListNode head;
	static Leaf[] leaves;
	static int bottomIndex;
	static PinnedItem[] pinned;
	static GCHandle pinnedHandle;
	static PohItem[] poh;
	static WeakKept weakKept;
	static WeakReference weakToKept;
	static WeakReference weakToOnly;
	static CwtKey cwtKey;
	static ConditionalWeakTable<object, object> table = new ConditionalWeakTable<object, object>();
	static Garbage[] ring;
	static long garbageSum;
	static readonly List<string> samples = new List<string>();

	/* The object's address: its id in the trace. */
	static unsafe ulong AddressOf(object o) {
		return (ulong)*(IntPtr*)Unsafe.AsPointer(ref o);
	}

	static string Counts() {
		return GC.CollectionCount(0) + " " + GC.CollectionCount(1) + " " +
			GC.CollectionCount(2);
	}

	/* Where Tracked is now and in which generation, read before anything
	 * is allocated (a GC could come in between). */
	static void Sample() {
		int gen0 = GC.CollectionCount(0), gen1 = GC.CollectionCount(1);
		int gen2 = GC.CollectionCount(2);
		ulong address = AddressOf(tracked);
		int generation = GC.GetGeneration(tracked);
		samples.Add("tracked " + gen0 + " " + gen1 + " " + gen2 + " 0x" +
			address.ToString("x") + " " + generation);
	}

	static ListNode BuildList(int n) {
		ListNode first = null, last = null;
		for (int i = 0; i < n; i++) {
			ListNode x = new ListNode();
			x.value = i;
			x.payload = new ListPayload();
			x.payload.value = i;
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
			t.leaf = leaves[bottomIndex++ % leaves.Length];
			return t;
		}
		t.left = BuildTree(depth - 1);
		t.right = BuildTree(depth - 1);
		return t;
	}

	/* The objects that only weak handles hold are made here, so that no
	 * slot of Main's frame can keep one. */
	[MethodImpl(MethodImplOptions.NoInlining)]
	static void MakeWeakOnes() {
		weakKept = new WeakKept { id = 1 };
		weakToKept = new WeakReference(weakKept);
		weakToOnly = new WeakReference(new WeakOnly { id = 2 });
		cwtKey = new CwtKey { id = 3 };
		table.Add(cwtKey, new CwtValue { id = 4 });
		table.Add(new CwtDeadKey { id = 5 }, new CwtDeadValue { id = 6 });
	}

	[MethodImpl(MethodImplOptions.NoInlining)]
	static void MakeGarbage(int n) {
		ring = new Garbage[1024];
		int seen = GC.CollectionCount(0);
		long sum = 0;
		for (int i = 0; i < n; i++) {
			Garbage g = new Garbage();
			g.a = i;
			g.b = sum;
			sum += g.a;
			ring[i & 1023] = g;
			int now = GC.CollectionCount(0);
			if (now != seen) {
				seen = now;
				Sample();
			}
		}
		garbageSum = sum;
		ring = null;
	}

	/* Keeps the tree on this frame while the runtime shuts down. */
	[MethodImpl(MethodImplOptions.NoInlining)]
	static void Finish(TreeNode root, int code) {
		Console.WriteLine("done " + Counts() + " " +
			GC.GetTotalPauseDuration().TotalMilliseconds.ToString("F3",
				System.Globalization.CultureInfo.InvariantCulture));
		Console.Out.Flush();
		Environment.Exit(code);
		GC.KeepAlive(root);
	}

	public static int Main(string[] args) {
		int n = int.Parse(args[0]);
		int depth = int.Parse(args[1]);
		int leafCount = int.Parse(args[2]);
		int garbage = int.Parse(args[3]);
		int code = args.Length > 4 ? int.Parse(args[4]) : 0;
		bool wait = args.Length > 5 && args[5] == "wait";

		Console.WriteLine("runtime " + Environment.Version + " " +
			(GCSettings.IsServerGC ? "server" : "workstation"));
		tracked = new Tracked();
		tracked.stamp = 42;
		Sample();
		leaves = new Leaf[leafCount];
		for (int i = 0; i < leafCount; i++) {
			leaves[i] = new Leaf();
			leaves[i].id = i;
		}
		head = BuildList(n);
		TreeNode root = BuildTree(depth);
		pinned = new PinnedItem[16];
		pinned[0].value = 7;
		pinnedHandle = GCHandle.Alloc(pinned, GCHandleType.Pinned);
		poh = GC.AllocateArray<PohItem>(16, pinned: true);
		poh[0].value = 8;
		MakeWeakOnes();
		MakeGarbage(garbage);
		GC.Collect(2, GCCollectionMode.Forced, true, true);
		Sample();
		foreach (string s in samples)
			Console.WriteLine(s);
		Console.WriteLine("ready " + Environment.ProcessId + " " + Counts());
		Console.Out.Flush();
		if (wait)
			Console.In.ReadLine();
		/* after the GCs a test may have caused meanwhile */
		samples.Clear();
		Sample();
		Console.WriteLine(samples[0]);
		if (weakToKept.Target != weakKept || weakToOnly.Target != null)
			Console.WriteLine("weak references: not as expected");
		Finish(root, code);
		return 0;
	}
}

}
