/*
 * pdb.h - source lines of .NET methods from a portable PDB (pdb.c), the
 * file the SDK writes beside each assembly: which file and line an IL
 * offset of a method was compiled from, so that a frame reads
 * "Holder.Park(Parked.cs:24)". Built without the runtime, for the tests.
 */
#ifndef HT_RECORDERS_CLR_PDB_H
#define HT_RECORDERS_CLR_PDB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Larger files are not read: a portable PDB of a large assembly is a few
 * MiB. */
#define PDB_FILE_MAX (64u << 20)
/* A document's name (its path) longer than this gives no file name. */
#define PDB_NAME_MAX 4096

struct pdb;

/* The portable PDB in bytes[0..len), which it takes (malloc'ed; freed by
 * pdb_free, or here on failure); NULL when it is no portable PDB or its
 * tables do not fit in it. */
struct pdb *pdb_from_bytes(uint8_t *bytes, size_t len);
/* The portable PDB at path, read once; NULL when there is none, or it is
 * no portable PDB (a Windows PDB), or it is damaged. */
struct pdb *pdb_open(const char *path);
void pdb_free(struct pdb *p);

/* Whether p is the PDB the assembly at path was built with: the id in
 * its #Pdb stream is the one the assembly's debug directory names (a
 * CodeView entry's GUID and stamp). A PDB left beside a rebuilt assembly
 * would give the lines of other code. */
bool pdb_matches(const struct pdb *p, const char *assembly);

/* Where the SDK puts an assembly's PDB: its path with ".pdb" in place of
 * ".dll" or ".exe", into out (room for len); false when the path has
 * neither or the result does not fit. */
bool pdb_path_for(const char *assembly, char *out, size_t len);

/* The place of IL offset il in the method whose MethodDef row is row (a
 * method token's low 24 bits): the last sequence point at or before il
 * that is not hidden, as .NET's own stack traces pick it. True with its
 * line, its document's row (*document) and that document's file name
 * (the last part of its path) in file (room for len); false when the PDB
 * gives no line there, or any part of what it would read is damaged. */
bool pdb_line(const struct pdb *p, uint32_t row, uint32_t il,
	      uint32_t *line, uint32_t *document, char *file, size_t len);

#endif
