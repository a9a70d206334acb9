/*
 * Kept.java - the class of the one object LoaderHeap keeps of those its
 * loader defines (LoaderHeap.java); public, for LoaderHeap to make it.
 */
public class Kept {
	static final byte[] DATA = new byte[1000];
}
