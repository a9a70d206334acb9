// KnownSites.java - a program whose allocation sites are known, for
// sites-test.sh: three methods, each allocating byte arrays of its own size
// at one line that says "SITE name" in a comment, so that the test finds
// the line in this file.
//
//   keep    KEPT arrays of 1000 bytes, held in a static list to the end;
//   churn   CHURNED arrays of 200 bytes, each dropped at once (kept in a
//           static slot first, so that the JIT cannot leave it out);
//   old     OLD arrays of 3000 bytes, held through GCS System.gc()s and
//           then dropped.
//
// usage: java KnownSites KEPT CHURNED OLD GCS
// Prints each site's count and its arrays' size in bytes as the JVM lays
// them out ("site keep 20000 1016"), then "done".
import java.util.ArrayList;
import java.util.List;

public class KnownSites {
	static final List<byte[]> kept = new ArrayList<>();
	static List<byte[]> old = new ArrayList<>();
	static volatile byte[] sink;

	static void keep(int n) {
		for (int i = 0; i < n; i++) {
			byte[] b = new byte[1000]; // SITE keep
			kept.add(b);
		}
	}

	static void churn(int n) {
		for (int i = 0; i < n; i++) {
			sink = new byte[200]; // SITE churn
		}
	}

	static void makeOld(int n) {
		for (int i = 0; i < n; i++) {
			byte[] b = new byte[3000]; // SITE old
			old.add(b);
		}
	}

	public static void main(String[] args) {
		int nKept = Integer.parseInt(args[0]);
		int nChurned = Integer.parseInt(args[1]);
		int nOld = Integer.parseInt(args[2]);
		int gcs = Integer.parseInt(args[3]);

		// the lists' own arrays grow at sites of ArrayList's, not ours
		((ArrayList<byte[]>) kept).ensureCapacity(nKept);
		((ArrayList<byte[]>) old).ensureCapacity(nOld);
		makeOld(nOld);
		keep(nKept);
		for (int i = 0; i < gcs; i++) {
			churn(nChurned / gcs);
			System.gc();
		}
		churn(nChurned % gcs);
		old = null;
		System.gc();
		// header 16 bytes, the elements rounded up to 8
		System.out.println("site keep " + nKept + " " + arraySize(1000));
		System.out.println("site churn " + nChurned + " " + arraySize(200));
		System.out.println("site old " + nOld + " " + arraySize(3000));
		System.out.println("done");
	}

	static long arraySize(int length) {
		return (16 + length + 7) / 8 * 8;
	}
}
