# Writes OUTPUT, a C++ source defining `const unsigned char NAME[]` and `NAME_size` with the
# bytes of INPUT (cmake -DINPUT=... -DOUTPUT=... -DNAME=... -P embed_binary.cmake).
file(READ "${INPUT}" hex HEX)
string(LENGTH "${hex}" digits)
math(EXPR size "${digits} / 2")
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE "${OUTPUT}"
  "// Generated from ${INPUT} by embed_binary.cmake; do not edit.\n"
  "#include <cstddef>\n"
  "extern const unsigned char ${NAME}[];\n"
  "extern const std::size_t ${NAME}_size;\n"
  "alignas(8) const unsigned char ${NAME}[] = {\n${bytes}};\n"
  "const std::size_t ${NAME}_size = ${size};\n")
