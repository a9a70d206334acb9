/*
 * CartServlet.java - the webapp the Tomcat test serves: a shopping cart in
 * each HTTP session, whose size the request chooses, so that the heap dump
 * holds sessions whose contents the test knows exactly; and a checkout in
 * progress, a request that holds a cart in a local of a known frame of a
 * request thread.
 *
 * GET /shop/cart?lines=K adds K lines to the cart of the caller's session,
 * making the session (and its cart) on the first request that has no
 * session cookie. The cart is a linked list of fixed-size objects of this
 * webapp's own classes (no arrays, no JDK collections), so that what a
 * session holds is one Cart and its lines, whose sizes jcmd's class
 * histogram gives: a session with K lines retains its own objects plus
 * size(Cart) + K x size(Line), and nothing else refers to them.
 *
 * GET /shop/checkout?lines=K makes a cart of K lines in a local of
 * checkout() and waits there (at most two minutes) until GET /shop/release;
 * GET /shop/held answers how many checkouts wait, so that the test knows
 * when one does.
 */
package shop;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpSession;
import java.io.IOException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

public class CartServlet extends HttpServlet {
	private static final long serialVersionUID = 1L;

	/* the most lines one request may add: a bound on what a caller costs */
	static final int MAX_LINES = 10000;

	/* One line of a cart: an article, how many, at what price. */
	static final class Line {
		final long sku;
		final long priceCents;
		final int quantity;
		final Line next;

		Line(long sku, long priceCents, int quantity, Line next) {
			this.sku = sku;
			this.priceCents = priceCents;
			this.quantity = quantity;
			this.next = next;
		}
	}

	/* The cart a session holds under the attribute "cart". */
	static final class Cart {
		Line first;
		int lines;

		void add(long sku, long priceCents, int quantity) {
			first = new Line(sku, priceCents, quantity, first);
			lines++;
		}
	}

	/* the checkouts that wait, and the permits that let them go */
	private static final AtomicInteger held = new AtomicInteger();
	private static final Semaphore release = new Semaphore(0);

	@Override
	protected void doGet(HttpServletRequest req, HttpServletResponse resp)
			throws IOException {
		resp.setContentType("text/plain");
		switch (req.getServletPath()) {
		case "/release":
			release.release();
			resp.getWriter().printf("released%n");
			return;
		case "/held":
			resp.getWriter().printf("%d%n", held.get());
			return;
		default:
			break;
		}
		int lines;
		try {
			lines = Integer.parseInt(req.getParameter("lines"));
		} catch (NumberFormatException e) {
			resp.sendError(HttpServletResponse.SC_BAD_REQUEST,
					"lines=K wanted");
			return;
		}
		if (lines < 0 || lines > MAX_LINES) {
			resp.sendError(HttpServletResponse.SC_BAD_REQUEST,
					"lines out of range");
			return;
		}
		if (req.getServletPath().equals("/checkout"))
			checkout(lines, resp);
		else
			addToCart(lines, req, resp);
	}

	/* A cart of LINES lines, held by this frame while it waits. */
	private static void checkout(int lines, HttpServletResponse resp)
			throws IOException {
		Cart cart = new Cart();
		for (int i = 0; i < lines; i++)
			cart.add(2000 + i, 100 * (i + 1), 1);
		boolean released;
		held.incrementAndGet();
		try {
			released = release.tryAcquire(120, TimeUnit.SECONDS); // waits here
		} catch (InterruptedException e) {
			Thread.currentThread().interrupt();
			released = false;
		} finally {
			held.decrementAndGet();
		}
		/* the cart is used after the wait: it stays live in the frame */
		resp.getWriter().printf("checkout %d %s%n", cart.lines,
				released ? "released" : "timed out");
	}

	private static void addToCart(int lines, HttpServletRequest req,
			HttpServletResponse resp) throws IOException {
		HttpSession session = req.getSession(true);
		Cart cart;
		/* a session's requests may come on two connections at once */
		synchronized (session) {
			cart = (Cart) session.getAttribute("cart");
			if (cart == null) {
				cart = new Cart();
				session.setAttribute("cart", cart);
			}
			for (int i = 0; i < lines; i++)
				cart.add(1000 + i, 100 * (i + 1), 1 + i % 3);
		}
		resp.getWriter().printf("%s %d%n", session.getId(), cart.lines);
	}
}
