"""Prints what a first write to a fresh page costs on this machine, in us.

`./course bench` puts it on the report's machine line: the workloads that
make goroutines by the hundred thousand (skynet, parked goroutines, the
cold runs) pay one such fault per new stack page, and the figure varies
between machines by several times (a VM pays for the trap), so the stages'
figures for those workloads move with it. Go's stacks, 2 KiB and reused,
pay it far less often, so the ratio to Go moves with it too.

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
