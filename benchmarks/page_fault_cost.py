"""Prints what a first write to a fresh page costs on this machine, in us.

`./course bench` puts it on the report's machine line: the workloads that
make goroutines by the hundred thousand (skynet, parked goroutines, the
cold runs) pay one such fault per new stack page, and the figure varies
between machines: the project's 2-core VM, on an AMD EPYC host on
2026-11-27, paid 18-20 us, and skynet ran 3-5x slower per item on stages
2-5 than in the results published on 2026-11-24 from an Intel Xeon host
(stage 3, 1 P: 792 ns, then 3.90 us), Go's 1 P figure about the same
(826, then 847 ns). Go's stacks, 2 KiB and reused, pay it far less often, so
the ratio to Go moves with it.

100,000 pages of a fresh anonymous mapping, one byte each; the loop's own
cost (a second pass over the same, now present, pages) is taken off.
"""
import mmap
import time

PAGES = 100_000
PAGE = mmap.PAGESIZE


def touch(m):
    t = time.perf_counter()
    for off in range(0, PAGES * PAGE, PAGE):
        m[off] = 1
    return time.perf_counter() - t


def main():
    m = mmap.mmap(-1, PAGES * PAGE)
    first = touch(m)
    again = touch(m)
    m.close()
    print(f"{max(first - again, 0.0) / PAGES * 1e6:.2f}")


if __name__ == "__main__":
    main()
