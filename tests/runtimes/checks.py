"""checks.py - what the runtime tests' checking scripts (check-fields.py,
check-same-run.py) share: a tally of checks that prints each as it goes.
"""


class Result:
    def __init__(self, label):
        self.label = label + ": " if label else ""
        self.failed = 0

    def check(self, ok, what):
        print(("ok: " if ok else "FAIL: ") + self.label + what)
        if not ok:
            self.failed += 1
