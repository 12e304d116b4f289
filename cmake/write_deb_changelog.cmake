# Writes OUTPUT: INPUT with @VERSION@ replaced, compressed as Debian wants a package's
# /usr/share/doc/<package>/changelog.Debian.gz: gzip at its highest level, with no name
# or time in the header (so equal sources give equal packages).
find_program(GZIP gzip REQUIRED)
file(READ "${INPUT}" text)
string(REPLACE "@VERSION@" "${VERSION}" text "${text}")
get_filename_component(dir "${OUTPUT}" DIRECTORY)
set(plain "${dir}/changelog.Debian")
file(WRITE "${plain}" "${text}")
execute_process(COMMAND "${GZIP}" -9 -n -c "${plain}" OUTPUT_FILE "${OUTPUT}"
                COMMAND_ERROR_IS_FATAL ANY)
