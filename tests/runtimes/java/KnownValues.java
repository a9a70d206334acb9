/*
 * KnownValues - an object whose primitive fields, strings and primitive
 * arrays hold known values, for the values of a heap dump (values-test.sh).
 *
 * usage: java KnownValues
 *
 * Builds one KnownValues, held by the static `held`, and prints what it
 * and its class hold, one line each, then "ready", and waits for a line
 * on standard input (the test dumps the heap then) before it prints
 * "done". The lines, which check-values.py reads:
 *
 *   value static|instance FIELD TYPE BITS   a primitive field: its value's
 *       bits as the trace carries them (signed types sign-extended, char
 *       and boolean unsigned, float and double their IEEE bits), decimal
 *   string static|instance FIELD UNITS      a String field's text: its
 *       UTF-16 code units in hex, "-" for none
 *   array FIELD TYPE LENGTH HASH ELEMENTS   a primitive array field: its
 *       elements' bits, and the 64-bit FNV-1a hash of its elements'
 *       little-endian bytes in hex, worked out here
 */
import java.io.BufferedReader;
import java.io.InputStreamReader;

public class KnownValues {
	static KnownValues held;

	/* statics of every kind, and strings of both coders */
	static int staticInt = 123456789;
	static long staticLong = -9876543210123L;
	static double staticDouble = Math.PI;
	static boolean staticFlag = true;
	static char staticChar = '\u03a9';
	static String latin1 = "caf\u00e9, na\u00efve \u00ff";
	static String utf16 = "snow \u2603, smile \ud83d\ude00, \u4e2d\u6587";

	/* one instance field of every primitive type, at their edges */
	boolean yes = true;
	boolean no;
	byte b = -128;
	short s = -32768;
	char c = '\u00e9';
	char surrogate = '\ud800';
	int i = -42;
	int big = Integer.MAX_VALUE;
	long l = Long.MIN_VALUE;
	long plain = 1234567890123L;
	float f = 3.5f;
	float tiny = Float.MIN_VALUE;
	double d = -0.0;
	double e = 1e-300;
	String name = "KnownValues instance";
	String empty = "";

	/* arrays kept whole (at most 256 bytes) and cut to a prefix and a
	 * hash (longer) */
	int[] smallInts = {1, -2, 3, Integer.MIN_VALUE, Integer.MAX_VALUE};
	byte[] bytes256 = new byte[256];
	byte[] bytes257 = new byte[257];
	long[] longs = new long[1000];
	char[] chars = "chars of a char[]".toCharArray();
	double[] doubles = {0.1, -2.5, Double.MAX_VALUE};
	boolean[] flags = {true, false, true};
	short[] shorts = new short[200];
	float[] floats = new float[100];
	int[] noInts = {};

	KnownValues() {
		for (int k = 0; k < bytes256.length; k++)
			bytes256[k] = (byte)(k * 7);
		for (int k = 0; k < bytes257.length; k++)
			bytes257[k] = (byte)(k * 13 + 1);
		for (int k = 0; k < longs.length; k++)
			longs[k] = (long)k * k * 1000003L - 5;
		for (int k = 0; k < shorts.length; k++)
			shorts[k] = (short)(k * 331);
		for (int k = 0; k < floats.length; k++)
			floats[k] = k / 3.0f;
	}

	/* ---- what it holds, printed ---------------------------------------- */

	static final StringBuilder out = new StringBuilder();

	static void value(String where, String field, String type, long bits) {
		out.append("value ").append(where).append(' ').append(field)
			.append(' ').append(type).append(' ').append(bits)
			.append('\n');
	}

	static void string(String where, String field, String text) {
		out.append("string ").append(where).append(' ').append(field);
		if (text.isEmpty())
			out.append(" -");
		for (int k = 0; k < text.length(); k++)
			out.append(String.format(" %04x", (int)text.charAt(k)));
		out.append('\n');
	}

	/* FNV-1a over little-endian element bytes, as the trace hashes */
	static long hash;

	static void hashBytes(long bits, int width) {
		for (int k = 0; k < width; k++) {
			hash ^= (bits >>> (8 * k)) & 0xff;
			hash *= 0x100000001b3L;
		}
	}

	static void array(String field, String type, int width, long[] bits) {
		hash = 0xcbf29ce484222325L;
		for (long v : bits)
			hashBytes(v, width);
		out.append("array ").append(field).append(' ').append(type)
			.append(' ').append(bits.length).append(' ')
			.append(Long.toHexString(hash));
		for (long v : bits)
			out.append(' ').append(v);
		out.append('\n');
	}

	void describe() {
		value("static", "staticInt", "int", staticInt);
		value("static", "staticLong", "long", staticLong);
		value("static", "staticDouble", "double",
		      Double.doubleToRawLongBits(staticDouble));
		value("static", "staticFlag", "boolean", staticFlag ? 1 : 0);
		value("static", "staticChar", "char", staticChar);
		string("static", "latin1", latin1);
		string("static", "utf16", utf16);
		value("instance", "yes", "boolean", yes ? 1 : 0);
		value("instance", "no", "boolean", no ? 1 : 0);
		value("instance", "b", "byte", b);
		value("instance", "s", "short", s);
		value("instance", "c", "char", c);
		value("instance", "surrogate", "char", surrogate);
		value("instance", "i", "int", i);
		value("instance", "big", "int", big);
		value("instance", "l", "long", l);
		value("instance", "plain", "long", plain);
		value("instance", "f", "float",
		      Float.floatToRawIntBits(f) & 0xffffffffL);
		value("instance", "tiny", "float",
		      Float.floatToRawIntBits(tiny) & 0xffffffffL);
		value("instance", "d", "double", Double.doubleToRawLongBits(d));
		value("instance", "e", "double", Double.doubleToRawLongBits(e));
		string("instance", "name", name);
		string("instance", "empty", empty);
		long[] v;
		v = new long[smallInts.length];
		for (int k = 0; k < v.length; k++)
			v[k] = smallInts[k];
		array("smallInts", "int", 4, v);
		v = new long[bytes256.length];
		for (int k = 0; k < v.length; k++)
			v[k] = bytes256[k];
		array("bytes256", "byte", 1, v);
		v = new long[bytes257.length];
		for (int k = 0; k < v.length; k++)
			v[k] = bytes257[k];
		array("bytes257", "byte", 1, v);
		array("longs", "long", 8, longs.clone());
		v = new long[chars.length];
		for (int k = 0; k < v.length; k++)
			v[k] = chars[k];
		array("chars", "char", 2, v);
		v = new long[doubles.length];
		for (int k = 0; k < v.length; k++)
			v[k] = Double.doubleToRawLongBits(doubles[k]);
		array("doubles", "double", 8, v);
		v = new long[flags.length];
		for (int k = 0; k < v.length; k++)
			v[k] = flags[k] ? 1 : 0;
		array("flags", "boolean", 1, v);
		v = new long[shorts.length];
		for (int k = 0; k < v.length; k++)
			v[k] = shorts[k];
		array("shorts", "short", 2, v);
		v = new long[floats.length];
		for (int k = 0; k < v.length; k++)
			v[k] = Float.floatToRawIntBits(floats[k]) & 0xffffffffL;
		array("floats", "float", 4, v);
		array("noInts", "int", 4, new long[0]);
	}

	public static void main(String[] args) throws Exception {
		held = new KnownValues();
		held.describe();
		System.out.print(out);
		System.out.println("ready");
		System.out.flush();
		new BufferedReader(new InputStreamReader(System.in)).readLine();
		System.out.println("done " + held.i);
	}
}
