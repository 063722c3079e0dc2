// gtest main for the course's tests.
#include <gtest/gtest.h>

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  // The runtimes are multi-threaded: a death test must re-execute the test
  // binary rather than fork a copy of a process with running threads.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  return RUN_ALL_TESTS();
}
