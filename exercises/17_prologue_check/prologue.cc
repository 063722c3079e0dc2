// Exercise 17: write these functions (see README.md and prologue.h).
#include "exercises/17_prologue_check/prologue.h"

#include "exercises/testing/skeleton.h"

namespace gmp::exercises::prologue {

void preemptone(G& gp) {
  (void)gp;
  not_written("preemptone (exercises/17_prologue_check/prologue.cc)");
}

bool needs_morestack(std::uintptr_t sp, std::uintptr_t stackguard0,
                     std::size_t framesize) {
  (void)sp;
  (void)stackguard0;
  (void)framesize;
  not_written("needs_morestack (exercises/17_prologue_check/prologue.cc)");
}

Morestack newstack(G& gp, const M& m, std::uintptr_t sp,
                   std::size_t max_frame) {
  (void)gp;
  (void)m;
  (void)sp;
  (void)max_frame;
  not_written("newstack (exercises/17_prologue_check/prologue.cc)");
}

void releasem(G& gp, M& m) {
  (void)gp;
  (void)m;
  not_written("releasem (exercises/17_prologue_check/prologue.cc)");
}

void execute(G& gp) {
  (void)gp;
  not_written("execute (exercises/17_prologue_check/prologue.cc)");
}

}  // namespace gmp::exercises::prologue
