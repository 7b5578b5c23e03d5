# One set of warnings for the whole tree, and the sanitizer configurations.
add_compile_options(-Wall -Wextra -Wno-unused-parameter -Wshadow
  -Wstrict-prototypes -Wmissing-prototypes -Werror=implicit-function-declaration)
if(FATLINK_SANITIZE)
  add_compile_options(-fsanitize=address,undefined -fno-omit-frame-pointer
    -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
  add_compile_definitions(LW_SANITIZE=1)
endif()
if(FATLINK_TSAN)
  add_compile_options(-fsanitize=thread -fno-omit-frame-pointer)
  add_link_options(-fsanitize=thread)
  add_compile_definitions(LW_SANITIZE=1)
endif()
if(FATLINK_FUZZ)
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined
    -fno-omit-frame-pointer -fno-sanitize-recover=all)
  add_link_options(-fsanitize=address,undefined)
  add_compile_definitions(LW_SANITIZE=1)
endif()
