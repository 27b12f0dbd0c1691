# -DDROVER_SANITIZE=address,undefined builds everything with those sanitizers; any report aborts.
if(DROVER_SANITIZE)
  add_compile_options(-fsanitize=${DROVER_SANITIZE} -fno-omit-frame-pointer
                      -fno-sanitize-recover=all)
  add_link_options(-fsanitize=${DROVER_SANITIZE})
endif()
