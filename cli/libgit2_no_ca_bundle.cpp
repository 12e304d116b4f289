// shadowbox never fetches nor pushes: libgit2's TLS is never used. Yet Debian's
// libgit2 (built with mbedTLS) parses the whole system CA bundle inside
// git_libgit2_init() — about 8 ms of every process, a third of a hook event's start.
// This definition takes the place of mbedTLS's for the executable's process (the
// executable comes first in the dynamic linker's lookup order), so that parse loads
// nothing. Only the CLI carries it: a program that embeds fsnap and uses libgit2's
// network keeps mbedTLS's own.
//
// mbedtls_x509_crt_parse_file(chain, path) returns 0 when every certificate of path
// was parsed; here there are none.
extern "C" int mbedtls_x509_crt_parse_file(void* /*chain*/, const char* /*path*/) {
  return 0;
}
