// Churn.cs - a GC-heavy program that ends in each of the ways
// `heaptrace record` must cope with (ends-test.sh). Built with mcs for Mono
// and with the .NET SDK (Churn.csproj) for CoreCLR.
//
// usage: Churn MODE SECONDS [VARIABLE...]
//   churn  allocates for SECONDS, then exits 0
//   throw  allocates for SECONDS, then throws an exception nothing catches
//   wait   allocates for SECONDS, prints "ready", then sleeps until a
//          signal ends it; prints "process exit" if ProcessExit runs
// Each VARIABLE is printed first, as "NAME=value" ("NAME unset"): what the
// environment of the program holds.
// While it allocates it keeps a ring of nodes and replaces one now and then,
// so that young objects die in minor collections and old ones in major
// ones: most of its time is spent inside GCs, where a kill lands.
using System;
using System.Diagnostics;
using System.Globalization;
using System.Threading;

class Churn {
	class Node {
		public Node next;
		public byte[] payload;
	}

	const int Ring = 20000;
	static Node[] kept = new Node[Ring];

	static void Allocate(double seconds) {
		var clock = Stopwatch.StartNew();
		long i = 0;
		while (clock.Elapsed.TotalSeconds < seconds) {
			var n = new Node { payload = new byte[32 + (int)(i % 200)] };
			n.next = new Node();
			if (i % 7 == 0)
				kept[i % Ring] = n;
			i++;
		}
	}

	static int Main(string[] args) {
		string mode = args[0];
		double seconds = double.Parse(args[1], CultureInfo.InvariantCulture);

		for (int k = 2; k < args.Length; k++) {
			string v = Environment.GetEnvironmentVariable(args[k]);
			Console.WriteLine(v == null ? args[k] + " unset" : args[k] + "=" + v);
		}

		Allocate(seconds);
		switch (mode) {
		case "churn":
			return 0;
		case "throw":
			throw new InvalidOperationException("Churn: unhandled on purpose");
		case "wait":
			// what a service does on its way out: says so when the
			// runtime lets it (ProcessExit)
			AppDomain.CurrentDomain.ProcessExit += (s, e) => {
				Console.WriteLine("process exit");
				Console.Out.Flush();
			};
			Console.WriteLine("ready");
			Console.Out.Flush();
			Thread.Sleep(Timeout.Infinite);
			return 0;
		default:
			Console.Error.WriteLine("Churn: unknown mode " + mode);
			return 2;
		}
	}
}
