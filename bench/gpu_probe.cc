// One run of the agent's built-in GPU health probes (XID events, ECC, retired pages, remapped
// rows, NVLinks, throttling, temperature, presence) over 8 GPUs of the fake NVML library: its
// CPU time, divided by HealthCheckInterval, is the agent's share of a core for them.
//   build/bench/gpu_probe --benchmark_min_time=2
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "agent/host/gpu.h"
#include "agent/host/gpu_health.h"

namespace {

void BM_ProbeEightGpus(benchmark::State& state) {
  std::filesystem::path conf =
      std::filesystem::temp_directory_path() / ("gpu_probe_bench_" + std::to_string(getpid()));
  {
    std::ofstream out(conf);
    for (int i = 0; i < 8; ++i)
      out << "gpu name=\"NVIDIA H100 80GB HBM3\" uuid=GPU-bench-" << i << " minor=" << i
          << " bus=" << 0x18 + i << " cpus=0-15 links=switch:18\n";
  }
  setenv("FAKE_NVML_CONFIG", conf.c_str(), 1);
  drover::agent::GpuDiscoveryOptions options;
  options.nvml_library = DROVER_FAKE_NVML;
  auto gpus = drover::agent::DiscoverNvmlGpus(options);
  auto probe = gpus ? drover::agent::GpuHealthProbe::Open(DROVER_FAKE_NVML, *gpus)
                    : drover::Result<std::unique_ptr<drover::agent::GpuHealthProbe>>(
                          drover::MakeError("no GPUs"));
  if (!probe) {
    state.SkipWithError(probe.error().c_str());
    return;
  }
  for (auto _ : state) benchmark::DoNotOptimize((*probe)->Probe());
  std::filesystem::remove(conf);
}
BENCHMARK(BM_ProbeEightGpus)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
