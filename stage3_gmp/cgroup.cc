#include "stage3_gmp/cgroup.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>
#include <vector>

namespace gmp::stage3 {
namespace {

// The cgroup of this process, as found in mountinfo and /proc/self/cgroup.
struct CgroupDir {
  std::string path;  // directory of the control files
  bool v1 = false;   // cpu.cfs_* files (v1) or cpu.max (v2)
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, sep);) out.push_back(part);
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// A cgroup mount: where it is, and which directory of the hierarchy it is.
struct Mount {
  std::string point, root;
  bool found = false;
};

// From mountinfo ("36 35 98:0 /root /point opts [tags] - fstype src super"):
// the cgroup2 mount, and the v1 mount of the cpu controller (which wins).
void find_mounts(const std::string& root, Mount& v1, Mount& v2) {
  std::ifstream in(root + "/proc/self/mountinfo");
  for (std::string line; std::getline(in, line);) {
    std::vector<std::string> f = split(line, ' ');
    auto dash = std::find(f.begin(), f.end(), "-");
    if (f.size() < 5 || dash == f.end() || f.end() - dash < 4) continue;
    const std::string& fstype = *(dash + 1);
    const std::string& super_options = *(dash + 3);
    if (fstype == "cgroup2" && !v2.found) {
      v2 = {f[4], f[3], true};
    } else if (fstype == "cgroup" && contains(split(super_options, ','), "cpu")) {
      v1 = {f[4], f[3], true};
    }
  }
}

// The mount point plus the process's cgroup path below the mount's root.
std::string join(const Mount& m, const std::string& cgroup_path) {
  std::string rel = cgroup_path;
  if (m.root != "/" && rel.rfind(m.root, 0) == 0) rel = rel.substr(m.root.size());
  return m.point + rel;
}

std::optional<CgroupDir> find_cgroup(const std::string& root) {
  Mount v1, v2;
  find_mounts(root, v1, v2);
  std::ifstream in(root + "/proc/self/cgroup");
  std::optional<CgroupDir> found;
  for (std::string line; std::getline(in, line);) {  // "id:controllers:path"
    auto a = line.find(':'), b = line.find(':', a + 1);
    if (a == std::string::npos || b == std::string::npos) continue;
    std::string id = line.substr(0, a), path = line.substr(b + 1);
    if (v1.found && contains(split(line.substr(a + 1, b - a - 1), ','), "cpu")) {
      return CgroupDir{root + join(v1, path), true};  // v1 cpu wins
    }
    if (id == "0" && v2.found) found = CgroupDir{root + join(v2, path), false};
  }
  return found;
}

std::optional<long long> read_number(const std::string& file) {
  std::ifstream in(file);
  long long v = 0;
  if (!(in >> v)) return std::nullopt;
  return v;
}

}  // namespace

int affinity_cpu_count() noexcept {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return 1;
  return std::max(1, CPU_COUNT(&set));
}

std::optional<double> cgroup_cpu_limit(const std::string& root) {
  std::optional<CgroupDir> dir = find_cgroup(root);
  if (!dir) return std::nullopt;
  long long quota = -1, period = 0;
  if (dir->v1) {
    auto q = read_number(dir->path + "/cpu.cfs_quota_us");
    auto p = read_number(dir->path + "/cpu.cfs_period_us");
    if (!q || !p) return std::nullopt;
    quota = *q;
    period = *p;
  } else {  // cpu.max: "max 100000" (no limit) or "quota period"
    std::ifstream in(dir->path + "/cpu.max");
    std::string q;
    if (!(in >> q >> period) || q == "max") return std::nullopt;
    try {
      quota = std::stoll(q);
    } catch (...) {
      return std::nullopt;
    }
  }
  if (quota < 0 || period <= 0) return std::nullopt;  // v1: -1 = no limit
  return static_cast<double>(quota) / static_cast<double>(period);
}

int default_gomaxprocs(int cpus, std::optional<double> cgroup_limit) noexcept {
  if (!cgroup_limit) return cpus;
  int limit = std::max(2, static_cast<int>(std::ceil(*cgroup_limit)));
  return std::min(cpus, limit);
}

}  // namespace gmp::stage3
