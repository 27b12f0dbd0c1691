# The step supervisor: `drover_agent_stepd` (the spool format both sides share, and the
# supervisor's logic), the `droverstepd` binary and its tests. No gRPC, so the sanitizer build
# tests it too. Include it from src/agent/CMakeLists.txt after drover_agent_host is defined.
set(STEPD_DIR ${CMAKE_CURRENT_LIST_DIR})
add_library(drover_agent_stepd STATIC ${STEPD_DIR}/spool.cc ${STEPD_DIR}/batch_shell.cc
                                      ${STEPD_DIR}/supervisor.cc ${STEPD_DIR}/detach.cc
                                      ${STEPD_DIR}/launcher.cc
                                      ${STEPD_DIR}/user_environment.cc)
target_link_libraries(drover_agent_stepd PUBLIC drover_agent_host drover_common)
drover_warnings(drover_agent_stepd)

add_executable(droverstepd ${STEPD_DIR}/main.cc)
target_link_libraries(droverstepd PRIVATE drover_agent_stepd)
# Every symbol bound at start (-z now): the launcher (droverstepd --serve) binds them once, and
# the supervisors it forks inherit them instead of each binding its own on first call.
target_link_options(droverstepd PRIVATE LINKER:-z,now)
drover_warnings(droverstepd)

if(DROVER_TESTS)
  add_executable(agent_stepd_test ${STEPD_DIR}/stepd_test.cc)
  target_link_libraries(agent_stepd_test PRIVATE drover_agent_stepd GTest::gtest_main)
  target_compile_definitions(agent_stepd_test PRIVATE DROVER_STEPD="$<TARGET_FILE:droverstepd>")
  add_dependencies(agent_stepd_test droverstepd)
  drover_warnings(agent_stepd_test)
  gtest_discover_tests(agent_stepd_test TEST_PREFIX "agent." DISCOVERY_TIMEOUT 60)
endif()
