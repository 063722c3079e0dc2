// gtest main for the course's tests.
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  // The runtimes are multi-threaded: a death test must re-execute the test
  // binary rather than fork a copy of a process with running threads. Set
  // before parsing, so that --gtest_death_test_style can still override it
  // (tools/aarch64/check.sh does: under qemu-user it cannot re-execute).
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  testing::InitGoogleTest(&argc, argv);
  return RUN_ALL_TESTS();
}
