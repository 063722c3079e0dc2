"""The `exercise` macro: one graded exercise's targets.

An exercise folder holds the files the student edits (`srcs`, skeletons),
the interface they implement (`hdrs`, fixed), the visible tests and, in
`solution/`, the reference solution: files with the same names as `srcs`.
The macro makes:

  :student        the student's code (tagged manual: a skeleton or code in
                  progress must not break `bazel test //...`)
  :student_test   the tests against it (manual; `./course grade` runs it)
  :solution       the reference solution, only if solution/ is present
  :solution_test  the tests against it; part of `bazel test //...`, so CI
                  runs every reference solution, also under the sanitizers

A teacher strips the solutions by deleting the solution/ folders (and
mutants/, patches to them); the solution targets then disappear and
everything else still builds.
"""

def exercise(name, srcs, hdrs = [], tests = [], deps = [], test_deps = [],
             size = "medium", linkopts = []):
    """Declares one exercise (see the file comment).

    Args:
      name: the exercise's id, as its folder (e.g. "05_local_runq").
      srcs: the files the student edits (.cc or .S).
      hdrs: the interface, fixed.
      tests: the visible tests (one cc_test, gtest).
      deps: libraries the student's code may use.
      test_deps: extra libraries for the tests.
      size: the tests' Bazel size.
      linkopts: link options for both libraries.
    """
    _variant("student", srcs, hdrs, tests, deps, test_deps, size, linkopts,
             ["manual"])
    solution = ["solution/" + s for s in srcs]
    found = native.glob(solution)
    if len(found) == len(solution):
        _variant("solution", solution, hdrs, tests, deps, test_deps, size,
                 linkopts, [])
    elif found:
        fail("exercise %s: solution/ is incomplete: has %s, needs %s" %
             (name, found, solution))

def _variant(kind, srcs, hdrs, tests, deps, test_deps, size, linkopts, tags):
    native.cc_library(
        name = kind,
        srcs = srcs,
        hdrs = hdrs,
        deps = deps + ["//exercises/testing:skeleton"],
        linkopts = linkopts,
        # The tests call the exercise's functions through the interface
        # only: link them in whole, so a symbol nobody else names stays.
        alwayslink = True,
        tags = tags,
    )
    native.cc_test(
        name = kind + "_test",
        size = size,
        srcs = tests,
        deps = [":" + kind, "//exercises/testing:harness"] + test_deps,
        # One executable, the exercise's code linked in (not a shared
        # library beside it): what link-time wrapping sees (lock_count).
        linkstatic = True,
        tags = tags,
    )
