// Lines.cs - the source of Lines.dll and Lines.pdb, which the test of the
// PDB reader (tests/unit/test_clr_pdb.c) reads: methods of known lines.
// Rebuilt with `dotnet build -c Release -o OUT` of Lines.csproj, both
// copied from OUT; the test's lines are this file's, keep them in place.
using System;

static class Lines
{
    // MethodDef row 1: three statements, one line each.
    static int Straight(int a)
    {
        int b = a + 1;
        int c = b * a;
        return c - 3;
    }

    // Row 2: a loop, whose compiled form goes back to an earlier line
    // and has hidden sequence points.
    static int Loop(int n)
    {
        int s = 0;
        for (int i = 0; i < n; i++)
            s += i * n;
        return s;
    }

    // Row 3: a method in two documents (a #line directive).
    static int Elsewhere(int x)
    {
        int y = x * 3;
#line 500 "Generated.cs"
        y += x;
#line default
        return y;
    }

    // Row 4.
    static int Main()
    {
        Console.WriteLine(Straight(2) + Loop(3) + Elsewhere(4));
        return 0;
    }
}
