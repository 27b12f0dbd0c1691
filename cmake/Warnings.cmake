# Drover's own targets build with a strict warning set; call drover_warnings(target) on each.
# -DDROVER_WERROR=ON makes every warning an error: scripts/test and CI turn it on, a user's or a
# distribution's build (any CMAKE_BUILD_TYPE, any compiler version) leaves it off, so a new
# compiler's new warning never breaks someone's install.
# GCC 12's -Wmaybe-uninitialized reports false positives inside std::variant moves at -O2
# (GCC bug 105562 and relatives), and its -Wrestrict false positives on std::string's operator+
# at -O3 (GCC bug 105329); clang builds keep the full set
# and add -Wthread-safety, which checks every GUARDED_BY member's accesses (common/mutex.h).
option(DROVER_WERROR "Treat compiler warnings as errors (on in scripts/test and CI)" OFF)

function(drover_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wshadow -Wnon-virtual-dtor)
  if(DROVER_WERROR)
    target_compile_options(${target} PRIVATE -Werror -Wno-error=deprecated-declarations)
  endif()
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized -Wno-restrict)
  elseif(CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    target_compile_options(${target} PRIVATE -Wthread-safety)
  endif()
endfunction()
