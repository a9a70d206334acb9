// attach-service.cs - a small HTTP service on the loopback that keeps a
// heap it knows, for attach-test.sh: started bare, then recorded with
// `heaptrace record --pid` while a client loads it, and still serving
// once the profiler has detached.
//
//   dotnet AttachService.dll PORT N
//
// keeps N Account objects in a list from the static Program.Head (each
// with an Owner string and a Ledger byte[] of its own) and N/4 Session
// objects in a Session[] held by the static Program.Sessions, each
// pointing at one account; prints "ready PID" once it listens on
// http://127.0.0.1:PORT/. Each request makes garbage (so that the service
// collects while it is recorded) and answers "accounts N sessions M
// served K"; /quit ends it.
using System;
using System.Collections.Generic;
using System.Net;
using System.Text;

namespace AttachService
{
    sealed class Account
    {
        public string Owner;
        public Account Next;
        public byte[] Ledger;
    }

    sealed class Session
    {
        public Account Account;
        public long Opened;
    }

    static class Program
    {
        static Account Head;
        static Session[] Sessions;
        static long Served;

        static int Count()
        {
            int n = 0;
            for (Account a = Head; a != null; a = a.Next)
                n++;
            return n;
        }

        static void Build(int n)
        {
            Account[] all = new Account[n];
            for (int i = n - 1; i >= 0; i--)
            {
                all[i] = new Account
                {
                    Owner = "owner-" + i.ToString(),
                    Next = Head,
                    Ledger = new byte[64 + i % 32],
                };
                Head = all[i];
            }
            Sessions = new Session[n / 4];
            for (int i = 0; i < Sessions.Length; i++)
                Sessions[i] = new Session { Account = all[i * 4], Opened = i };
        }

        // garbage of a request: what a real handler leaves behind
        static string Answer()
        {
            var parts = new List<string>();
            for (int i = 0; i < 200; i++)
                parts.Add(new string('x', 16 + i % 50));
            return "accounts " + Count() + " sessions " + Sessions.Length +
                " served " + (++Served) + " " + parts.Count + "\n";
        }

        static int Main(string[] args)
        {
            int port = int.Parse(args[0]);
            Build(int.Parse(args[1]));
            var listener = new HttpListener();
            listener.Prefixes.Add("http://127.0.0.1:" + port + "/");
            listener.Start();
            Console.WriteLine("ready " + Environment.ProcessId);
            Console.Out.Flush();
            for (;;)
            {
                HttpListenerContext ctx = listener.GetContext();
                bool quit = ctx.Request.Url.AbsolutePath == "/quit";
                byte[] body = Encoding.UTF8.GetBytes(quit ? "bye\n" : Answer());
                ctx.Response.ContentLength64 = body.Length;
                ctx.Response.OutputStream.Write(body, 0, body.Length);
                ctx.Response.OutputStream.Close();
                if (quit)
                    break;
            }
            listener.Stop();
            GC.KeepAlive(Head);
            return 0;
        }
    }
}
