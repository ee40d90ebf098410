# cmake -DIN=file -DOUT=file.c -DNAME=symbol -P embed.cmake
# Writes a C file defining `const char NAME[]` (the file's bytes, NUL
# terminated) and `const unsigned long NAME_size` (without the NUL).
file(READ ${IN} hex HEX)
string(LENGTH "${hex}" hex_len)
math(EXPR size "${hex_len} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE ${OUT} "/* Generated from ${IN} by plugin/embed.cmake. */\n"
  "const char ${NAME}[] = {\n${bytes}0x00};\n"
  "const unsigned long ${NAME}_size = ${size}UL;\n")
