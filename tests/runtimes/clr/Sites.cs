// Sites.cs - the program sites-test.sh records with --sites: three
// allocation sites of known counts and sizes, each in a method of its own
// that the JIT may not inline, so that the innermost frame of each
// allocation's stack is that method at the line marked "site:NAME".
//   Keep:  KeepCount arrays of 1000 bytes, held by a static list to the end;
//   Churn: ChurnCount arrays of 100 bytes, each dropped at once;
//   Elder: ElderCount arrays of 2000 bytes, held across ElderGCs forced
//          collections, then dropped and collected.
// It prints what it made, for the test to compare with the trace.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;

namespace Demo
{
    public static class Sites
    {
        public const int KeepCount = 20000, ChurnCount = 200000;
        public const int ElderCount = 5000, ElderGCs = 3;
        static readonly List<byte[]> Kept = new List<byte[]>(KeepCount);
        static byte[] Sink;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static byte[] Keep()
        {
            return new byte[1000]; // site:Keep
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static byte[] Churn()
        {
            return new byte[100]; // site:Churn
        }

        [MethodImpl(MethodImplOptions.NoInlining)]
        static byte[] Elder()
        {
            return new byte[2000]; // site:Elder
        }

        public static int Main()
        {
            var elders = new List<byte[]>(ElderCount);
            for (int i = 0; i < ElderCount; i++)
                elders.Add(Elder());
            for (int i = 0; i < KeepCount; i++)
                Kept.Add(Keep());
            for (int gc = 0; gc < ElderGCs; gc++)
            {
                for (int i = 0; i < ChurnCount / ElderGCs; i++)
                    Sink = Churn();
                GC.Collect();
            }
            for (int i = 0; i < ChurnCount - ChurnCount / ElderGCs * ElderGCs; i++)
                Sink = Churn();
            int survived = elders.Count;
            elders = null;
            GC.Collect();
            Console.WriteLine($"kept {Kept.Count} churned {ChurnCount} elders {survived} after {ElderGCs} GCs");
            return 0;
        }
    }
}
