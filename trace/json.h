/// \file
/// Turns a run's events into Chrome Trace Event JSON, which
/// ui.perfetto.dev and chrome://tracing open.
///
/// ```unparsed
/// The file's tracks (a "process" groups threads, a "thread" is a track):
///
///   process "Ps"  thread "P0", "P1"...  a slice per goroutine run on the
///                                       P ("G7 main()::{lambda()#1}"),
///                                       instants for go, GRQ moves, steals,
///                                       counters "runq P0" and "GRQ"
///   process "Ms"  thread "M0", "M1"...  the same runs on the M, nested
///                                       "syscall" slices, "spinning" and
///                                       "idle" slices; "sysmon" and "run()"
///
/// Steals are flow arrows from the victim P to the thief P, hand-offs from
/// the M that gave a P up to the M that got it (v2 flows: the "bind_id" of
/// two zero-length "X" slices, one flow_out, one flow_in).
///
/// The events of every buffer are merged by timestamp and replayed through
/// a small state machine that knows, for each goroutine, the P whose slice
/// it has open: a kGoStop closes that slice and the M's. Slices are "B"/"E"
/// pairs; the writer never emits an "E" without its "B", and closes at the
/// end any slice a dropped event left open, counting it in "otherData".
/// ```
#pragma once

#include <ostream>
#include <vector>

#include "trace/tracer.h"

namespace gmp::trace {

/// Writes the events of `buffers` as one Chrome Trace Event JSON object
/// ({"traceEvents": [...], "otherData": {...}}) to `out`.
void write_chrome_json(std::ostream& out,
                       const std::vector<const Buffer*>& buffers,
                       const RunInfo& info);

/// The readable name of a goroutine's function from its std::type_info
/// (demangled, without "(anonymous namespace)::": "main()::{lambda()#1}"),
/// or "" for null.
std::string function_label(const void* type_info);

}  // namespace gmp::trace
