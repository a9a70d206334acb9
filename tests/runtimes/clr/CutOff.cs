/*
 * CutOff - a heap for the test that kills a recording in the middle of a
 * dump (cutoff-test.sh): the names of the classes a cut-off dump meets
 * must be in the trace already.
 *
 *   dotnet CutOff.dll N
 *
 * builds a list of N CutOff.Node, each with a CutOff.Payload, held by a
 * static, prints "ready" and waits to be killed. The test asks for a dump
 * (SIGUSR1, --dump-on signal): the first dump of the run, so that every
 * name it needs comes from the classes' load or from the walk itself,
 * none from an earlier dump's end.
 */
using System;
using System.Threading;

namespace CutOff;

sealed class Payload {
	public long A = 1, B = 2;
}

sealed class Node {
	public Node Next;
	public Payload Data = new Payload();
}

static class Program {
	static Node head;

	public static int Main(string[] args) {
		int n = int.Parse(args[0]);
		for (int i = 0; i < n; i++)
			head = new Node { Next = head };
		Console.WriteLine("ready");
		Console.Out.Flush();
		Thread.Sleep(Timeout.Infinite);
		GC.KeepAlive(head);
		return 0;
	}
}
