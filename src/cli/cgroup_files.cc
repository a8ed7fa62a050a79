#include "cli/cgroup_files.h"

#include <fstream>

namespace minimax::cli {
namespace {

// This process's cgroup v2 path ("0::/some/path" in /proc/self/cgroup), or "" under cgroup v1.
std::string cgroup_v2_path() {
  std::ifstream in("/proc/self/cgroup");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("0::", 0) == 0) return line.substr(3);
  return "";
}

}  // namespace

std::string first_line_of(const std::string& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

std::string cgroup_value(const std::string& v2_name, const std::string& v1_path) {
  const std::string path = cgroup_v2_path();
  if (path.empty()) return first_line_of(v1_path);
  if (std::string own = first_line_of("/sys/fs/cgroup" + path + "/" + v2_name); !own.empty())
    return own;
  return first_line_of("/sys/fs/cgroup/" + v2_name);
}

}  // namespace minimax::cli
