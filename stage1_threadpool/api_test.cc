// Stage 1 against the behaviour every stage must have (testing/).
#include "stage1_threadpool/api.h"
#include "testing/api_death_suite.h"
#include "testing/api_suite.h"

namespace gmp::testing {

INSTANTIATE_TYPED_TEST_SUITE_P(Stage1, ApiSuite, stage1::Api);
INSTANTIATE_TYPED_TEST_SUITE_P(Stage1, ApiDeathTest, stage1::Api);

}  // namespace gmp::testing
