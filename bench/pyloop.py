"""bench/python.sh's workload: a fixed amount of pure-Python work.

    pyloop.py THREADS UNITS   UNITS of work split over THREADS threads
    pyloop.py --calibrate S   the UNITS one thread does in about S seconds

Prints "pyloop: threads=T wall=SECONDS cpu=SECONDS": the work time, from
the threads' start to the last join, and the process CPU time over it.
"""
import sys
import threading
import time


def unit():
    x = 0
    for i in range(1000):
        x = (x * 31 + i) % 1000003
    return x


def inner(n):
    for _ in range(n):
        unit()


def worker(n):
    inner(n)


def main():
    if sys.argv[1] == "--calibrate":
        start, n = time.perf_counter(), 200
        inner(n)
        per = (time.perf_counter() - start) / n
        print(int(float(sys.argv[2]) / per))
        return
    threads, units = int(sys.argv[1]), int(sys.argv[2])
    workers = [threading.Thread(target=worker, args=(units // threads,)) for _ in range(threads)]
    wall0, cpu0 = time.perf_counter(), time.process_time()
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    print("pyloop: threads=%d wall=%.6f cpu=%.6f" % (threads, time.perf_counter() - wall0,
                                                     time.process_time() - cpu0))


main()
