/*
 * VisualVMAllRetained - every object's retained size as VisualVM's heap
 * library (Debian's visualvm package) computes it on a heap dump, one
 * "0xID SIZE RETAINED" line each, for levels-test.sh and tomcat-test.sh
 * (through visualvm.sh) to hold heaptrace's sizes at the strong level
 * against. The library leaves the referents of
 * java.lang.ref's References out, as the strong level does.
 *
 *   java -cp HEAP_JAR:DIR VisualVMAllRetained DUMP.hprof
 *
 * The library keeps what it computed in DUMP.hprof.hwcache, next to the
 * dump: the caller removes it.
 */
import java.io.File;
import java.util.Iterator;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;

public class VisualVMAllRetained {
	public static void main(String[] args) throws Exception {
		Heap heap = HeapFactory.createHeap(new File(args[0]));
		StringBuilder out = new StringBuilder();

		/* the first asks for the dominators of the whole heap */
		heap.getBiggestObjectsByRetainedSize(1);
		for (Iterator<Instance> it = heap.getAllInstancesIterator();
		     it.hasNext();) {
			Instance i = it.next();

			out.append(String.format("0x%x %d %d%n",
						 i.getInstanceId(), i.getSize(),
						 i.getRetainedSize()));
		}
		System.out.print(out);
	}
}
