# Tests only: fake_nvml.c built as a stand-in libnvidia-ml that gpu_test.cc loads with dlopen,
# so the NVML path is tested on hosts without NVIDIA hardware. Include it from
# src/agent/CMakeLists.txt after agent_host_test is defined; without it that test skips.
if(TARGET agent_host_test)
  if(NOT CMAKE_C_COMPILER_LOADED)
    enable_language(C)
  endif()
  add_library(fake_nvml MODULE ${CMAKE_CURRENT_LIST_DIR}/fake_nvml.c)
  # Loaded into the test with dlopen: it must not bring a sanitizer runtime of its own.
  target_compile_options(fake_nvml PRIVATE -Wall -Wextra -Werror -fno-sanitize=all)
  target_link_options(fake_nvml PRIVATE -fno-sanitize=all)
  set_target_properties(fake_nvml PROPERTIES LIBRARY_OUTPUT_DIRECTORY ${CMAKE_BINARY_DIR}/lib)
  add_dependencies(agent_host_test fake_nvml)
  target_compile_definitions(agent_host_test PRIVATE
    DROVER_FAKE_NVML="$<TARGET_FILE:fake_nvml>")
endif()
