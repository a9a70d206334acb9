/*
 * test_fold.c - long type names folded for reading (src/util/fold.c):
 * .NET's generic names as the CLR recorder spells them (nested generics,
 * arrays of generics, nested types of generics, compiler-generated names,
 * Roslyn's long ones), and Java's names, which must come out unchanged.
 */
#include <criterion/criterion.h>

#include "util/fold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* name folded into a copy of its own size, so that ASan sees any write
 * past what folding may use */
static char *folded(const char *name)
{
	char *buf = malloc(strlen(name) + 1);

	cr_assert(buf);
	return type_name_fold(name, buf);
}

static void expect(const char *name, const char *want)
{
	char *got = folded(name);

	cr_expect_str_eq(got, want, "%s", name);
	free(got);
}

Test(fold, java_names_unchanged)
{
	expect("java.lang.String", "java.lang.String");
	expect("java.lang.String[]", "java.lang.String[]");
	expect("[Ljava.lang.Object;", "[Ljava.lang.Object;");
	expect("java.util.HashMap$Node[]", "java.util.HashMap$Node[]");
	expect("demo.Outer$Inner$1", "demo.Outer$Inner$1");
	expect("", "");
}

Test(fold, plain_dotnet_names_unchanged)
{
	expect("System.String", "System.String");
	expect("System.Object[][]", "System.Object[][]");
	expect("System.Threading.PortableThreadPool+WorkerThread",
	       "System.Threading.PortableThreadPool+WorkerThread");
	/* the backquote arity of an open generic is part of the name */
	expect("System.Collections.Generic.List`1",
	       "System.Collections.Generic.List`1");
}

Test(fold, namespaces_dropped_inside_arguments)
{
	expect("System.Collections.Generic.List<System.String>",
	       "System.Collections.Generic.List<String>");
	expect("System.Collections.Generic.Dictionary<System.String, "
	       "System.Collections.Generic.List<System.Collections.Generic."
	       "KeyValuePair<System.String, System.Object>>>",
	       "System.Collections.Generic.Dictionary<String, "
	       "List<KeyValuePair<String, Object>>>");
	/* nested generics of three levels, arguments without a namespace */
	expect("Demo.Cache<K, Demo.Box<Demo.Box<V>>>",
	       "Demo.Cache<K, Box<Box<V>>>");
}

Test(fold, arrays_and_nested_types)
{
	expect("System.Collections.Generic.List<System.String>[]",
	       "System.Collections.Generic.List<String>[]");
	expect("System.Collections.Generic.Dictionary<System.String, "
	       "System.Object>+Entry[]",
	       "System.Collections.Generic.Dictionary<String, Object>+Entry[]");
	/* a nested type as an argument keeps its outer type's name */
	expect("System.Collections.Generic.List<Demo.Outer+Inner>",
	       "System.Collections.Generic.List<Outer+Inner>");
	expect("System.Collections.Generic.List<System.Collections.Generic."
	       "Dictionary<System.String, System.Int32>+Entry[]>[]",
	       "System.Collections.Generic.List<Dictionary<String, "
	       "Int32>+Entry[]>[]");
	expect("System.Collections.Generic.List<System.Int32[,]>",
	       "System.Collections.Generic.List<Int32[,]>");
}

Test(fold, compiler_generated_names)
{
	expect("Demo.Program+<>c__DisplayClass0_0",
	       "Demo.Program+<>c__DisplayClass0_0");
	expect("Demo.Program+<Main>d__0", "Demo.Program+<Main>d__0");
	expect("Demo.Program+<<Main>$>d__0", "Demo.Program+<<Main>$>d__0");
}

Test(fold, steps_and_roots_around_a_name)
{
	expect("System.Collections.Generic.Dictionary<System.String, "
	       "System.Object>+Entry[][3]._value",
	       "System.Collections.Generic.Dictionary<String, "
	       "Object>+Entry[][3]._value");
	expect("static Demo.Program.ListHead", "static Demo.Program.ListHead");
	expect("local in Demo.Worker<System.Int32>.Run on thread \"main\"",
	       "local in Demo.Worker<Int32>.Run on thread \"main\"");
}

/* Roslyn's: 141 characters once the namespaces go, 131 with the deepest
 * list elided, so the next level goes too. */
Test(fold, long_names_elided_from_the_deepest_level)
{
	const char *roslyn =
		"System.Collections.Concurrent.ConcurrentDictionary<"
		"Microsoft.CodeAnalysis.CSharp.Symbols.NamedTypeSymbol, "
		"System.Collections.Immutable.ImmutableArray<System.ValueTuple<"
		"Microsoft.CodeAnalysis.CSharp.Symbols.MethodSymbol, "
		"System.Collections.Generic.Dictionary<System.String, "
		"System.Int32>>>>+Node";
	char *got = folded(roslyn);

	cr_expect_str_eq(got, "System.Collections.Concurrent."
			 "ConcurrentDictionary<NamedTypeSymbol, ImmutableArray<"
			 "ValueTuple<...>>>+Node");
	cr_expect_leq(strlen(got), TYPE_FOLD_WIDTH);
	free(got);
}

/* Twelve levels deep, 113 characters once the namespaces go: it fits.
 * With longer names, levels go one at a time until it fits, the outer
 * type always kept. */
Test(fold, deep_names_fit_the_width)
{
	char name[2048] = "System.Collections.Generic.List<", *got;

	for (int i = 0; i < 12; i++)
		strcat(name, "System.Collections.Generic.List<");
	strcat(name, "System.String");
	for (int i = 0; i < 13; i++)
		strcat(name, ">");
	strcat(name, "[]");
	got = folded(name);
	cr_expect_eq(strlen(got), 113, "%s", got);
	free(got);
	strcpy(name, "System.Collections.Generic.List<");
	for (int i = 0; i < 12; i++)
		strcat(name, "Demo.Orders.OrderBatch<");
	strcat(name, "System.String");
	for (int i = 0; i < 13; i++)
		strcat(name, ">");
	strcat(name, "[]");
	got = folded(name);
	cr_expect_leq(strlen(got), TYPE_FOLD_WIDTH, "%s", got);
	cr_expect(strncmp(got, "System.Collections.Generic.List<OrderBatch<",
			  43) == 0, "%s", got);
	cr_expect(strstr(got, "<...>") != NULL, "%s", got);
	cr_expect_str_eq(got + strlen(got) - 3, ">[]");
	free(got);
	/* so long an outer name that even "<...>" does not fit: kept */
	expect("A.VeryLongNamespaceIndeed.AndAnotherOneToo.AndMoreOfThem."
	       "AndStillMore.AndEvenMoreThanThat.AndTheTypeNameItself.Holder"
	       "<System.String, System.Object>",
	       "A.VeryLongNamespaceIndeed.AndAnotherOneToo.AndMoreOfThem."
	       "AndStillMore.AndEvenMoreThanThat.AndTheTypeNameItself.Holder"
	       "<...>");
}

/* A width is in characters, not bytes: a name of 100 two-byte
 * characters fits. */
Test(fold, width_in_characters)
{
	char name[512] = "Demo.Box<";

	for (int i = 0; i < 50; i++)
		strcat(name, "\xc3\xa9");
	strcat(name, ", Demo.Item>");
	char *got = folded(name);
	cr_expect(strstr(got, "<...>") == NULL, "%s", got);
	free(got);
}

/* A '>' that closes nothing is text: diff's paths join their steps with
 * " > ". A name cut short by a caller's buffer (a '<' left open) still
 * folds. */
Test(fold, unpaired_brackets)
{
	expect("Demo.Op->Apply", "Demo.Op->Apply");
	expect("handle root > System.Collections.Generic.List<System.String> "
	       "> [0] System.String[]",
	       "handle root > System.Collections.Generic.List<String> "
	       "> [0] System.String[]");
	expect("System.Collections.Generic.List<System.Collections.Generic.Lis",
	       "System.Collections.Generic.List<Lis");
}

/* diff's paths fold step by step: each step fits the width, not the whole
 * path. */
Test(fold, paths_step_by_step)
{
	const char *dict = "System.Collections.Generic.Dictionary<System."
			   "String, System.Collections.Generic.List<System."
			   "Collections.Generic.KeyValuePair<System.String, "
			   "System.Object>>>";
	const char *folded_dict = "System.Collections.Generic.Dictionary<"
				  "String, List<KeyValuePair<String, Object>>>";
	char path[1024], want[1024];

	snprintf(path, sizeof path, "handle root > %s > [0] %s+Entry[] > "
		 "[0] System.String", dict, dict);
	snprintf(want, sizeof want, "handle root > %s > [0] %s+Entry[] > "
		 "[0] System.String", folded_dict, folded_dict);
	expect(path, want);
	/* in place too */
	cr_expect_str_eq(type_name_fold(path, path), want);
}

/* Folding in place, as the callers with one buffer do. */
Test(fold, in_place)
{
	char name[] = "System.Collections.Generic.List<System.String>";

	cr_expect_str_eq(type_name_fold(name, name),
			 "System.Collections.Generic.List<String>");
}
