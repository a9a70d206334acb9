/*
 * Dropped.java - classes LoaderHeap's loader defines and initializes
 * without keeping an instance (LoaderHeap.java): their loader alone holds
 * them, each with a static array of a size of its own.
 */
class Dropped1 {
	static final byte[] DATA = new byte[2000];
}

class Dropped2 {
	static final long[] DATA = new long[500];
}
