"""A Python workload that knows its own truth (tests/e2e/test_python.c).

    shares.py shares SECONDS TRUTH   four functions take 40/30/20/10 % of the CPU
                                     (thirty calls zlib.compress for half its time)
    shares.py threads SECONDS TRUTH  three threads, each with its own functions
    shares.py children SECONDS TRUTH two forked children (multiprocessing) and one started
                                     anew (subprocess) run child_work, then the parent
                                     runs parent_work, each for SECONDS of CPU
    shares.py naps SECONDS TRUTH     work (CPU) and nap (time.sleep) take turns, 20 ms each;
                                     TRUTH has their wall times
    shares.py serve STOP             a server: works until the file STOP exists
    shares.py metered POWER SECONDS TRUTH
                                     its own power meter: phase_9w, phase_3w and phase_1w
                                     take turns (8 to 12 ms of CPU each), each writing its
                                     power in mW into the file POWER as it starts; TRUTH
                                     gets each one's energy, NAME JOULES (power x its CPU
                                     time)

Each function measures the CPU time it took (time.thread_time, inclusive) and
TRUTH gets one line per function: NAME SECONDS.  serve prints "ready" once
working and "served N" at the end.
"""
import os
import sys
import threading
import time
import zlib

DATA = bytes(range(256)) * 512


def spin_until(end):
    x = 0
    while time.thread_time() < end:
        for i in range(200):
            x += i * i
    return x


def forty(slice_s):
    spin_until(time.thread_time() + 0.4 * slice_s)


def thirty(slice_s):
    start = time.thread_time()
    end = start + 0.15 * slice_s
    while time.thread_time() < end:
        zlib.compress(DATA, 6)
    spin_until(start + 0.3 * slice_s)


def twenty(slice_s):
    spin_until(time.thread_time() + 0.2 * slice_s)


def ten(slice_s):
    spin_until(time.thread_time() + 0.1 * slice_s)


def timed(fn, truth, *args):
    start = time.thread_time()
    fn(*args)
    truth[fn.__name__] = truth.get(fn.__name__, 0.0) + time.thread_time() - start


def write_truth(path, truth):
    with open(path, "w") as f:
        for name, seconds in sorted(truth.items()):
            f.write("%s %.6f\n" % (name, seconds))


def shares(seconds, path):
    truth = {}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for fn in (forty, thirty, twenty, ten):
            timed(fn, truth, 0.05)
    write_truth(path, truth)


def alpha_work(end, truth):
    while time.monotonic() < end:
        timed(alpha_step, truth)


def alpha_step():
    spin_until(time.thread_time() + 0.004)


def beta_work(end, truth):
    while time.monotonic() < end:
        timed(beta_step, truth)


def beta_step():
    spin_until(time.thread_time() + 0.004)


def gamma_work(end, truth):
    while time.monotonic() < end:
        timed(gamma_step, truth)


def gamma_step():
    spin_until(time.thread_time() + 0.004)


def threads(seconds, path):
    truth = {}
    end = time.monotonic() + seconds
    workers = [threading.Thread(target=fn, args=(end, truth), name=fn.__name__)
               for fn in (alpha_work, beta_work, gamma_work)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    write_truth(path, truth)


def child_work(seconds):
    start = time.thread_time()
    spin_until(start + seconds)
    return time.thread_time() - start


def parent_work(seconds):
    start = time.thread_time()
    spin_until(start + seconds)
    return time.thread_time() - start


def children(seconds, path):
    import multiprocessing
    import subprocess
    with multiprocessing.get_context("fork").Pool(2) as pool:
        child = sum(pool.map(child_work, [seconds, seconds]))
    ran = subprocess.run([sys.executable, __file__, "child", str(seconds)], check=True,
                         stdout=subprocess.PIPE, text=True)
    child += float(ran.stdout)
    write_truth(path, {"child_work": child, "parent_work": parent_work(seconds)})


def work():
    start = time.perf_counter()
    spin_until(time.thread_time() + 0.02)
    return time.perf_counter() - start


def nap():
    start = time.perf_counter()
    time.sleep(0.02)
    return time.perf_counter() - start


def naps(seconds, path):
    truth = {"work": 0.0, "nap": 0.0}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        truth["work"] += work()
        truth["nap"] += nap()
    write_truth(path, truth)


class Handler:
    def handle(self, n):
        return sum(i * i for i in range(n))


def serve(stop):
    handler = Handler()
    served = 0
    print("ready", flush=True)
    while served % 64 or not os.path.exists(stop):
        handler.handle(2000)
        served += 1
    print("served %d" % served, flush=True)


def phase_9w(until):
    spin_until(until)


def phase_3w(until):
    spin_until(until)


def phase_1w(until):
    spin_until(until)


def metered(power_path, seconds, path):
    import random
    fd = os.open(power_path, os.O_WRONLY | os.O_CREAT, 0o644)
    rng = random.Random(os.getpid())
    truth = {}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        for fn, mw in ((phase_9w, 9000), (phase_3w, 3000), (phase_1w, 1000)):
            os.pwrite(fd, b"%6d\n" % mw, 0)
            start = time.thread_time()
            fn(start + 0.008 + 0.004 * rng.random())
            joules = mw / 1000 * (time.thread_time() - start)
            truth[fn.__name__] = truth.get(fn.__name__, 0.0) + joules
    os.close(fd)
    write_truth(path, truth)


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "shares":
        shares(float(sys.argv[2]), sys.argv[3])
    elif mode == "threads":
        threads(float(sys.argv[2]), sys.argv[3])
    elif mode == "naps":
        naps(float(sys.argv[2]), sys.argv[3])
    elif mode == "children":
        children(float(sys.argv[2]), sys.argv[3])
    elif mode == "metered":
        metered(sys.argv[2], float(sys.argv[3]), sys.argv[4])
    elif mode == "child":
        print(child_work(float(sys.argv[2])))
    else:
        serve(sys.argv[2])
