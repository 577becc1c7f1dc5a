# Writes OUTPUT, a C++ source defining `const char NAME[]` with the text of INPUT
# (cmake -DINPUT=... -DOUTPUT=... -DNAME=... -P embed_text.cmake).
file(READ "${INPUT}" text)
set(delimiter "embed")  # C++ allows at most 16 characters
file(WRITE "${OUTPUT}"
  "// Generated from ${INPUT} by embed_text.cmake; do not edit.\n"
  "extern const char ${NAME}[];\n"
  "const char ${NAME}[] = R\"${delimiter}(${text})${delimiter}\";\n")
