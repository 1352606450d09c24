"""pycheck: the assertions of the Python test helpers, as check.h is the C tests': check() counts a condition
and says on stderr what failed; add() takes in another program's counts; summary() prints the closing line
"N passed, N failed" and returns the exit code (rc when it is not 0, else 1 if anything failed).

A helper imports it with tests/lib on its path:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
"""
import sys

passed = failed = 0


def check(cond, what):
    global passed, failed
    if cond:
        passed += 1
    else:
        failed += 1
        print("FAIL:", what, file=sys.stderr)
    return bool(cond)


def add(p, f):
    global passed, failed
    passed += p
    failed += f


def summary(rc=0):
    print("%d passed, %d failed" % (passed, failed))
    return rc if rc else (1 if failed else 0)
