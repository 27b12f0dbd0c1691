// Copies between protobuf's repeated fields and std::vector, for the codecs (wire/) and the
// controller's store records (ctld/records.cc). Header-only; it converts and decides nothing.
#pragma once

#include <vector>

namespace drover::wire {

template <typename T, typename Repeated>
std::vector<T> ToVector(const Repeated& repeated) {
  return std::vector<T>(repeated.begin(), repeated.end());
}

template <typename Repeated, typename Values>
void Assign(const Values& values, Repeated* out) {
  out->Add(values.begin(), values.end());
}

}  // namespace drover::wire
