/*
 * ClrChurn - an allocation-heavy C# workload for the CoreCLR recorder's
 * benchmark (bench-clr.sh), with a large live heap.
 *
 *   dotnet ClrChurn.dll ITEMS ROUNDS [wait]
 *
 * Keeps ITEMS ClrChurn.Item alive, each with a byte[128] of its own
 * (192 bytes per item), held by one static array, every 16 in a chain.
 * Then, for ROUNDS rounds, allocates 500,000 short-lived ClrChurn.Temp
 * (20 MB) and replaces 1% of the items with new ones, so that the
 * ephemeral generations collect often and the old one now and then; the
 * items replaced stay reachable through the chains of others. With
 * 1,000,000 items and 20 rounds the live heap at the end is 233 MB in 2.34
 * million objects.
 * With "wait" it then prints "ready PID" and reads a line of standard
 * input (a point where a test takes a heap dump of its own). Last it
 * prints
 *
 *   done GEN0 GEN1 GEN2 PAUSE_MS ALLOCATED_BYTES
 *
 * (GC.CollectionCount of each generation, GC.GetTotalPauseDuration() and
 * GC.GetTotalAllocatedBytes()) and exits.
 */
using System;
using System.Globalization;

namespace ClrChurn {

sealed class Item {
	public Item next;
	public long stamp;
	public byte[] data;
}

sealed class Temp {
	public long a;
	public long b;
	public Temp link;
}

static class Program {
	static Item[] items;
	static long sink;

	static Item NewItem(long stamp, Item next) {
		Item it = new Item();
		it.stamp = stamp;
		it.data = new byte[128];
		it.data[0] = (byte)stamp;
		it.next = next;
		return it;
	}

	/* Short-lived garbage: chains of a few Temp objects. */
	static void Churn(int objects) {
		Temp prev = null;
		for (int i = 0; i < objects; i++) {
			Temp t = new Temp();
			t.a = i;
			t.b = sink;
			t.link = (i & 7) == 0 ? null : prev;
			prev = t;
			sink += t.a;
		}
	}

	public static int Main(string[] args) {
		int n = int.Parse(args[0]);
		int rounds = int.Parse(args[1]);
		bool wait = args.Length > 2 && args[2] == "wait";
		var random = new Random(12345);

		items = new Item[n];
		for (int i = 0; i < n; i++)
			items[i] = NewItem(i, i > 0 && (i & 15) != 0 ? items[i - 1] : null);
		int step = Math.Max(n / 100, 1);
		for (int r = 0; r < rounds; r++) {
			Churn(500000);
			for (int k = 0; k < step; k++) {
				int i = random.Next(n);
				items[i] = NewItem(r * (long)n + i, items[(i + 1) % n]);
			}
		}
		if (wait) {
			Console.WriteLine("ready " + Environment.ProcessId);
			Console.Out.Flush();
			Console.In.ReadLine();
		}
		Console.WriteLine("done " + GC.CollectionCount(0) + " " +
			GC.CollectionCount(1) + " " + GC.CollectionCount(2) + " " +
			GC.GetTotalPauseDuration().TotalMilliseconds.ToString("F3",
				CultureInfo.InvariantCulture) + " " +
			GC.GetTotalAllocatedBytes() + " " + sink % 7);
		GC.KeepAlive(items);
		return 0;
	}
}

}
