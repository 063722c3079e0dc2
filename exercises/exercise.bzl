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
  :student_relacy_test, :solution_relacy_test
                  with `relacy_tests`: those tests against the same code
                  built with GMP_RELACY, where gmp::exercises::Atomic is
                  Relacy's simulated atomic (exercises/testing/atomic.h),
                  and with the standard library's bounds checks on

A teacher strips the solutions by deleting the solution/ folders (and
mutants/, patches to them); the solution targets then disappear and
everything else still builds.
"""

def exercise(name, srcs, hdrs = [], tests = [], deps = [], test_deps = [],
             size = "medium", linkopts = [], relacy_tests = []):
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
      relacy_tests: the memory-model tests (one cc_test, gtest, running
        rl::simulate), if the exercise has them.
    """
    _variant("student", srcs, hdrs, tests, deps, test_deps, size, linkopts,
             ["manual"], relacy_tests)
    solution = ["solution/" + s for s in srcs]
    found = native.glob(solution)
    if len(found) == len(solution):
        _variant("solution", solution, hdrs, tests, deps, test_deps, size,
                 linkopts, [], relacy_tests)
    elif found:
        fail("exercise %s: solution/ is incomplete: has %s, needs %s" %
             (name, found, solution))

def _variant(kind, srcs, hdrs, tests, deps, test_deps, size, linkopts, tags,
             relacy_tests):
    _library_and_test(kind, srcs, hdrs, tests, deps, test_deps, size,
                      linkopts, tags, [])
    if relacy_tests:
        # The memory-model check build: GMP_RELACY for the code and the
        # tests (a define that follows the library to its dependents), and
        # the standard library's checks of array bounds, so that a run in
        # which the code overruns a buffer fails at once.
        # Tagged: the sanitizer configs leave it out (.bazelrc).
        _library_and_test(kind + "_relacy", srcs, hdrs, relacy_tests, deps,
                          test_deps, size, linkopts, tags + ["relacy"],
                          ["GMP_RELACY", "_GLIBCXX_ASSERTIONS"])

def _library_and_test(kind, srcs, hdrs, tests, deps, test_deps, size,
                      linkopts, tags, defines):
    native.cc_library(
        name = kind,
        srcs = srcs,
        hdrs = hdrs,
        defines = defines,
        deps = deps + [
            "//exercises/testing:atomic",
            "//exercises/testing:skeleton",
        ],
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
