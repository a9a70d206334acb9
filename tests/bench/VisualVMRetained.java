/*
 * VisualVMRetained - VisualVM's heap library (Debian's visualvm package)
 * computing retained sizes on a heap dump, for hprof-bench.sh to time
 * next to heaptrace: opens the dump, asks for the N objects that retain
 * the most, and prints them as "ID CLASS SIZE RETAINED".
 *
 *   java -cp HEAP_JAR:DIR VisualVMRetained DUMP.hprof N
 *
 * The library keeps what it computed in DUMP.hprof.hwcache: the caller
 * removes it first, or the second run only reads it back.
 */
import java.io.File;
import java.util.List;
import org.graalvm.visualvm.lib.jfluid.heap.Heap;
import org.graalvm.visualvm.lib.jfluid.heap.HeapFactory;
import org.graalvm.visualvm.lib.jfluid.heap.Instance;

public class VisualVMRetained {
	public static void main(String[] args) throws Exception {
		Heap heap = HeapFactory.createHeap(new File(args[0]));
		List<Instance> top =
			heap.getBiggestObjectsByRetainedSize(Integer.parseInt(args[1]));

		for (Instance i : top)
			System.out.printf("0x%x %s %d %d%n", i.getInstanceId(),
					  i.getJavaClass().getName(), i.getSize(),
					  i.getRetainedSize());
	}
}
