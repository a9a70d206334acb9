/*
 * GcChurn - a workload for the Mono recorder benchmark (bench-mono.sh):
 * a long-lived graph that keeps changing, and much short-lived garbage,
 * so that minor and major collections both happen.
 *
 *   mono GcChurn.exe ROUNDS TABLE
 *
 * Each round replaces a tenth of a table of TABLE small linked records
 * (which promotes the new ones and leaves the old ones to die in the old
 * generation) and allocates a few megabytes of garbage.
 */
using System;
using System.Collections.Generic;

public class GcChurn {
	sealed class Record {
		public Record next;
		public string name;
		public int[] data;
	}

	static Record[] table;

	static Record Make(int i, Record next) {
		Record r = new Record();
		r.next = next;
		r.name = "r" + i;
		r.data = new int[4 + i % 8];
		return r;
	}

	public static void Main(string[] args) {
		int rounds = args.Length > 0 ? int.Parse(args[0]) : 40;
		int size = args.Length > 1 ? int.Parse(args[1]) : 100000;
		long garbage = 0;

		table = new Record[size];
		for (int i = 0; i < table.Length; i++)
			table[i] = Make(i, i > 0 ? table[i - 1] : null);
		for (int round = 0; round < rounds; round++) {
			int start = (round * 7919) % table.Length;
			for (int k = 0; k < size / 10; k++) {
				int i = (start + k) % table.Length;
				table[i] = Make(i, table[(i + 1) % table.Length]);
			}
			var tmp = new List<object>();
			for (int k = 0; k < 50000; k++) {
				tmp.Add(new byte[32 + k % 64]);
				if (tmp.Count > 1000)
					tmp.Clear();
			}
			garbage += tmp.Count;
		}
		Console.WriteLine("done " + garbage);
	}
}
