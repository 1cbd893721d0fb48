# Warnings are errors in every target of the project (STYLE.md §5).
function(stepcast_warnings target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Werror)
endfunction()
