#include "parallel/build_id.h"

#include <elf.h>
#include <fmt/format.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstring>

namespace minimax {
namespace {

// dl_iterate_phdr visits the executable first (empty name); its PT_NOTE segments hold the note.
int find_build_id(dl_phdr_info* info, size_t, void* out) {
  auto* id = static_cast<std::string*>(out);
  for (int i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    const auto* p = reinterpret_cast<const uint8_t*>(info->dlpi_addr + ph.p_vaddr);
    const uint8_t* end = p + ph.p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      ElfW(Nhdr) note;
      std::memcpy(&note, p, sizeof note);
      const uint8_t* name = p + sizeof note;
      const uint8_t* desc = name + ((note.n_namesz + 3) & ~3u);
      if (note.n_type == NT_GNU_BUILD_ID && note.n_namesz == 4 &&
          std::memcmp(name, "GNU", 4) == 0) {
        for (uint32_t b = 0; b < note.n_descsz; ++b) *id += fmt::format("{:02x}", desc[b]);
        return 1;
      }
      p = desc + ((note.n_descsz + 3) & ~3u);
    }
  }
  return 1;  // only the executable itself
}

}  // namespace

std::string program_build_id() {
  std::string id;
  dl_iterate_phdr(find_build_id, &id);
  if (!id.empty()) return id;
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof path - 1);
  struct stat st {};
  if (n > 0) {
    path[n] = '\0';
    stat(path, &st);
  }
  return fmt::format("file:{}:{}:{}", n > 0 ? path : "?", static_cast<long long>(st.st_size),
                     static_cast<long long>(st.st_mtime));
}

}  // namespace minimax
