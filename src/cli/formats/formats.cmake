# squeue, sinfo and sacct output from the controller's records (formats.h). Needs the generated
# protobuf messages, so it is built with the daemons (DROVER_DAEMONS).
add_library(drover_cli_formats STATIC
  ${CMAKE_CURRENT_LIST_DIR}/formats.cc ${CMAKE_CURRENT_LIST_DIR}/squeue_format.cc
  ${CMAKE_CURRENT_LIST_DIR}/sinfo_format.cc ${CMAKE_CURRENT_LIST_DIR}/sacct_format.cc
  ${CMAKE_CURRENT_LIST_DIR}/sprio_format.cc ${CMAKE_CURRENT_LIST_DIR}/sshare_format.cc)
target_link_libraries(drover_cli_formats PUBLIC drover_proto drover_common)
drover_warnings(drover_cli_formats)

if(DROVER_TESTS)
  add_executable(cli_formats_test ${CMAKE_CURRENT_LIST_DIR}/formats_test.cc)
  target_link_libraries(cli_formats_test PRIVATE drover_cli_formats GTest::gtest_main)
  drover_warnings(cli_formats_test)
  gtest_discover_tests(cli_formats_test TEST_PREFIX "cli." DISCOVERY_TIMEOUT 60)
  add_executable(cli_priority_formats_test ${CMAKE_CURRENT_LIST_DIR}/priority_formats_test.cc)
  target_link_libraries(cli_priority_formats_test PRIVATE drover_cli_formats GTest::gtest_main)
  drover_warnings(cli_priority_formats_test)
  gtest_discover_tests(cli_priority_formats_test TEST_PREFIX "cli." DISCOVERY_TIMEOUT 60)
endif()
