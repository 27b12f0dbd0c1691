# Option parsing: GNU getopt's rules for every command (getopt.h) and sbatch's options
# (sbatch_options.h) and srun's (srun_options.h), as a library with no gRPC and no I/O of its own, and
# its tests; built in every configuration, the sanitizer build and DROVER_DAEMONS=OFF included.
add_library(drover_cli_options STATIC ${CMAKE_CURRENT_LIST_DIR}/sbatch_options.cc
  ${CMAKE_CURRENT_LIST_DIR}/srun_options.cc)
target_link_libraries(drover_cli_options PUBLIC drover_common)
drover_warnings(drover_cli_options)

if(DROVER_TESTS)
  add_executable(cli_sbatch_test ${CMAKE_CURRENT_LIST_DIR}/sbatch_options_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/srun_options_test.cc)
  target_link_libraries(cli_sbatch_test PRIVATE drover_cli_options GTest::gtest_main)
  drover_warnings(cli_sbatch_test)
  gtest_discover_tests(cli_sbatch_test TEST_PREFIX "cli." DISCOVERY_TIMEOUT 60)
endif()
