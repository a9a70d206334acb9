// Shapes.cs - a heap whose classes clr-test.sh names: generic, nested,
// array forms, a ConditionalWeakTable value held only by its key.
//
//   dotnet Shapes.dll N STATUS [wait MS | child]
//
// keeps N Outer.Inner objects in a List, one int[], one int[,], one
// string[][], a Dictionary<string, int> of N entries and a
// List<string> of N strings; and, for the fields of references, a boxed
// Pair (a struct of two references), a Box<Item> and a Box<long> (a
// field of a type parameter is a reference or not as its argument), and
// a Holder whose Pair is embedded; and a Texts of known strings; forces a
// full collection; then waits MS milliseconds (for a signal) or runs a
// child process that prints whether it sees CORECLR_ENABLE_PROFILING;
// exits with STATUS.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Runtime.CompilerServices;
using System.Threading;

class Outer
{
    public class Inner
    {
        public int Value;
    }
}

class Item { }
struct Pair { public Item A; public long N; public Item B; }
class Box<T> { public T Value; public Item Other = new Item(); }
class Holder { public Pair Inner; public Item Tail = new Item(); }

// Strings whose text the test knows (--values): made at run time from N,
// so on the GC heap, Latin-1 and not, short and longer than the 128 units
// a trace keeps whole; and a literal, which lives in the non-GC heap.
class Texts
{
    public string Latin, Wide, Long, WideLong;
    public string Literal = "a literal, never collected";

    public Texts(int n)
    {
        Latin = "caf\u00e9 au lait " + n;
        Wide = "Gr\u00fc\u00dfe aus \u6771\u4eac " + n + " \u2713";
        Long = string.Concat(System.Linq.Enumerable.Repeat("0123456789", 30)) + n;
        WideLong = string.Concat(System.Linq.Enumerable.Repeat("\u03bb", 200)) + n;
    }
}

class CwtKey { }
class CwtValue { public string Note = "held by its key"; }

static class Shapes
{
    static List<Outer.Inner> inners = new List<Outer.Inner>();
    static List<string> strings = new List<string>();
    static Dictionary<string, int> counts = new Dictionary<string, int>();
    static int[] vector = new int[16];
    static int[,] matrix = new int[3, 4];
    static string[][] jagged = new string[][] { new string[] { "a" } };
    static ConditionalWeakTable<CwtKey, CwtValue> table =
        new ConditionalWeakTable<CwtKey, CwtValue>();
    static CwtKey key = new CwtKey();
    static object boxed = new Pair { A = new Item(), N = 1, B = new Item() };
    static Box<Item> refBox = new Box<Item> { Value = new Item() };
    static Box<long> valueBox = new Box<long> { Value = 42 };
    static Holder holder = new Holder {
        Inner = new Pair { A = new Item(), N = 2, B = new Item() } };
    static Texts texts;

    static int Main(string[] args)
    {
        int n = int.Parse(args[0]);
        int status = int.Parse(args[1]);
        for (int i = 0; i < n; i++)
        {
            inners.Add(new Outer.Inner { Value = i });
            strings.Add("s" + i);
            counts["k" + i] = i;
        }
        table.Add(key, new CwtValue());
        texts = new Texts(n);
        GC.Collect();
        if (args.Length > 3 && args[2] == "wait")
        {
            // the recorder has caught SIGUSR1 since the runtime started
            Console.WriteLine("waiting");
            Console.Out.Flush();
            Thread.Sleep(int.Parse(args[3]));
        }
        if (args.Length > 2 && args[2] == "child")
        {
            var start = new ProcessStartInfo("sh",
                "-c \"echo child sees ${CORECLR_ENABLE_PROFILING:-no profiler}\"");
            start.UseShellExecute = false;
            Process.Start(start).WaitForExit();
        }
        Console.WriteLine("kept " + inners.Count + " " + strings.Count + " " +
                          counts.Count + " " + vector.Length + matrix.Length +
                          jagged.Length);
        GC.KeepAlive(key);
        GC.KeepAlive(boxed);
        GC.KeepAlive(refBox);
        GC.KeepAlive(valueBox);
        GC.KeepAlive(holder);
        GC.KeepAlive(texts);
        return status;
    }
}
