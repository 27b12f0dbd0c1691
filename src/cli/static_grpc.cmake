# The commands are short processes: loading gRPC, protobuf, abseil and OpenSSL as some fifty
# shared libraries (symbol lookups, relocations, page faults) cost several times the RPC itself
# (bench/cli.sh). Where the system has their static archives, `drover` links those instead;
# --as-needed then leaves the shared copies out, so one copy of each is in the process.
# The daemons keep the shared libraries. -DDROVER_STATIC_GRPC_COMMANDS=OFF turns this off.
option(DROVER_STATIC_GRPC_COMMANDS "link gRPC and protobuf statically into the drover binary" ON)
if(DROVER_STATIC_GRPC_COMMANDS)
  find_package(PkgConfig QUIET)
  set(drover_static_archives)
  if(PKG_CONFIG_FOUND)
    execute_process(COMMAND ${PKG_CONFIG_EXECUTABLE} --static --libs-only-l grpc++ protobuf
                    OUTPUT_VARIABLE drover_static_flags OUTPUT_STRIP_TRAILING_WHITESPACE
                    RESULT_VARIABLE drover_static_result ERROR_QUIET)
    if(drover_static_result EQUAL 0)
      separate_arguments(drover_static_flags UNIX_COMMAND "${drover_static_flags}")
      foreach(flag IN LISTS drover_static_flags)
        string(REGEX REPLACE "^-l" "" name "${flag}")
        # libc's own (dl, rt, pthread, atomic) stay shared.
        if(NOT name MATCHES "^(grpc\\+\\+|grpc|gpr|upb|address_sorting|re2|cares|z|ssl|crypto|protobuf|absl_.*)$")
          continue()
        endif()
        string(MAKE_C_IDENTIFIER "DROVER_ARCHIVE_${name}" variable)
        find_library(${variable} NAMES lib${name}.a)
        if(NOT ${variable})
          set(drover_static_archives)
          message(STATUS "drover: no lib${name}.a; the commands link gRPC dynamically")
          break()
        endif()
        list(APPEND drover_static_archives ${${variable}})
      endforeach()
      list(REMOVE_DUPLICATES drover_static_archives)
    endif()
  endif()
  if(drover_static_archives)
    # Not position-independent: a PIE of this size spends most of its start applying relative
    # relocations (protobuf's tables, vtables) and taking the page faults they cause.
    set_target_properties(drover PROPERTIES POSITION_INDEPENDENT_CODE OFF)
    target_link_options(drover PRIVATE "-no-pie")
    target_link_options(drover PRIVATE "LINKER:--as-needed")
    target_link_libraries(drover PRIVATE "-Wl,--start-group" ${drover_static_archives}
                                         "-Wl,--end-group")
  endif()
endif()
