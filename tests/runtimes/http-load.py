#!/usr/bin/env python3
"""http-load.py - loopback load for a web service (the pause benchmark,
tests/bench/bench-clr-pauses.sh; the attach to the webapi template,
clr/attach-webapi-test.sh): waits until PORT answers, then sends
REQUESTS GETs of PATH over CONNECTIONS keep-alive connections at once,
and prints "requests N failed M seconds S".

usage: http-load.py PORT PATH REQUESTS CONNECTIONS [WAIT_SECONDS]
"""
import http.client
import sys
import threading
import time


def wait_for(port, path, seconds):
    end = time.time() + seconds
    while time.time() < end:
        try:
            c = http.client.HTTPConnection("127.0.0.1", port, timeout=5)
            c.request("GET", path)
            c.getresponse().read()
            c.close()
            return True
        except OSError:
            time.sleep(0.1)
    return False


def client(port, path, n, failed, lock):
    c = None
    for _ in range(n):
        try:
            if c is None:
                c = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
            c.request("GET", path)
            r = c.getresponse()
            r.read()
            if r.status != 200:
                raise OSError("status %d" % r.status)
        except (OSError, http.client.HTTPException):
            with lock:
                failed[0] += 1
            c = None


def main():
    if len(sys.argv) < 5:
        sys.exit(__doc__)
    port, path = int(sys.argv[1]), sys.argv[2]
    total, conns = int(sys.argv[3]), int(sys.argv[4])
    wait = float(sys.argv[5]) if len(sys.argv) > 5 else 60
    if not wait_for(port, path, wait):
        sys.exit("http-load.py: nothing answers on port %d after %g s"
                 % (port, wait))
    failed, lock = [0], threading.Lock()
    start = time.time()
    threads = [threading.Thread(target=client,
                                args=(port, path,
                                      total // conns + (i < total % conns),
                                      failed, lock))
               for i in range(conns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    print("requests %d failed %d seconds %.1f"
          % (total, failed[0], time.time() - start))
    sys.exit(1 if failed[0] else 0)


if __name__ == "__main__":
    main()
