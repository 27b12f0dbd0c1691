# Warnings are errors for Drover's own targets; call drover_warnings(target) on each.
# GCC 12's -Wmaybe-uninitialized reports false positives inside std::variant moves at -O2
# (GCC bug 105562 and relatives); clang builds keep the full set.
function(drover_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wshadow -Wnon-virtual-dtor
                                           -Wno-error=deprecated-declarations)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
    target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized)
  endif()
endfunction()
