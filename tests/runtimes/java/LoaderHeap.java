/*
 * LoaderHeap.java - a class loader whose retained size is known by hand
 * (check-loader.py): DirLoader defines Kept, Dropped1 and Dropped2 from
 * the class files in a directory; the program keeps an instance of Kept
 * and none of the others, whose classes stay loaded, held by the loader
 * alone, each with a static array. Prints "ready" and waits for a line on
 * standard input (a dump is taken then), and then exits.
 *
 * usage: java LoaderHeap DIR
 */
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;

public class LoaderHeap {
	/* the directory, here rather than in the loader, so that the loader
	 * holds nothing but what ClassLoader has */
	static Path dir;
	static ClassLoader loader;
	static Object kept;

	/* No field of its own: what it holds is ClassLoader's. */
	static final class DirLoader extends ClassLoader {
		DirLoader() {
			super(LoaderHeap.class.getClassLoader());
		}

		@Override
		protected Class<?> findClass(String name)
				throws ClassNotFoundException {
			try {
				byte[] b = Files.readAllBytes(
					dir.resolve(name + ".class"));
				return defineClass(name, b, 0, b.length);
			} catch (IOException e) {
				throw new ClassNotFoundException(name, e);
			}
		}
	}

	public static void main(String[] args) throws Exception {
		dir = Paths.get(args[0]);
		loader = new DirLoader();
		kept = loader.loadClass("Kept").getDeclaredConstructor()
			.newInstance();
		Class.forName("Dropped1", true, loader);
		Class.forName("Dropped2", true, loader);
		System.out.println("ready");
		System.out.flush();
		System.in.read();
	}
}
