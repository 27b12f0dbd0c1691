# Option parsing: sbatch's options (sbatch/sbatch_options.h) and srun's (srun/srun_options.h) over
# GNU getopt's rules (common/getopt.h), as a library with no gRPC and no I/O of its own, and its
# tests; built in every configuration, the sanitizer build and DROVER_DAEMONS=OFF included.
file(GLOB CLI_OPTIONS_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/sbatch/sbatch_*.cc
     ${CMAKE_CURRENT_LIST_DIR}/srun/srun_options.cc ${CMAKE_CURRENT_LIST_DIR}/clusters.cc)
list(FILTER CLI_OPTIONS_SOURCES EXCLUDE REGEX "_test\\.cc$")
add_library(drover_cli_options STATIC ${CLI_OPTIONS_SOURCES})
target_link_libraries(drover_cli_options PUBLIC drover_common)
drover_warnings(drover_cli_options)

if(DROVER_TESTS)
  file(GLOB CLI_OPTIONS_TESTS CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/sbatch/sbatch_*_test.cc
       ${CMAKE_CURRENT_LIST_DIR}/srun/srun_options_test.cc ${CMAKE_CURRENT_LIST_DIR}/clusters_test.cc)
  add_executable(cli_sbatch_test ${CLI_OPTIONS_TESTS})
  target_link_libraries(cli_sbatch_test PRIVATE drover_cli_options GTest::gtest_main)
  drover_warnings(cli_sbatch_test)
  gtest_discover_tests(cli_sbatch_test TEST_PREFIX "cli." DISCOVERY_TIMEOUT 60)
endif()
