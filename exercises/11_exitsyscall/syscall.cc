// Exercise 11: write these functions (see README.md). Each memory order you
// choose should come with a one-line reason.
#include "exercises/11_exitsyscall/syscall.h"

#include "exercises/testing/skeleton.h"

namespace gmp::exercises::syscall {

void Sched::entersyscall(M* m) {
  (void)m;
  not_written("Sched::entersyscall (exercises/11_exitsyscall/syscall.cc)");
}

ExitPath Sched::exitsyscall(M* m) {
  (void)m;
  not_written("Sched::exitsyscall (exercises/11_exitsyscall/syscall.cc)");
}

bool Sched::exitsyscallfast(M* m, P* oldp) {
  (void)m;
  (void)oldp;
  not_written("Sched::exitsyscallfast (exercises/11_exitsyscall/syscall.cc)");
}

ExitPath Sched::exitsyscall0(M* m) {
  (void)m;
  not_written("Sched::exitsyscall0 (exercises/11_exitsyscall/syscall.cc)");
}

bool Sched::retake(P* pp) {
  (void)pp;
  not_written("Sched::retake (exercises/11_exitsyscall/syscall.cc)");
}

}  // namespace gmp::exercises::syscall
