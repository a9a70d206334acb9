// Parked.cs - the program stacks-test.sh records: three named threads
// parked in Holder.Park, each holding in a local a list of a size of its
// own (parker-1 100 arrays of 1 KiB, parker-2 200, parker-3 300), while
// the program asks the recorder for a dump (SIGUSR1 to itself) and waits
// for that collection. It prints each list's element count and the
// collection count before the dump, so that the test knows the heap.
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;
using System.Threading;

static class Holder
{
    public static readonly CountdownEvent Ready = new CountdownEvent(3);
    public static readonly ManualResetEventSlim Release = new ManualResetEventSlim(false);

    // The list lives in this frame's local until the thread is released.
    public static void Park(int n)
    {
        var items = new List<byte[]>();
        for (int i = 0; i < n; i++)
            items.Add(new byte[1024]);
        Ready.Signal();
        Release.Wait();
        GC.KeepAlive(items);
    }
}

static class Program
{
    [DllImport("libc", SetLastError = true)]
    static extern int kill(int pid, int sig);

    static int Main()
    {
        var threads = new Thread[3];
        for (int i = 0; i < threads.Length; i++) {
            int n = 100 * (i + 1);
            threads[i] = new Thread(() => Holder.Park(n)) { Name = "parker-" + (i + 1) };
            threads[i].Start();
        }
        Holder.Ready.Wait();
        // let the tiered compiler settle, so that the stacks hold still
        Thread.Sleep(1000);
        int before = GC.CollectionCount(2);
        kill(Environment.ProcessId, 10); // SIGUSR1: the recorder dumps
        for (int waited = 0; GC.CollectionCount(2) == before && waited < 30000; waited += 10)
            Thread.Sleep(10);
        Thread.Sleep(200);
        Holder.Release.Set();
        foreach (var t in threads)
            t.Join();
        Console.WriteLine("dumped " + (GC.CollectionCount(2) > before));
        return 0;
    }
}
