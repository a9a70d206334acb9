// Statics.cs - a program whose statics the test knows (statics-test.sh):
// each static of a different kind holds an object of a class of its own,
// so the test finds the object by its class and checks that heaptrace
// roots it at the static by name. A local holds what ListHead holds as
// well: the path must still start at the static.
using System;
using System.Collections.Generic;
using System.Runtime.CompilerServices;
using System.Threading;

namespace Demo
{
    class ListNode
    {
        public ListNode Next;
        public byte[] Payload;
    }

    class NumberRow
    {
        public long Value;
    }

    class GenericItem
    {
        public string Label;
    }

    class NestedItem
    {
        public int Count;
    }

    class PairItem
    {
        public byte[] Data;
    }

    class ThreadItem
    {
        public byte[] Data;
    }

    // a static struct holding a reference: stored boxed by the runtime
    struct Pair
    {
        public PairItem Left;
        public int Right;
    }

    static class Registry<T>
    {
        public static List<T> Items;
    }

    static class Outer
    {
        public static class Inner
        {
            public static NestedItem Cache;
        }
    }

    static class Program
    {
        static ListNode ListHead;
        static NumberRow[] Numbers;
        static Pair Held;
        [ThreadStatic] static ThreadItem PerThread;

        [MethodImpl(MethodImplOptions.NoInlining)]
        static void Build(int n)
        {
            for (int i = 0; i < n; i++)
                ListHead = new ListNode { Next = ListHead, Payload = new byte[1000] };
            Numbers = new NumberRow[64];
            for (int i = 0; i < Numbers.Length; i++)
                Numbers[i] = new NumberRow { Value = i };
            Registry<GenericItem>.Items = new List<GenericItem>();
            for (int i = 0; i < 8; i++)
                Registry<GenericItem>.Items.Add(new GenericItem { Label = "item " + i });
            Outer.Inner.Cache = new NestedItem { Count = n };
            Held = new Pair { Left = new PairItem { Data = new byte[4096] }, Right = 7 };
            PerThread = new ThreadItem { Data = new byte[2048] };
        }

        static int Main(string[] args)
        {
            int n = args.Length > 0 ? int.Parse(args[0]) : 100;
            Build(n);
            ListNode local = ListHead; // the same object, held by a local too
            GC.Collect();
            GC.KeepAlive(local);
            GC.KeepAlive(PerThread);
            Console.WriteLine("statics ready: " + n + " nodes");
            return 0;
        }
    }
}
