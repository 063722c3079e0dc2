// Stage 2's tests: the behaviour every stage must have (testing/), then
// what stage 2 adds.
#include <gtest/gtest.h>

#include "stage2_global_queue/api.h"
#include "testing/api_death_suite.h"
#include "testing/api_suite.h"

namespace gmp::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(Stage2, ApiSuite, stage2::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage2, ApiDeathTest, stage2::Api);

}  // namespace gmp::testing
