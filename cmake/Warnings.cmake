# Warnings are errors for Drover's own targets; call drover_warnings(target) on each.
function(drover_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Werror -Wshadow -Wnon-virtual-dtor
                                           -Wno-error=deprecated-declarations)
endfunction()
