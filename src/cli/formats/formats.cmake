# squeue, sinfo and sacct output from the controller's records (formats.h), and sprio's and
# sshare's (priority_formats.h). Needs the generated protobuf messages, so it is built with the
# daemons (DROVER_DAEMONS).
file(GLOB CLI_FORMATS_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/*.cc)
list(FILTER CLI_FORMATS_SOURCES EXCLUDE REGEX "_test\\.cc$")
add_library(drover_cli_formats STATIC ${CLI_FORMATS_SOURCES})
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
  add_executable(cli_sreport_format_test ${CMAKE_CURRENT_LIST_DIR}/sreport_format_test.cc)
  target_link_libraries(cli_sreport_format_test PRIVATE drover_cli_formats GTest::gtest_main)
  drover_warnings(cli_sreport_format_test)
  gtest_discover_tests(cli_sreport_format_test TEST_PREFIX "cli." DISCOVERY_TIMEOUT 60)
endif()
