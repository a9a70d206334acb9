/*
 * fold.h - a type name folded for reading, as PerfView and Visual Studio
 * show .NET's generic names: what the text outputs print for class names
 * (doc/design.md, section 6, "Names for people"), unless the command is
 * given --full-names; yaml and json keep the full name. Pure text, so
 * that it knows no trace.
 */
#ifndef HT_UTIL_FOLD_H
#define HT_UTIL_FOLD_H

/*
 * Inside a generic argument list (between < and >) each type's namespace
 * is dropped: "System.Collections.Generic.Dictionary<System.String,
 * System.Collections.Generic.List<System.Int32>>" reads
 * "System.Collections.Generic.Dictionary<String, List<Int32>>" (the outer
 * type keeps its namespace). Then, while the name is longer than
 * TYPE_FOLD_WIDTH characters, the argument lists of the deepest level left
 * are written "<...>", one level at a time up to the outermost. A name
 * without '<' (every Java name) comes out unchanged; so does the text
 * around names (a step "Entry[][3]._value", a root "static
 * Demo.Program.ListHead"), which may be folded whole. A '>' that closes
 * no '<' is text; diff's paths, steps joined by " > ", fold step by step,
 * the width holding for each step.
 *
 * Two types can fold alike (List<A.Item> and List<B.Item>); the text is for
 * people, and yaml and json keep the full name.
 *
 * Writes the folded name into buf, which holds at least strlen(name) + 1
 * bytes (folding never lengthens a name), and returns buf; buf may be name.
 */
#define TYPE_FOLD_WIDTH 120
char *type_name_fold(const char *name, char *buf);

#endif
