// Exercise 02: write these functions (see README.md). The fields are in
// chan.h, each with what protects it.
#include "exercises/02_channel/chan.h"

#include "exercises/testing/skeleton.h"

namespace gmp::exercises::chan {

Chan::Chan(std::size_t capacity) : cap_(capacity) {
  not_written("Chan::Chan (exercises/02_channel/chan.cc)");
}

void Chan::send(int v) {
  (void)v;
  not_written("Chan::send (exercises/02_channel/chan.cc)");
}

std::optional<int> Chan::recv() {
  not_written("Chan::recv (exercises/02_channel/chan.cc)");
}

void Chan::close() {
  not_written("Chan::close (exercises/02_channel/chan.cc)");
}

std::size_t Chan::len() const {
  not_written("Chan::len (exercises/02_channel/chan.cc)");
}

std::size_t Chan::cap() const {
  not_written("Chan::cap (exercises/02_channel/chan.cc)");
}

}  // namespace gmp::exercises::chan
