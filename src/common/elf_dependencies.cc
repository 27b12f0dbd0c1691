// See elf_dependencies.h. Offsets and tags are the System V ABI's (elf(5)).
#include "common/elf_dependencies.h"

#include <cstdint>
#include <cstring>
#include <optional>

#include "common/text.h"

namespace drover {
namespace {

constexpr uint32_t kLoad = 1, kDynamic = 2;                               // p_type
constexpr uint64_t kNeeded = 1, kStrtab = 5, kRpath = 15, kRunpath = 29;  // d_tag

template <typename T>
std::optional<T> At(std::string_view bytes, uint64_t offset) {
  if (offset > bytes.size() || bytes.size() - offset < sizeof(T)) return std::nullopt;
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

struct Segment {
  uint32_t type = 0;
  uint64_t offset = 0, vaddr = 0, filesz = 0;
};

std::optional<Segment> ProgramHeader(std::string_view bytes, uint64_t at) {
  auto type = At<uint32_t>(bytes, at);
  auto offset = At<uint64_t>(bytes, at + 8);
  auto vaddr = At<uint64_t>(bytes, at + 16);
  auto filesz = At<uint64_t>(bytes, at + 32);
  if (!type || !offset || !vaddr || !filesz) return std::nullopt;
  return Segment{*type, *offset, *vaddr, *filesz};
}

// The file offset of a virtual address, through the loadable segment that holds it.
std::optional<uint64_t> FileOffset(const std::vector<Segment>& loads, uint64_t address) {
  for (const Segment& load : loads)
    if (address >= load.vaddr && address - load.vaddr < load.filesz)
      return load.offset + (address - load.vaddr);
  return std::nullopt;
}

std::optional<std::string> StringAt(std::string_view bytes, uint64_t offset) {
  if (offset >= bytes.size()) return std::nullopt;
  size_t end = bytes.find('\0', offset);
  if (end == std::string_view::npos) return std::nullopt;
  return std::string(bytes.substr(offset, end - offset));
}

}  // namespace

Result<ElfDependencies> ReadElfDependencies(std::string_view bytes) {
  if (bytes.size() < 64 || !bytes.starts_with("\x7f"
                                              "ELF"))
    return MakeError("not an ELF file");
  if (bytes[4] != 2 || bytes[5] != 1)
    return MakeError("not a 64-bit little-endian ELF file (the only kind read)");
  uint64_t phoff = *At<uint64_t>(bytes, 32);
  uint16_t phentsize = *At<uint16_t>(bytes, 54), phnum = *At<uint16_t>(bytes, 56);
  std::vector<Segment> loads;
  std::optional<Segment> dynamic;
  for (uint16_t i = 0; i < phnum; ++i) {
    auto segment = ProgramHeader(bytes, phoff + uint64_t{i} * phentsize);
    if (!segment) return MakeError("truncated program headers");
    if (segment->type == kLoad) loads.push_back(*segment);
    if (segment->type == kDynamic) dynamic = segment;
  }
  ElfDependencies found;
  if (!dynamic) return found;
  found.dynamic = true;
  std::vector<std::pair<uint64_t, uint64_t>> entries;
  std::optional<uint64_t> strtab;
  for (uint64_t at = dynamic->offset; at + 16 <= dynamic->offset + dynamic->filesz; at += 16) {
    auto tag = At<uint64_t>(bytes, at);
    auto value = At<uint64_t>(bytes, at + 8);
    if (!tag || !value) return MakeError("truncated dynamic section");
    if (*tag == 0) break;
    if (*tag == kStrtab) strtab = FileOffset(loads, *value);
    entries.emplace_back(*tag, *value);
  }
  if (!strtab) return MakeError("dynamic section without a string table");
  for (const auto& [tag, value] : entries) {
    if (tag != kNeeded && tag != kRpath && tag != kRunpath) continue;
    std::optional<std::string> text = StringAt(bytes, *strtab + value);
    if (!text) return MakeError("a dynamic entry's name lies outside the file");
    if (tag == kNeeded) found.needed.push_back(*text);
    std::vector<std::string>& list = tag == kRpath ? found.rpath : found.runpath;
    if (tag != kNeeded)
      for (const std::string& directory : Split(*text, ':'))
        if (!directory.empty()) list.push_back(directory);
  }
  return found;
}

}  // namespace drover
