/*
 * SitesHeap - a C# program with three allocation sites the Mono
 * recorder's sites test (sites-test.sh) knows exactly:
 *
 *   mono SitesHeap.exe KEEP CHURN AGING
 *
 *   - SitesHeap.Keep makes KEEP byte[1000], all kept by the static list
 *     kept until the process exits;
 *   - SitesHeap.Churn makes CHURN byte[100], each dropped at once;
 *   - SitesHeap.Age makes AGING byte[500], kept by the static list aging
 *     through three GC.Collect() (with churn between them), then dropped
 *     and collected;
 *   - SitesHeap.Spread makes CHURN / 4 byte[200] on each of two threads
 *     at once, dropped at once (the recorder's tables shared by threads).
 * Each site allocates on one line, the line that ends with its comment
 * "// site: NAME", so the test finds the line it expects in this file.
 * The lists get their capacity first, so that the sites' arrays are the
 * only byte[] the three methods make.
 */
using System;
using System.Collections.Generic;
using System.Threading;

public class SitesHeap {
	static List<byte[]> kept;
	static List<byte[]> aging;
	public static byte[] last;

	static void Keep(int n) {
		for (int i = 0; i < n; i++)
			kept.Add(new byte[1000]); // site: Keep
	}

	static void Churn(int n) {
		for (int i = 0; i < n; i++)
			last = new byte[100]; // site: Churn
	}

	static void Age(int n) {
		for (int i = 0; i < n; i++)
			aging.Add(new byte[500]); // site: Age
	}

	static void Spread(int n) {
		byte[] b = null;
		for (int i = 0; i < n; i++)
			b = new byte[200]; // site: Spread
		GC.KeepAlive(b);
	}

	public static int Main(string[] args) {
		int keep = int.Parse(args[0]);
		int churn = int.Parse(args[1]);
		int agingCount = int.Parse(args[2]);

		kept = new List<byte[]>(keep);
		aging = new List<byte[]>(agingCount);
		Keep(keep);
		Age(agingCount);
		for (int i = 0; i < 3; i++) {
			Churn(churn / 4);
			GC.Collect();
		}
		aging = null;
		GC.Collect();
		Thread[] spread = new Thread[2];
		for (int i = 0; i < spread.Length; i++) {
			spread[i] = new Thread(() => Spread(churn / 4));
			spread[i].Start();
		}
		foreach (Thread t in spread)
			t.Join();
		Churn(churn - 3 * (churn / 4));
		last = null;
		Console.WriteLine("done");
		return 0;
	}
}
