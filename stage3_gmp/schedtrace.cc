// Go's schedtrace (GODEBUG=schedtrace=X,scheddetail=1), through GMP_DEBUG.
#include <chrono>
#include <mutex>
#include <string>

#include "stage3_gmp/runtime.h"

namespace gmp::stage3 {
namespace {

// Go's numbering of goroutine states: GStatus uses it (stage2 g.h).
int go_status(GStatus s) { return static_cast<int>(s); }

// Go's numbering of P states: PStatus uses it (p.h).
int go_status(PStatus s) { return static_cast<int>(s); }

std::string id_or_nil(long long id) {
  return id < 0 ? "nil" : std::to_string(id);
}

}  // namespace

std::string Runtime::schedtrace(bool detailed) const {
  std::lock_guard lk(sched_);  // before started_at_: run() writes it under it
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                std::chrono::steady_clock::now() - started_at_)
                .count();
  int procs = gomaxprocs_.load(std::memory_order_relaxed);
  std::string out = "SCHED " + std::to_string(ms) +
                    "ms: gomaxprocs=" + std::to_string(procs) +
                    " idleprocs=" + std::to_string(npidle_.load()) +
                    " threads=" + std::to_string(mcount_) +
                    " spinningthreads=" + std::to_string(nmspinning_.load()) +
                    " idlethreads=" + std::to_string(nmidle_) +
                    " runqueue=" + std::to_string(grq_size_.load());
  if (!detailed) {
    out += " [";
    for (int i = 0; i < procs; ++i) {
      out += (i == 0 ? "" : " ") +
             std::to_string(allp_[i]->runq.size());
    }
    return out + "]\n";
  }
  out += " gcwaiting=" + std::to_string(gcwaiting_.load() ? 1 : 0) +
         " nmidlelocked=0 stopwait=" + std::to_string(stopwait_) +
         " sysmonwait=0\n";
  for (int i = 0; i < procs; ++i) {
    const P& p = *allp_[i];
    out += "  P" + std::to_string(i) +
           ": status=" + std::to_string(go_status(p.status.load())) +
           " schedtick=" + std::to_string(p.schedtick.load()) +
           " syscalltick=0 m=" + id_or_nil(p.m_id.load()) +
           " runqsize=" + std::to_string(p.runq.size()) +
           " gfreecnt=" + std::to_string(p.gfreecnt.load()) +
           " timerslen=0\n";
  }
  for (const auto& m : allm_) {
    std::uint64_t curg = m->curg_goid.load();
    out += "  M" + std::to_string(m->id) + ": p=" + id_or_nil(m->p_id.load()) +
           " curg=" + id_or_nil(curg == 0 ? -1 : static_cast<long long>(curg)) +
           " mallocing=0 throwing=0 preemptoff= locks=0 dying=0 spinning=" +
           (m->spinning.load() ? "true" : "false") +
           " blocked=" + (m->idle ? "true" : "false") + " lockedg=nil\n";
  }
  std::lock_guard gl(allglock_);
  for (const auto& g : allgs_) {  // live goroutines (Go lists dead ones too)
    GStatus s = g->readgstatus();
    if (s == GStatus::kDead) continue;
    int m = s == GStatus::kRunning ? g->last_m.load() : -1;
    out += "  G" + std::to_string(g->goid) +
           ": status=" + std::to_string(go_status(s)) + "(" +
           std::string(to_string(g->waitreason.load())) +
           ") m=" + id_or_nil(m) + " lockedm=nil\n";
  }
  return out;
}

}  // namespace gmp::stage3
