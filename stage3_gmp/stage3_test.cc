// Stage 3's tests: the behaviour every stage must have (testing/), then
// what stage 3 adds.
#include <gtest/gtest.h>

#include "stage3_gmp/api.h"
#include "testing/api_death_suite.h"
#include "testing/api_suite.h"

namespace gmp::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(Stage3, ApiSuite, stage3::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage3, ApiDeathTest, stage3::Api);

}  // namespace gmp::testing
