// Layouts.cs - a heap whose arrays and collections the CoreCLR recorder's
// layouts test (layouts-test.sh, check-layouts.py) knows exactly: each
// object to look for is the one object of its class, held at a known
// element of an array (among nulls), of an array of structs, or of a
// collection whose fill the program prints, or inside a struct that an
// object embeds (a struct in a struct too). It prints one "expect" line
// per object (its class, then the step that reaches it), one "refs" line
// per object that embeds structs (its class, then the fields its
// references are named by, nulls left out), and one
// "collection" line per collection (its class, size and capacity), then
// ends: the recorder's dump at exit holds it all, through statics. An
// argument sets the length of the sparse array (1000), for measuring.
using System;
using System.Collections.Generic;
using System.Runtime.InteropServices;

namespace Layouts
{
    class DictTarget { }
    class ListTarget { }
    class ArrayTarget { }
    class StructTarget { }
    class HolderTarget { }
    class DeepTarget { }
    class MidTarget { }
    class DeepElementTarget { }
    class OtherModuleTarget { }
    class WrapperTarget { }

    struct Pair
    {
        public int Number;
        public string Key;
        public object Value;
    }

    // a struct embedded in an object: its references are named by the
    // chain of fields that leads to them (Holder.Inner.Value)
    class Holder
    {
        public int Before;
        public Pair Inner;
        public object After;
    }

    // a struct in a struct
    struct Outer
    {
        public long Tag;
        public Pair Deep;
        public object Mid;
    }

    class NestHolder
    {
        public object First;
        public Outer Wrap;
    }

    // a struct of another module (a TypeRef to CoreLib's HandleRef): named
    // by the chain of fields, its own private ones
    class RefHolder
    {
        public HandleRef Ref;
    }

    // a struct of another module, and generic: named by the holder's field
    class OtherHolder
    {
        public KeyValuePair<string, object> Entry;
    }

    static class Program
    {
        static Dictionary<string, object> Table;
        static List<object> Items;
        static object[] Sparse;
        static Pair[] Pairs;
        static HashSet<string> Set;
        static Queue<object> Line;
        static Stack<object> Pile;
        static Holder Hold;
        static NestHolder Nest;
        static Outer[] Outers;
        static OtherHolder Other;
        static RefHolder Refs;

        static void Expect(object o, string step)
        {
            Console.WriteLine("expect {0} {1}", o.GetType().FullName, step);
        }

        static int Main(string[] args)
        {
            int sparse = args.Length > 0 ? int.Parse(args[0]) : 1000;
            // 20 added to a table of 29 buckets, 3 removed: 17 entries,
            // the removed ones free; "k12" is entry 12
            Table = new Dictionary<string, object>(29);
            for (int i = 0; i < 20; i++)
                Table["k" + i] = i % 5 == 0 ? null : new object();
            Table["k12"] = new DictTarget();
            Table.Remove("k3");
            Table.Remove("k7");
            Table.Remove("k15");
            Expect(Table["k12"], "Entry[][12].value");
            Console.WriteLine("collection Dictionary {0} 29", Table.Count);

            // a list of 10 in an array of 16, nulls among them
            Items = new List<object>(16);
            for (int i = 0; i < 10; i++)
                Items.Add(i % 3 == 1 ? null : new object());
            Items[5] = new ListTarget();
            Expect(Items[5], "Object[][5]");
            Console.WriteLine("collection List {0} 16", Items.Count);

            // a big array, mostly null
            Sparse = new object[sparse];
            Sparse[0] = new object();
            Sparse[777] = new ArrayTarget();
            Expect(Sparse[777], "Object[][777]");

            Pairs = new Pair[8];
            for (int i = 0; i < Pairs.Length; i++)
                Pairs[i] = new Pair { Number = i, Key = i % 2 == 0 ? "p" + i : null };
            Pairs[3].Value = new StructTarget();
            Expect(Pairs[3].Value, "Pair[][3].Value");

            Hold = new Holder { Before = 1, After = new object() };
            Hold.Inner.Number = 2;
            Hold.Inner.Key = "inner";
            Hold.Inner.Value = new HolderTarget();
            Expect(Hold.Inner.Value, "Holder.Inner.Value");

            Nest = new NestHolder { First = new object() };
            Nest.Wrap.Tag = 7;
            Nest.Wrap.Deep.Key = "deep";
            Nest.Wrap.Deep.Value = new DeepTarget();
            Nest.Wrap.Mid = new MidTarget();
            Expect(Nest.Wrap.Deep.Value, "NestHolder.Wrap.Deep.Value");
            Expect(Nest.Wrap.Mid, "NestHolder.Wrap.Mid");
            Console.WriteLine("refs Layouts.Holder Inner.Key Inner.Value After");
            Console.WriteLine("refs Layouts.NestHolder First Wrap.Deep.Key Wrap.Deep.Value Wrap.Mid");

            Outers = new Outer[4];
            Outers[2].Deep.Value = new DeepElementTarget();
            Expect(Outers[2].Deep.Value, "Outer[][2].Deep.Value");

            Other = new OtherHolder
            {
                Entry = new KeyValuePair<string, object>("k", new OtherModuleTarget())
            };
            Expect(Other.Entry.Value, "OtherHolder.Entry");

            Refs = new RefHolder { Ref = new HandleRef(new WrapperTarget(), IntPtr.Zero) };
            Expect(Refs.Ref.Wrapper!, "RefHolder.Ref._wrapper");

            Set = new HashSet<string>();
            for (int i = 0; i < 5; i++)
                Set.Add("s" + i);
            Console.WriteLine("collection HashSet {0} 7", Set.Count);
            Line = new Queue<object>();
            for (int i = 0; i < 6; i++)
                Line.Enqueue(new object());
            Line.Dequeue();
            Console.WriteLine("collection Queue {0} 8", Line.Count);
            Pile = new Stack<object>();
            for (int i = 0; i < 3; i++)
                Pile.Push(new object());
            Console.WriteLine("collection Stack {0} 4", Pile.Count);
            return 0;
        }
    }
}
