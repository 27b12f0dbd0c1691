# scontrol's records and arguments (scontrol_format.h, scontrol_request.h): a library with no
# gRPC calls, and its tests. Built with the daemons (it needs the generated protobuf messages).
file(GLOB CLI_SCONTROL_SOURCES CONFIGURE_DEPENDS ${CMAKE_CURRENT_LIST_DIR}/scontrol_*_format.cc
     ${CMAKE_CURRENT_LIST_DIR}/scontrol_request.cc ${CMAKE_CURRENT_LIST_DIR}/scontrol_keywords.cc)
add_library(drover_cli_scontrol STATIC ${CLI_SCONTROL_SOURCES})
target_link_libraries(drover_cli_scontrol PUBLIC drover_cli_formats drover_cli_options)
drover_warnings(drover_cli_scontrol)

if(DROVER_TESTS)
  add_executable(cli_scontrol_test ${CMAKE_CURRENT_LIST_DIR}/scontrol_format_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/scontrol_request_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/scontrol_keywords_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/scontrol_pids_test.cc)
  target_link_libraries(cli_scontrol_test PRIVATE drover_cli_scontrol GTest::gtest_main)
  target_compile_definitions(cli_scontrol_test PRIVATE
    SCONTROL_GOLDEN_DIR="${PROJECT_SOURCE_DIR}/tests/cli/golden")
  drover_warnings(cli_scontrol_test)
  gtest_discover_tests(cli_scontrol_test TEST_PREFIX "cli." DISCOVERY_TIMEOUT 60)
endif()
