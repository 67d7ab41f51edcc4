# SPDX-License-Identifier: MIT
# Turns a file into a C array: cmake -DIN=FILE -DOUT=FILE.c -DSYM=NAME -P embed.cmake.
# Writes `const unsigned char NAME[]` (NUL-terminated) and `const size_t NAME_len`.
file(READ "${IN}" hex HEX)
string(LENGTH "${hex}" n)
math(EXPR len "${n} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," body "${hex}")
string(REGEX REPLACE "((0x..,){24})" "\\1\n" body "${body}")
get_filename_component(name "${IN}" NAME)
file(WRITE "${OUT}" "/* Generated from ${name} by cmake/embed.cmake: do not edit. */\n"
     "#include <stddef.h>\n"
     "extern const unsigned char ${SYM}[];\nextern const size_t ${SYM}_len;\n"
     "const unsigned char ${SYM}[] = {\n${body}0x00};\n"
     "const size_t ${SYM}_len = ${len};\n")
